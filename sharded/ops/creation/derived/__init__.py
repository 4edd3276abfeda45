"""The creation family's derived ops: ``scalars`` (``scalar_tensor``, the ``Tensor.new_*``
methods), ``windows`` (torch's ``hann_window``... ``kaiser_window``) and ``signal_windows``
(the functions of ``st.signal.windows``)."""
