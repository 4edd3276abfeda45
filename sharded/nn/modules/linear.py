"""``Identity``, ``Linear`` and ``Bilinear``."""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...layout import Layout
from ...ops.random.prims.counter import rand
from .. import functional as F
from .module import Module, Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Identity(54, unused="x")(st.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ W.T + b`` with ``W`` (out, in) and ``b`` (out,) initialised uniformly in
    ``±1/sqrt(in_features)`` (torch's default), replicated on every worker unless ``layout=``
    says otherwise.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Linear(3, 2)(st.ones(5, 3)).shape
    sharded.Size([5, 2])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, layout=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features) if in_features else 0.0
        lay = layout if layout is not None else Layout.replicated()
        with no_grad():
            dev = device or "cpu"
            w = rand(out_features, in_features, dtype=dtype, layout=lay, device=dev)
            w = w * (2 * bound) - bound
            self.weight = Parameter(w)
            if bias:
                b = (
                    rand(out_features, dtype=dtype, layout=Layout.replicated(), device=dev)
                    * (2 * bound)
                    - bound
                )
                self.bias = Parameter(b)
            else:
                self.bias = None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``A`` (out, in1, in2) and ``b`` (out,) initialised
    uniformly in ``±1/sqrt(in1_features)`` (torch's default), replicated.

    Examples
    --------
    >>> import sharded as st
    >>> m = st.nn.Bilinear(3, 4, 2)
    >>> m
    Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)
    >>> m(st.ones(5, 3), st.ones(5, 4)).shape
    sharded.Size([5, 2])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in1_features) if in1_features else 0.0
        rep, dev = Layout.replicated(), device or "cpu"
        with no_grad():
            shape = (out_features, in1_features, in2_features)
            w = rand(*shape, dtype=dtype, layout=rep, device=dev) * (2 * bound) - bound
            self.weight = Parameter(w)
            if bias:
                b = rand(out_features, dtype=dtype, layout=rep, device=dev) * (2 * bound) - bound
                self.bias = Parameter(b)
            else:
                self.bias = None

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
