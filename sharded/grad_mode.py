"""Grad modes and the tensor's own graph methods.

``no_grad``/``enable_grad``/``set_grad_enabled``/``inference_mode`` switch recording for the
thread (as context managers and decorators, as torch's); ``detach``, ``retain_grad`` and
``register_hook`` are the methods a tensor offers on its place in the graph. The engine that
reads these (``autograd.py``) imports them from here.
"""

from __future__ import annotations

import functools
import threading
import weakref

from .core.registry import bind
from .errors import AutogradError
from .tensor import ShardedTensor


class _State(threading.local):
    """The grad mode of each thread. The defaults are class attributes: a thread that never
    set its mode reads them directly (``getattr(local, name, default)`` on a missing name
    costs 0.4 us, on the path of every op)."""

    enabled = True
    inference = False
    old_value = None  # (autograd: the target's value before an in-place op that saves it)


_state = _State()


def is_grad_enabled() -> bool:
    """Whether ops are being recorded for backward.

    Examples
    --------
    >>> import sharded as st
    >>> st.is_grad_enabled()
    True
    """
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is active."""
    return _state.inference


class _GradMode:
    """A context manager that is also a decorator (``@no_grad()`` and bare ``@no_grad``); a
    decorated function enters a fresh one per call, so recursion and threads are safe."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])  # bare decorator: @st.no_grad
        return super().__new__(cls)

    def _make(self):
        return type(self)()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._make():
                return fn(*args, **kwargs)

        return wrapper

    def __enter__(self):
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        self._set()
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev
        return False


class no_grad(_GradMode):
    """Do not record ops (``with st.no_grad():``, ``@st.no_grad()`` or ``@st.no_grad``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(3, requires_grad=True)
    >>> with st.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def _set(self):
        _state.enabled = False


class enable_grad(_GradMode):
    """Record ops even inside ``no_grad`` (also a decorator)."""

    def _set(self):
        _state.enabled = True


class set_grad_enabled(_GradMode):
    """Turn recording on or off: at once when called (``st.set_grad_enabled(False)``, as
    torch), restored at the end of a ``with`` block; also a decorator.

    Examples
    --------
    >>> import sharded as st
    >>> with st.set_grad_enabled(False):
    ...     y = st.ones(2, requires_grad=True) * 2
    >>> y.requires_grad, st.is_grad_enabled()
    (False, True)
    """

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        _state.enabled = self.mode

    def _make(self):
        return type(self)(self.mode)

    def __call__(self, fn):
        _state.enabled = self.prev[0]  # as a decorator it changes nothing until fn runs
        return super().__call__(fn)

    def __enter__(self):
        self._set()
        return self

    def _set(self):
        _state.enabled = self.mode


class inference_mode(_GradMode):
    """``no_grad`` that also sets :func:`is_inference_mode_enabled` (``mode=False`` turns
    recording on, as torch's); a context manager and a decorator.

    Examples
    --------
    >>> import sharded as st
    >>> with st.inference_mode():
    ...     y = st.ones(2, requires_grad=True) * 2
    >>> y.requires_grad, st.is_inference_mode_enabled()
    (False, False)
    """

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _make(self):
        return type(self)(self.mode)

    def _set(self):
        _state.inference = self.mode
        _state.enabled = not self.mode  # torch's guard: inference_mode(False) enables grad


def _alias(t: ShardedTensor) -> ShardedTensor:
    """Another tensor object over the same shards (no graph), e.g. a saved output."""
    a = ShardedTensor(t._storage.session, t._layout, t._dtype, t._keys, storage=t._storage)
    a._strides, a._offset, a._base, a._readonly = t._strides, t._offset, t._base, t._readonly
    a._vc = t._vc
    return a


# ------------------------------------------------------------------ tensor methods
@bind("detach")
def detach(self):
    """A tensor sharing this one's shards, cut from the graph (``requires_grad=False``).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, requires_grad=True).detach().requires_grad
    False
    """
    return _alias(self)


@bind("detach_")
def detach_(self):
    """Cut this tensor from the graph in place (not a view: torch refuses those)."""
    if self._base is not None:
        raise AutogradError("Can't detach views in-place. Use detach() instead.")
    self.grad_fn, self.requires_grad = None, False
    return self


@bind("retain_grad")
def retain_grad(self):
    """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on a leaf).

    Examples
    --------
    >>> import sharded as st
    >>> y = st.ones(2, requires_grad=True).sum()
    >>> y.retain_grad(); y.backward(); y.grad.item()
    1.0
    """
    if not self.requires_grad:
        raise AutogradError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is not None and not self._retains_grad:
        self._retains_grad = True
        node = self.grad_fn
        node.retain = dict(node.retain or {})
        node.retain[self._out_index] = weakref.ref(self)


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` unregisters the hook."""

    _next = 0

    def __init__(self, table):
        RemovableHandle._next += 1
        self.id, self._table = RemovableHandle._next, table

    def remove(self):
        self._table.pop(self.id, None)


@bind("register_hook")
def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed; a tensor it returns
    replaces the gradient (for a leaf, before it is added to ``.grad``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(2, requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 2)
    >>> (x * 3).sum().backward(); x.grad.tolist()
    [6.0, 6.0]
    >>> h.remove()
    """
    if not self.requires_grad:
        raise AutogradError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        if self._hooks is None:
            self._hooks = {}
        table = self._hooks
    else:
        node = self.grad_fn
        if node.hooks is None:
            node.hooks = {}
        table = node.hooks.setdefault(self._out_index, {})
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


ShardedTensor.retains_grad = property(lambda self: self._retains_grad)
