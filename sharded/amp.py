"""Automatic mixed precision: ``st.autocast`` (also ``st.amp.autocast``), as torch's.

Inside an enabled ``autocast(device_type)`` block, ops on tensors of that device type follow
torch's autocast lists:

- **lower precision** (:func:`lower_precision`): products and convolutions (``matmul``,
  ``mm``, ``bmm``, ``addmm``, ``addbmm``, ``baddbmm``, ``linalg.vecdot``, ``linear``,
  ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``, ``prelu``, ``scaled_dot_product_attention``)
  cast their float32/float16/bfloat16 tensor arguments to the block's dtype (bfloat16 by
  default on CPU, float16 on CUDA) and give results in it. They still accumulate in float32
  (bfloat16 ops run through float32 and round once), as torch's CPU kernels do;
- **float32** (:func:`keep_float32`): losses, ``prod``, ``cdist``, ``trace``, ``quantile``
  and ``nanquantile`` cast those arguments to float32, so a loss of bfloat16 logits is a
  float32 value;
- every other op runs in its arguments' dtypes (a bfloat16 and a float32 tensor promote to
  float32, as always).

float64 tensors and integer tensors are never cast. Casts are ops like any other, so
gradients flow back through them: a float32 parameter used in a bfloat16 product gets a
float32 gradient (of bfloat16-rounded values, as torch's). Unlike torch, casts of leaf
tensors are not cached within a block (``cache_enabled`` is accepted and has no effect);
linear algebra decompositions and FFTs, which refuse bfloat16, are not on the float32 list.

The state is per thread, as torch's: a block entered in one thread does not change ops in
another. Outside any block the check is one integer test per decorated call.

Examples
--------
>>> import sharded as st
>>> x, w = st.ones(4, 3), st.ones(2, 3, requires_grad=True)
>>> with st.autocast("cpu"):
...     y = st.nn.functional.linear(x, w)
...     loss = st.nn.functional.mse_loss(y, st.zeros(4, 2))
>>> y.dtype, loss.dtype
(sharded.bfloat16, sharded.float32)
>>> loss.backward(); w.grad.dtype
sharded.float32
"""

from __future__ import annotations

import functools
import threading
import warnings

from . import dtypes as D
from .errors import ArgumentError, ArgumentTypeError
from .tensor import ShardedTensor

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_enabled"]

# torch's defaults and the dtypes each device type's autocast takes
DEFAULT = {"cpu": D.bfloat16, "cuda": D.float16}
SUPPORTED = {"cpu": (D.bfloat16, D.float16), "cuda": (D.float16, D.bfloat16)}
# what autocast casts: floating tensors other than float64 (torch's is_autocast_eligible)
_CASTABLE = (D.float32, D.float16, D.bfloat16)


class _State(threading.local):
    """Per thread: ``{device type: dtype}`` of the enabled blocks, and whether an autocast
    op is running (ops it calls in turn are not cast again, as torch's autocast dispatch
    key is excluded below an autocast op)."""

    on: dict | None = None
    inside = False


_state = _State()
_lock = threading.Lock()
_active = 0  # enabled blocks in every thread: 0 keeps decorated ops on their fast path


