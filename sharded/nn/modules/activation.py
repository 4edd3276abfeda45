"""Activation modules (torch's ``nn`` activation classes, with torch's reprs). Each
forwards to its ``st.nn.functional`` form."""

from __future__ import annotations

from ...autograd import no_grad
from ...errors import ArgumentError, ShapeError
from ...layout import Layout
from ...ops.creation.prims import full
from .. import functional as F
from .attention import MultiheadAttention  # noqa: F401  (torch's home of the class)
from .module import Module, Parameter

__all__ = [
    "ReLU",
    "Sigmoid",
    "Tanh",
    "GELU",
    "SiLU",
    "Softmax",
    "LogSoftmax",
    "ELU",
    "LeakyReLU",
    "Softplus",
    "SELU",
    "CELU",
    "Threshold",
    "Hardshrink",
    "Softshrink",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "Softsign",
    "Tanhshrink",
    "LogSigmoid",
    "GLU",
    "Softmin",
    "RReLU",
    "Hardtanh",
    "ReLU6",
    "PReLU",
    "Softmax2d",
]


def _inplace(m):
    return ", inplace=True" if m.inplace else ""


class _InplaceActivation(Module):
    """A parameter-free activation that may write in place: ``forward`` is
    ``F.<_fn>(input, inplace)``; ``extra_repr`` shows ``inplace=True`` where torch's does."""

    _fn = ""  # the functional form's name in st.nn.functional
    _shows_inplace = False

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace and self._shows_inplace else ""


class _Pointwise(Module):
    """A parameter-free activation ``F.<_fn>(input)`` (its constructor takes and ignores
    arguments, as torch's do)."""

    _fn = ""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return getattr(F, self._fn)(input)


class ReLU(_InplaceActivation):
    """``max(x, 0)``."""

    _fn = "relu"
    _shows_inplace = True


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x):
        return F.tanh(x)


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or tanh-approximated.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.GELU("tanh")(st.tensor(1.0)).item(), 6)
    0.841192
    """

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ArgumentError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.SiLU()(st.tensor([0.0])).tolist()
    [0.0]
    """

    _fn = "silu"


class Softmax(Module):
    """Softmax along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softmax(dim=1)(st.zeros(1, 4)).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log of the softmax along ``dim`` (stable).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.LogSoftmax(dim=0)(st.tensor([1000., 1000.])).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class ELU(Module):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.ELU()(st.tensor([0., 2.])).tolist()
    [0.0, 2.0]
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace(self)


class LeakyReLU(Module):
    """``x`` where positive, else ``negative_slope * x``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.LeakyReLU(0.5)(st.tensor([-2., 2.])).tolist()
    [-1.0, 2.0]
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace(self)


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (linear above ``threshold``).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softplus()(st.tensor([30.])).tolist()
    [30.0]
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class SELU(_InplaceActivation):
    """Scaled ELU with torch's fixed constants.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.SELU()(st.tensor([0.])).tolist()
    [0.0]
    """

    _fn = "selu"
    _shows_inplace = True


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.CELU(2.0)(st.tensor([3.])).tolist()
    [3.0]
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace(self)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Threshold(1.0, 0.0)(st.tensor([1., 2.])).tolist()
    [0.0, 2.0]
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + _inplace(self)


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Hardshrink()(st.tensor([0.25, 1.])).tolist()
    [0.0, 1.0]
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Module):
    """``x`` shrunk towards 0 by ``lambd`` (0 inside ``[-lambd, lambd]``).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softshrink()(st.tensor([0.25, 1.])).tolist()
    [0.0, 0.5]
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Mish()(st.tensor([0.])).tolist()
    [0.0]
    """

    _fn = "mish"
    _shows_inplace = True


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Hardswish()(st.tensor([4.])).tolist()
    [4.0]
    """

    _fn = "hardswish"


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Hardsigmoid()(st.tensor([0.])).tolist()
    [0.5]
    """

    _fn = "hardsigmoid"


class Softsign(_Pointwise):
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softsign()(st.tensor([1.])).tolist()
    [0.5]
    """

    _fn = "softsign"


class Tanhshrink(_Pointwise):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Tanhshrink()(st.tensor([0.])).tolist()
    [0.0]
    """

    _fn = "tanhshrink"


class LogSigmoid(_Pointwise):
    """``log(sigmoid(x))``, stable.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.LogSigmoid()(st.tensor([-100.])).tolist()
    [-100.0]
    """

    _fn = "logsigmoid"


class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves of ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.GLU()(st.tensor([2., 0.])).tolist()
    [1.0]
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softmin(dim=0)(st.tensor([1., 1.])).tolist()
    [0.5, 0.5]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn in ``[lower, upper]`` while training, their mean in eval.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.RReLU(0.5, 0.5)(st.tensor([-2., 2.])).tolist()
    [-1.0, 2.0]
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace(self)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` (``min_value``/``max_value`` are torch's deprecated
    spellings).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Hardtanh(-2.0, 2.0)(st.tensor([-3., 3.])).tolist()
    [-2.0, 2.0]
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise ArgumentError(
                f"Hardtanh: max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace(self)


class ReLU6(Hardtanh):
    """``clamp(x, 0, 6)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.ReLU6()(st.tensor([-1., 7.])).tolist()
    [0.0, 6.0]
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class PReLU(Module):
    """Leaky ReLU with a learned slope: one shared (``num_parameters=1``) or one per channel
    (dim 1), initialised to ``init`` and replicated on every worker.

    Examples
    --------
    >>> import sharded as st
    >>> m = st.nn.PReLU()
    >>> m(st.tensor([-4., 4.])).tolist(), m
    ([-1.0, 4.0], PReLU(num_parameters=1))
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        with no_grad():
            w = full(
                (num_parameters,),
                init,
                dtype=dtype,
                layout=Layout.replicated(),
                device=device or "cpu",
            )
        self.weight = Parameter(w)

    def reset_parameters(self):
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softmax2d()(st.zeros(1, 2, 1, 1)).reshape(-1).tolist()
    [0.5, 0.5]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
