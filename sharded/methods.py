"""Operators and torch-style methods of ShardedTensor, bound to the functions of
``functional.py`` (one implementation each; a method is the function with ``self`` first).

In-place methods (``add_``, ``x += y``...) write into the existing shards where they are, so
the object keeps its identity; an op whose result dtype cannot be stored in the tensor (an
int tensor ``/=``) raises before anything changes.
"""

from __future__ import annotations

import numpy as np

from . import functional as F
from .core.dispatch import apply
from .errors import ArgumentError
from .tensor import ShardedTensor

_OPERAND = (ShardedTensor, np.ndarray, bool, int, float, np.generic)


def _binary(fn, reflected=False):
    def op(self, other):
        if not isinstance(other, _OPERAND):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = fn.__name__
    return op


_OPERATORS = {
    "add": F.add, "sub": F.sub, "mul": F.mul, "truediv": F.div, "floordiv": F.floor_divide,
    "mod": F.remainder, "pow": F.pow, "and": F.bitwise_and, "or": F.bitwise_or,
    "xor": F.bitwise_xor,
}
for _n, _f in _OPERATORS.items():
    setattr(ShardedTensor, f"__{_n}__", _binary(_f))
    setattr(ShardedTensor, f"__r{_n}__", _binary(_f, reflected=True))
for _n, _f in {"lt": F.lt, "le": F.le, "gt": F.gt, "ge": F.ge, "eq": F.eq, "ne": F.ne}.items():
    setattr(ShardedTensor, f"__{_n}__", _binary(_f))
ShardedTensor.__neg__ = F.neg
ShardedTensor.__abs__ = F.abs
ShardedTensor.__invert__ = F.bitwise_not
ShardedTensor.__pos__ = lambda self: self

# x.name(...) is F.name(x, ...)
_METHODS = (
    "add sub mul div floor_divide remainder pow maximum minimum clamp clip neg negative abs exp "
    "log log1p sqrt sin cos tanh sigmoid relu isnan isfinite logical_and logical_or "
    "logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not eq ne lt le gt ge "
    "sum prod mean var std amax amin max min argmax argmin all any logsumexp softmax "
    "log_softmax").split()
for _n in _METHODS:
    setattr(ShardedTensor, _n, getattr(F, _n))
ShardedTensor.true_divide = F.div
ShardedTensor.multiply = F.mul
ShardedTensor.subtract = F.sub


def _where(self, condition, other):
    """``x.where(cond, y)`` is ``st.where(cond, x, y)``."""
    return F.where(condition, self, other)


ShardedTensor.where = _where


# ------------------------------------------------------------------------------ in-place
def _inplace_binary(name):
    def op(self, other, **kw):
        if kw.get("alpha", 1) != 1:
            other = F.mul(other, kw.pop("alpha"))
        apply(name, self, F._operand(other), target=self)
        return self
    op.__name__ = name + "_"
    op.__doc__ = f"In-place ``{name}``: writes into this tensor's shards and returns it."
    return op


def _inplace_unary(name):
    def op(self):
        apply(name, self, target=self)
        return self
    op.__name__ = name + "_"
    op.__doc__ = f"In-place ``{name}``: writes into this tensor's shards and returns it."
    return op


for _n in ("add", "sub", "mul", "div", "pow", "remainder", "floor_divide", "maximum",
           "minimum"):
    setattr(ShardedTensor, _n + "_", _inplace_binary(_n))
for _n in ("neg", "abs", "exp", "log", "log1p", "sqrt", "sin", "cos", "tanh", "sigmoid",
           "relu"):
    setattr(ShardedTensor, _n + "_", _inplace_unary(_n))
