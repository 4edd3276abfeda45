"""Creation composed of the creation primitives: ``scalar_tensor`` (torch's 0-d tensor of a
number, in the default float dtype whatever the number's type) and the ``Tensor.new_*``
methods (a primitive with this tensor's dtype and device).
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import is_tensor
from ....core.registry import bind
from ....errors import DTypeError, ShapeError
from ..prims import empty, full, ones, tensor, zeros

__all__ = ["scalar_tensor"]


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):  # fmt: skip
    """A 0-d tensor holding the number ``s``, of ``dtype`` (default: the default float
    dtype, whatever the type of ``s``, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.scalar_tensor(3)
    tensor(3., shards=1)
    """
    if is_tensor(s):
        if s.numel() != 1:
            raise ShapeError(f"scalar_tensor(): expected a number, got a tensor of {s.numel()}")
        s = s.item()
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if isinstance(s, complex) and not dt.is_complex:
        raise DTypeError(f"value {s} cannot be converted to type {dt.name} without overflow")
    kw = {} if device is None else {"device": device}
    return tensor(s, dtype=dt, requires_grad=requires_grad, **kw)


# ------------------------------------------------------------------------------ new_*
def _new_kw(self, dtype, device, requires_grad, **kw):
    """torch's ``Tensor.new_*`` defaults: ``self``'s dtype and device, a fresh layout."""
    if device is None:
        device = "cpu" if self.device.startswith("mixed") else self.device
    dt = self.dtype if dtype is None else dtype
    return dict(dtype=dt, device=device, requires_grad=requires_grad, **kw)


@bind("new_zeros")
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kw):
    """``zeros(size)`` with this tensor's dtype and device unless given.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, dtype=st.float64).new_zeros(2, 3).dtype
    sharded.float64
    """
    return zeros(*size, **_new_kw(self, dtype, device, requires_grad, **kw))


@bind("new_ones")
def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kw):
    """``ones(size)`` with this tensor's dtype and device unless given."""
    return ones(*size, **_new_kw(self, dtype, device, requires_grad, **kw))


@bind("new_empty")
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kw):
    """``empty(size)`` with this tensor's dtype and device unless given."""
    return empty(*size, **_new_kw(self, dtype, device, requires_grad, **kw))


@bind("new_full")
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw):
    """``full(size, fill_value)`` with this tensor's dtype (not the value's) and device."""
    return full(size, fill_value, **_new_kw(self, dtype, device, requires_grad, **kw))


@bind("new_tensor")
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kw):
    """``tensor(data)`` with this tensor's dtype (not the data's) and device unless given.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, dtype=st.int64).new_tensor([1.5, 2.0]).tolist()
    [1, 2]
    """
    return tensor(data, **_new_kw(self, dtype, device, requires_grad, **kw))
