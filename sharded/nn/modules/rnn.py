"""Recurrent layers, as torch's ``nn/modules/rnn.py``: ``RNN`` (tanh or relu), ``LSTM``
(with ``proj_size``), ``GRU`` and the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``, with
torch's arguments, parameter names (``weight_ih_l0``, ``bias_hh_l1_reverse``...) and results,
so that a torch ``state_dict`` loads.

The layers are composed of sharded ops (one matmul of all time steps' inputs per layer and
direction, then a matmul and a few elementwise ops per step), so autograd runs through them
and a batch split across workers stays split: every step is local to each batch shard. A
``PackedSequence`` runs padded, with each sequence's state frozen once it has ended (and, in
the reverse direction, left at ``h_0`` until it starts), which is what torch computes.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ArgumentError, ShapeError
from ...ops.creation.prims import empty, tensor, zeros
from ...ops.elementwise.prims.selection import where
from ...ops.elementwise.prims.unary import sigmoid, tanh
from ...ops.index.prims.index_ops import index_select
from ...ops.shape.prims.joining import cat, stack
from .. import functional as F
from .. import init
from ..utils.rnn import PackedSequence, _order, _packed_rows, _padded
from .module import Module, Parameter
from .utils import _rep

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _affine(x, w, b):
    return x @ w.T if b is None else x @ w.T + b


def _step(mode, xw, h, c, w_hh, b_hh, w_hr=None):
    """One time step: ``xw`` is the input's part of the gates (``x @ W_ih.T + b_ih``);
    returns the new ``(h, c)`` (``c`` is None but for LSTM)."""
    hw = _affine(h, w_hh, b_hh)
    if mode == "RNN_TANH":
        return tanh(xw + hw), None
    if mode == "RNN_RELU":
        return F.relu(xw + hw), None
    if mode == "LSTM":
        i, f, g, o = (xw + hw).chunk(4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        return (h if w_hr is None else h @ w_hr.T), c
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = hw.chunk(3, -1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = tanh(xn + r * hn)
    return n + z * (h - n), None  # (1 - z) * n + z * h


def _check_args(mode, hidden_size, num_layers, dropout, proj_size):
    if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ArgumentError(
            "dropout should be a number in range [0, 1] representing the probability of an "
            f"element being zeroed, got {dropout!r}"
        )
    if not isinstance(hidden_size, int) or hidden_size <= 0:
        raise ArgumentError(
            f"hidden_size must be an integer greater than zero, got {hidden_size!r}"
        )
    if not isinstance(num_layers, int) or num_layers <= 0:
        raise ArgumentError(f"num_layers must be an integer greater than zero, got {num_layers!r}")
    if proj_size < 0:
        raise ArgumentError(
            "proj_size should be a positive integer or zero to disable projections, "
            f"got {proj_size}"
        )
    if proj_size >= hidden_size:
        raise ArgumentError(
            f"proj_size has to be smaller than hidden_size (got {proj_size} >= {hidden_size})"
        )
    if proj_size and mode != "LSTM":
        raise ArgumentError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNNBase(Module):
    """The stack of recurrent layers behind ``RNN``, ``LSTM`` and ``GRU`` (``mode`` is
    ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``); parameters are replicated on
    every worker and drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> rnn = st.nn.RNNBase("GRU", 3, 4, num_layers=2)
    >>> sorted(rnn.state_dict())[:2]
    ['bias_hh_l0', 'bias_hh_l1']
    """

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if mode not in _GATES:
            raise ArgumentError(f"Unrecognized RNN mode: {mode!r} (one of {sorted(_GATES)})")
        _check_args(mode, hidden_size, num_layers, dropout, proj_size)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        dirs = 2 if bidirectional else 1
        out = proj_size or hidden_size
        gates = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                fan_in = input_size if layer == 0 else out * dirs
                shapes = {"weight_ih": (gates, fan_in), "weight_hh": (gates, out)}
                if bias:
                    shapes |= {"bias_ih": (gates,), "bias_hh": (gates,)}
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    setattr(self, name + sfx, Parameter(_rep(empty, shape, dtype, device)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        k = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    @property
    def all_weights(self):
        """The parameters per layer and direction, in torch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * (1 + self.bidirectional))
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i : i + per]] for i in range(0, len(names), per)]

    def flatten_parameters(self):
        """Nothing to do: the weights are separate tensors already (torch packs them for
        cuDNN)."""

    def _weights(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return get("weight_ih"), get("bias_ih"), get("weight_hh"), get("bias_hh"), get("weight_hr")

    def _direction(self, x, layer, d, h, c, masks):
        """Run one direction of one layer over ``x`` (``(T, B, F)``) from state ``(h, c)``;
        ``masks[t]`` (``(B, 1)`` bool, or None when every sequence runs at ``t``) says which
        sequences run at step ``t``. Returns the outputs ``(T, B, H_out)`` and the last state."""
        w_ih, b_ih, w_hh, b_hh, w_hr = self._weights(layer, d)
        xw = _affine(x, w_ih, b_ih)  # all steps' input projections in one matmul
        steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            h2, c2 = _step(self.mode, xw[t], h, c, w_hh, b_hh, w_hr)
            if masks[t] is not None:  # ended (or, reversed, not yet started): state kept
                h2 = where(masks[t], h2, h)
                c2 = None if c is None else where(masks[t], c2, c)
            outs[t], h, c = h2, h2, c2
        return stack(outs, 0), h, c

    def _check_input(self, x, batched):
        want = 3 if batched else 2
        if x.dim() != want:
            raise ShapeError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {x.dim()}D instead"
            )
        if x.shape[-1] != self.input_size:
            raise ShapeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {x.shape[-1]}"
            )

    def _check_hidden(self, h, shape, what="hidden"):
        if tuple(h.shape) != shape:
            raise ShapeError(f"Expected {what} size {shape}, got {list(h.shape)}")

    def forward(self, input, hx=None):
        """``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``) for ``input`` of shape
        ``(T, B, input_size)`` (``(B, T, input_size)`` when ``batch_first``), ``(T,
        input_size)`` unbatched, or a ``PackedSequence`` (then ``output`` is one too)."""
        packed = isinstance(input, PackedSequence)
        masks = None
        if packed:
            bs, sorted_idx, unsorted_idx = _order(input)
            self._check_input(input.data, False)
            T, B = len(bs), int(bs[0])
            x = _padded(input.data, bs, np.arange(B), T)
            # a sequence runs at step t while it is among the first bs[t] (longest first)
            masks = [None if b == B else tensor(np.arange(B)[:, None] < b) for b in bs]
            batched = True
        else:
            batched = input.dim() == 3
            self._check_input(input, batched)
            x = input if batched else input.unsqueeze(1)
            x = x.transpose(0, 1) if batched and self.batch_first else x
            T, B = x.shape[0], x.shape[1]
            masks = [None] * T
        resort = sorted_idx if packed and input.sorted_indices is not None else None
        h0, c0 = self._initial(hx, B, x.dtype, batched, resort)
        dirs = 2 if self.bidirectional else 1
        hs, cs = [], []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                x = F.dropout(x, self.dropout, True)
            outs = []
            for d in range(dirs):
                i = layer * dirs + d
                o, h, c = self._direction(x, layer, d, h0[i], None if c0 is None else c0[i], masks)
                outs.append(o)
                hs.append(h)
                cs.append(c)
            x = outs[0] if dirs == 1 else cat(outs, -1)
        h_n = stack(hs, 0)
        c_n = stack(cs, 0) if self.mode == "LSTM" else None
        if packed:
            rows = _packed_rows(bs, np.arange(B), B, 1)
            out = PackedSequence(
                index_select(x.reshape(T * B, x.shape[-1]), 0, tensor(rows)), *input[1:]
            )
            if input.unsorted_indices is not None:
                undo = tensor(unsorted_idx)
                h_n = index_select(h_n, 1, undo)
                c_n = None if c_n is None else index_select(c_n, 1, undo)
        else:
            out = x.transpose(0, 1) if batched and self.batch_first else x
            if not batched:
                out, h_n = out.squeeze(1), h_n.squeeze(1)
                c_n = None if c_n is None else c_n.squeeze(1)
        return out, (h_n if c_n is None else (h_n, c_n))

    def _initial(self, hx, B, dtype, batched, sorted_idx):
        """``(h_0, c_0)`` as ``(layers * dirs, B, H)`` tensors: zeros when ``hx`` is None, else
        the caller's, checked and (packed input) put in the sorted order."""
        n = self.num_layers * (2 if self.bidirectional else 1)
        shapes = [(n, B, self.proj_size or self.hidden_size)]
        shapes += [(n, B, self.hidden_size)] if self.mode == "LSTM" else []
        if hx is None:
            states = [zeros(*s, dtype=dtype) for s in shapes]
        else:
            states = list(hx) if self.mode == "LSTM" else [hx]
            if self.mode == "LSTM" and (not isinstance(hx, tuple) or len(hx) != 2):
                raise ArgumentError("LSTM: hx must be a tuple (h_0, c_0)")
            if not batched:
                for s in states:
                    if s.dim() != 2:
                        raise ShapeError(
                            f"For unbatched 2-D input, hx should also be 2-D but got {s.dim()}-D "
                            "tensor"
                        )
                states = [s.unsqueeze(1) for s in states]
            for s, shape, what in zip(states, shapes, ("hidden", "cell")):
                self._check_hidden(s, shape, what)
            if sorted_idx is not None:
                states = [index_select(s, 1, tensor(sorted_idx)) for s in states]
        return states[0], (states[1] if self.mode == "LSTM" else None)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s + (", bidirectional=True" if self.bidirectional else "")


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with ``act`` the
    ``nonlinearity`` (``'tanh'`` or ``'relu'``); torch's arguments and results.

    Examples
    --------
    >>> import sharded as st
    >>> out, h_n = st.nn.RNN(3, 5, num_layers=2, bidirectional=True)(st.ones(4, 2, 3))
    >>> out.shape, h_n.shape
    (sharded.Size([4, 2, 10]), sharded.Size([4, 2, 5]))
    """

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        nonlinearity="tanh",
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` (in that order in the weights, as
    torch's), ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (times ``W_hr^T`` when
    ``proj_size > 0``); returns ``(output, (h_n, c_n))``.

    Examples
    --------
    >>> import sharded as st
    >>> lstm = st.nn.LSTM(3, 5, batch_first=True, proj_size=2)
    >>> out, (h_n, c_n) = lstm(st.ones(2, 4, 3))
    >>> out.shape, h_n.shape, c_n.shape
    (sharded.Size([2, 4, 2]), sharded.Size([1, 2, 2]), sharded.Size([1, 2, 5]))
    """

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )


