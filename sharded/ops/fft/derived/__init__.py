"""The FFT family's derived ops: ``transforms`` (the ``st.fft`` namespace's functions) and
``stft`` (torch's top-level short-time transforms ``st.stft``/``st.istft``)."""