ShardedTensor.__iadd__ = ShardedTensor.add_
ShardedTensor.__isub__ = ShardedTensor.sub_
ShardedTensor.__imul__ = ShardedTensor.mul_
ShardedTensor.__itruediv__ = ShardedTensor.div_
ShardedTensor.__ifloordiv__ = ShardedTensor.floor_divide_
ShardedTensor.__imod__ = ShardedTensor.remainder_
ShardedTensor.__ipow__ = ShardedTensor.pow_


def clamp_(self, min=None, max=None):
    """In-place :func:`~sharded.functional.clamp`."""
    if min is None and max is None:
        raise ArgumentError("clamp_(): at least one of 'min' or 'max' must not be None")
    ops = [F._operand(o) if o is not None else None for o in (min, max)]
    apply("clamp", self, *ops, target=self)
    return self


def fill_(self, value):
    """Set every element to ``value`` (a number or a one-element tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3).fill_(2).tolist()
    [2.0, 2.0, 2.0]
    """
    if isinstance(value, ShardedTensor) and value.ndim:
        raise ArgumentError(f"fill_ only supports 0-dimension value tensors, got one with "
                            f"{value.ndim} dimensions")
    return apply("fill_", self, F._operand(value), target=self)


def zero_(self):
    """Set every element to zero, in place."""
    return fill_(self, 0)


def copy_(self, src):
    """Copy ``src`` (broadcastable; converted to this dtype) into this tensor, in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 2).copy_(st.tensor([1., 2.])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    return apply("fill_", self, F._operand(src), target=self)


def requires_grad_(self, requires_grad=True):
    """Record operations on this tensor for autograd (floating dtypes only)."""
    if requires_grad and not self.dtype.is_floating_point:
        raise ArgumentError(f"only floating point tensors can require gradients, got "
                            f"{self.dtype.name}")
    self.requires_grad = requires_grad
    return self


ShardedTensor.clamp_ = clamp_
ShardedTensor.clip_ = clamp_
ShardedTensor.fill_ = fill_
ShardedTensor.zero_ = zero_
ShardedTensor.copy_ = copy_
ShardedTensor.requires_grad_ = requires_grad_


# ------------------------------------------------------------------ views and indexing
from . import indexing as _ix  # noqa: E402
from . import shape as S  # noqa: E402

for _n in ("view reshape flatten permute transpose swapaxes t squeeze unsqueeze expand "
           "expand_as contiguous clone narrow select split chunk unbind flip roll").split():
    setattr(ShardedTensor, _n, getattr(S, _n))
ShardedTensor.__getitem__ = _ix.getitem
ShardedTensor.__setitem__ = _ix.setitem
ShardedTensor.T = property(lambda self: S.permute(self, tuple(reversed(range(self.ndim)))))
ShardedTensor.mT = property(lambda self: S.transpose(self, -2, -1))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(S.unbind(self, 0))


ShardedTensor.__iter__ = _iter


# ------------------------------------------------------------------ autograd
from . import autograd as _ag  # noqa: E402


def backward(self, gradient=None, retain_graph=None, create_graph=False):
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` is required
    unless ``self`` has one element).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.ones(4, requires_grad=True)
    >>> (a * 5).sum().backward(); a.grad.tolist()
    [5.0, 5.0, 5.0, 5.0]
    """
    _ag.backward(self, gradient, retain_graph, create_graph)


def detach(self):
    """A tensor sharing this one's shards, cut from the graph (``requires_grad=False``).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, requires_grad=True).detach().requires_grad
    False
    """
    return _ag._alias(self)


def detach_(self):
    """Cut this tensor from the graph in place."""
    self.grad_fn, self.requires_grad = None, False
    return self


def retain_grad(self):
    """Keep ``.grad`` for this non-leaf tensor after backward."""
    if self.grad_fn is not None:
        self._retains_grad = True
    return self


ShardedTensor.backward = backward
ShardedTensor.detach = detach
ShardedTensor.detach_ = detach_
ShardedTensor.retain_grad = retain_grad
ShardedTensor.retains_grad = property(lambda self: self._retains_grad)
