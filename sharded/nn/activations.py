"""Activation modules beyond ReLU/Sigmoid/Tanh/GELU/SiLU/Softmax (torch's ``nn``
activation classes, with torch's reprs), plus ``Unflatten``, ``CosineSimilarity`` and
``PairwiseDistance``. Each forwards to its ``st.nn.functional`` form.
"""

from __future__ import annotations

from ..autograd import no_grad
from ..errors import ArgumentError, ShapeError
from ..layout import Layout
from ..ops.creation.prims import full
from . import functional as F
from .modules import Module, Parameter

__all__ = [
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
    "Unflatten",
    "CosineSimilarity",
    "PairwiseDistance",
]


def _inplace(m):
    return ", inplace=True" if m.inplace else ""


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


class SELU(Module):
    """Scaled ELU with torch's fixed constants.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.SELU()(st.tensor([0.])).tolist()
    [0.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


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


class Mish(Module):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Mish()(st.tensor([0.])).tolist()
    [0.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardswish(Module):
    """``x * relu6(x + 3) / 6``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Hardswish()(st.tensor([4.])).tolist()
    [4.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Hardsigmoid()(st.tensor([0.])).tolist()
    [0.5]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Softsign(Module):
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softsign()(st.tensor([1.])).tolist()
    [0.5]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Tanhshrink()(st.tensor([0.])).tolist()
    [0.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return F.tanhshrink(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, stable.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.LogSigmoid()(st.tensor([-100.])).tolist()
    [-100.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return F.logsigmoid(input)


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


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size`` (one entry may be -1).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Unflatten(1, (2, 3))(st.ones(4, 6)).shape
    sharded.Size([4, 2, 3])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in unflattened_size
        ):
            raise TypeError(f"unflattened_size must be tuple of ints, got {unflattened_size!r}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.CosineSimilarity(dim=0)(st.tensor([1., 0.]), st.tensor([2., 0.])).item()
    1.0
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dim.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.PairwiseDistance(eps=0.0)(st.tensor([[0., 0.]]), st.tensor([[3., 4.]])).tolist()
    [5.0]
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
