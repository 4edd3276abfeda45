"""Creation composed of the creation primitives: ``scalar_tensor`` (torch's 0-d tensor of a
number, in the default float dtype whatever the number's type).
"""

from __future__ import annotations

from ... import dtypes as D
from ...core.dispatch import is_tensor
from ...errors import DTypeError, ShapeError
from .prims import tensor as _tensor_of

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
    return _tensor_of(s, dtype=dt, requires_grad=requires_grad, **kw)