class GRU(RNNBase):
    """Gated recurrent unit: gates ``r, z, n`` (torch's order), ``n = tanh(x W_in^T + b_in +
    r * (h W_hn^T + b_hn))``, ``h_t = (1 - z) * n + z * h_{t-1}``.

    Examples
    --------
    >>> import sharded as st
    >>> out, h_n = st.nn.GRU(3, 5, num_layers=2)(st.ones(4, 3))  # unbatched
    >>> out.shape, h_n.shape
    (sharded.Size([4, 5]), sharded.Size([2, 5]))
    """

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )


class RNNCellBase(Module):
    """One step of a recurrent layer (``weight_ih``, ``weight_hh``, ``bias_ih``,
    ``bias_hh``, torch's names); ``num_chunks`` gates.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.RNNCellBase(3, 4, True, 2).weight_ih.shape
    sharded.Size([8, 3])
    """

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ArgumentError(
                f"hidden_size must be an integer greater than zero, got {hidden_size!r}"
            )
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(_rep(empty, (g, input_size), dtype, device))
        self.weight_hh = Parameter(_rep(empty, (g, hidden_size), dtype, device))
        self.bias_ih = Parameter(_rep(empty, (g,), dtype, device)) if bias else None
        self.bias_hh = Parameter(_rep(empty, (g,), dtype, device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        k = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    def forward(self, input, hx=None):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ShapeError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise ShapeError(
                f"{name}: input has inconsistent input_size: got {input.shape[-1]} expected "
                f"{self.input_size}"
            )
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        shape = (x.shape[0], self.hidden_size)
        lstm = self._mode == "LSTM"
        if hx is None:
            states = [zeros(*shape, dtype=x.dtype)] * (2 if lstm else 1)
        else:
            states = list(hx) if lstm else [hx]
            states = [s if batched else s.unsqueeze(0) for s in states]
            for s in states:
                if tuple(s.shape) != shape:
                    raise ShapeError(f"{name}: Expected hidden size {shape}, got {list(s.shape)}")
        xw = _affine(x, self.weight_ih, self.bias_ih)
        c = states[1] if lstm else None
        h, c = _step(self._mode, xw, states[0], c, self.weight_hh, self.bias_hh)
        if not batched:
            h, c = h.squeeze(0), (None if c is None else c.squeeze(0))
        return (h, c) if lstm else h

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        s += "" if self.bias else ", bias=False"
        return s + (", nonlinearity=" + repr(self.nonlinearity) if self._mode == "RNN_RELU" else "")


class RNNCell(RNNCellBase):
    """One step of :class:`RNN`: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.RNNCell(3, 4, nonlinearity="relu")(st.ones(2, 3)).shape
    sharded.Size([2, 4])
    """

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


class LSTMCell(RNNCellBase):
    """One step of :class:`LSTM`; ``hx`` is ``(h, c)`` and so is the result.

    Examples
    --------
    >>> import sharded as st
    >>> h, c = st.nn.LSTMCell(3, 4)(st.ones(3))
    >>> h.shape, c.shape
    (sharded.Size([4]), sharded.Size([4]))
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)


class GRUCell(RNNCellBase):
    """One step of :class:`GRU`.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.GRUCell(3, 4)(st.ones(2, 3), st.zeros(2, 4)).shape
    sharded.Size([2, 4])
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)