def _enabled() -> dict:
    if _state.on is None:
        _state.on = {}
    return _state.on


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an enabled :class:`autocast` block of ``device_type`` is active in this thread
    (no argument: CUDA, as torch's).

    Examples
    --------
    >>> import sharded as st
    >>> with st.autocast("cpu"):
    ...     st.is_autocast_enabled("cpu")
    True
    """
    return device_type in _enabled()


def get_autocast_dtype(device_type: str):
    """The dtype the lower-precision ops cast to inside a ``device_type`` block (the default
    outside one: bfloat16 on CPU, float16 on CUDA).

    Examples
    --------
    >>> import sharded as st
    >>> st.get_autocast_dtype("cpu")
    sharded.bfloat16
    """
    _device_type(device_type)
    return _enabled().get(device_type, DEFAULT[device_type])


def _device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ArgumentTypeError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in DEFAULT:
        raise ArgumentError(
            f"User specified an unsupported autocast device_type '{device_type}' "
            f"(one of {', '.join(DEFAULT)})"
        )
    return device_type


class autocast:
    """Run the ops of a block (or of a decorated function) in mixed precision, as
    ``torch.autocast``: products and convolutions in ``dtype``, losses in float32 (the
    lists are in :mod:`sharded.amp`).

    Parameters
    ----------
    device_type : str
        ``"cpu"`` or ``"cuda"``: the ops on tensors of that device type are cast.
    dtype : sharded dtype, optional
        bfloat16 (CPU's default) or float16 (CUDA's); another dtype warns and leaves the
        block disabled, as torch.
    enabled : bool
        ``False`` makes a block that turns autocast off for ``device_type`` (nested in an
        enabled one, say).
    cache_enabled : bool, optional
        Accepted for torch's signature; casts are not cached.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.ones(2, 2)
    >>> with st.autocast("cpu"):
    ...     (a @ a).dtype
    sharded.bfloat16
    >>> @st.autocast("cpu", enabled=False)
    ... def full(x):
    ...     return x @ x
    >>> with st.autocast("cpu"):
    ...     full(a).dtype
    sharded.float32
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _device_type(device_type)
        self.fast_dtype = DEFAULT[self.device] if dtype is None else D.as_dtype(dtype)
        self._enabled = bool(enabled)
        self.cache_enabled = cache_enabled
        if self._enabled and self.fast_dtype not in SUPPORTED[self.device]:
            kind = self.device.upper()
            warnings.warn(
                f"In {kind} autocast, but the target dtype is not supported. Disabling "
                f"autocast.\n{kind} Autocast only supports dtypes of "
                f"{', '.join(f'sharded.{d.name}' for d in SUPPORTED[self.device])} currently.",
                stacklevel=2,
            )
            self._enabled = False
        self._saved = []

    def __enter__(self):
        global _active
        on = _enabled()
        self._saved.append(on.get(self.device))
        if self._enabled:
            on[self.device] = self.fast_dtype
            with _lock:
                _active += 1
        else:
            on.pop(self.device, None)
        return self

    def __exit__(self, *exc):
        global _active
        on, old = _enabled(), self._saved.pop()
        if self._enabled:
            with _lock:
                _active -= 1
        if old is None:
            on.pop(self.device, None)
        else:
            on[self.device] = old
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self.cache_enabled):
                return fn(*args, **kwargs)

        return run


def _target(args, kwargs, lower: bool):
    """The dtype the tensors of a call cast to, or None (no enabled block for their device
    type, or an autocast op already running)."""
    if _state.inside:
        return None
    on = _enabled()
    for a in (*args, *kwargs.values()):
        if isinstance(a, ShardedTensor):
            kind = a.device.split(":")[0]  # (a "mixed(...)" tensor is neither: no cast)
            if kind in on:
                return on[kind] if lower else D.float32
            return None
    return None


def _cast(a, dtype):
    if isinstance(a, ShardedTensor) and a._dtype != dtype and a._dtype in _CASTABLE:
        return a.to(dtype)
    if isinstance(a, (list, tuple)) and any(isinstance(t, ShardedTensor) for t in a):
        return type(a)(_cast(t, dtype) for t in a)
    return a


def _policy(fn, lower: bool):
    """``fn`` casting its tensor arguments as :func:`_target` says, and running with
    autocast suspended (the ops it calls are not cast again)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not _active:
            return fn(*args, **kwargs)
        dtype = _target(args, kwargs, lower)
        if dtype is None:
            return fn(*args, **kwargs)
        args = tuple(_cast(a, dtype) for a in args)
        kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        _state.inside = True
        try:
            return fn(*args, **kwargs)
        finally:
            _state.inside = False

    return run


def lower_precision(fn):
    """Decorate an op of torch's autocast lower-precision list: inside an enabled block its
    float32/float16/bfloat16 tensor arguments cast to the block's dtype.

    Examples
    --------
    >>> import sharded as st
    >>> double = lower_precision(lambda t: t * 2)
    >>> with st.autocast("cpu"):
    ...     double(st.ones(2)).dtype
    sharded.bfloat16
    """
    return _policy(fn, True)


def keep_float32(fn):
    """Decorate an op of torch's autocast float32 list: inside an enabled block its
    float16/bfloat16 tensor arguments cast to float32.

    Examples
    --------
    >>> import sharded as st
    >>> double = keep_float32(lambda t: t * 2)
    >>> with st.autocast("cpu"):
    ...     double(st.ones(2, dtype=st.bfloat16)).dtype
    sharded.float32
    """
    return _policy(fn, False)
