from typing import Any

from sharded.core.dispatch import _Hooks
from sharded.errors import ArgumentError as ArgumentError
from sharded.errors import AutogradError as AutogradError
from sharded.errors import ShapeError as ShapeError
from sharded.errors import ShardedError as ShardedError
from sharded.grad_mode import RemovableHandle as RemovableHandle
from sharded.grad_mode import enable_grad as enable_grad
from sharded.grad_mode import inference_mode as inference_mode
from sharded.grad_mode import no_grad as no_grad
from sharded.grad_mode import set_grad_enabled as set_grad_enabled
from sharded.tensor import ShardedTensor as ShardedTensor

COMPOSITES: dict
NONDIFF: str
PRIMITIVES: dict
hooks: _Hooks

class Node:
    """The record of one primitive application: how to send gradients to its inputs."""

    args: Any
    freed: Any
    hooks: Any
    n_out: Any
    params: Any
    prim: Any
    retain: Any
    saved: Any
    versions: Any
    def __init__(self, prim, args, params, saved, n_out, saves=...) -> None: ...
    def __repr__(self) -> str: ...
    def name(self) -> str:
        """torch-style name, e.g. ``MulBackward0``."""
    @property
    def next_functions(self) -> Any: ...

class GradShapeError(AutogradError, ShapeError):
    """A ``gradient=`` whose shape differs from its output's (a RuntimeError, as in torch, and a
    ValueError)."""

def apply(name, *args, **params) -> Any:
    """Run primitive ``name`` on ``args`` and wrap what it returns (autograd records here,
    in-place ops bump version counters here)."""

def backward(tensors, grad_tensors=..., retain_graph=..., create_graph=..., inputs=...) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (only of ``inputs``
    when given)."""

def bind(*names, prim=...) -> Any:
    """Bind the decorated function as ``ShardedTensor`` methods/operators ``names``."""

def detach(self) -> ShardedTensor:
    """A tensor sharing this one's shards, cut from the graph (``requires_grad=False``)."""

def detach_(self) -> ShardedTensor:
    """Cut this tensor from the graph in place (not a view: torch refuses those)."""

def from_numpy(
    a, *, shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """A sharded copy of NumPy array ``a`` (its dtype is kept)."""

def grad(
    outputs,
    inputs,
    grad_outputs=...,
    retain_graph=...,
    create_graph=...,
    allow_unused=...,
    materialize_grads=...,
) -> Any:
    """Gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left alone), a tuple
    with one entry per input; an unused input is an error unless ``allow_unused`` (then
    ``None``, or zeros with ``materialize_grads=True``)."""

def gradcheck(fn, inputs, eps=..., atol=..., rtol=..., raise_exception=...) -> bool:
    """Compare the autograd Jacobian of ``fn`` with central finite differences."""

def is_grad_enabled() -> bool:
    """Whether ops are being recorded for backward."""

def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is active."""

def ones_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``ones`` with the shape, dtype and layout of ``input``."""

def register_hook(self, hook) -> Any:
    """Call ``hook(grad)`` when this tensor's gradient is computed; a tensor it returns replaces
    the gradient (for a leaf, before it is added to ``.grad``)."""

def replay(t, chain) -> Any:
    """Apply a view's recorded steps to ``t`` (a tensor laid out like the view's base)."""

def retain_grad(self) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on a leaf)."""

def tensor(
    data, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """A sharded tensor from nested lists, scalars, a NumPy array or a tensor (always a copy)."""
