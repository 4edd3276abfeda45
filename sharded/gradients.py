"""VJPs not yet moved next to their planners (movement, views, indexing, matmul); the
elementwise and reduction VJPs live in their op-family modules.

Each rule maps the output gradients of a recorded :class:`~sharded.autograd.Node` to one
gradient per input (``None`` for inputs that are not tensors requiring grad). Rules use
sharded ops only, so backward is shard-parallel; broadcasting is undone by summing over the
broadcast dims. Derived ops (``mean``, ``var``, ``softmax``, ``mse_loss``...) need no rule.
"""

from __future__ import annotations

from .core.dispatch import apply
from .core.registry import vjp
from .creation import zeros_like
from .ops.elementwise import unbroadcast
from .tensor import ShardedTensor


def _needs(a) -> bool:
    return isinstance(a, ShardedTensor) and a.requires_grad


# ------------------------------------------------------------------------ movement
@vjp("squeeze_dims")
def _squeeze(gs, node):
    x = node.args[0]
    return (gs[0].reshape(tuple(x.shape)), None)


@vjp("reshard")
def _reshard(gs, node):
    return (gs[0], None)  # the engine lays the gradient out like the input


@vjp("contiguous")
def _contiguous(gs, node):
    return (gs[0],)


@vjp("permute")
def _permute(gs, node):
    x, dims = node.args
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (gs[0].permute(inv), None)


@vjp("reshape_view")
def _reshape(gs, node):
    x = node.args[0]
    return (gs[0].reshape(tuple(x.shape)),) + (None,) * (len(node.args) - 1)


@vjp("expand")
def _expand(gs, node):
    x = node.args[0]
    return (unbroadcast(gs[0], x), None)


@vjp("index_basic")
def _index_basic(gs, node):
    x, entries = node.args
    # a normalised negative-step slice may stop at -1, which must mean "past the start"
    key = tuple(None if e[0] == "new" else (e[1] if e[0] == "int" else slice(
        e[1], None if e[2] < 0 else e[2], e[3])) for e in entries)
    z = zeros_like(x, dtype=gs[0].dtype)
    z[key] = gs[0]
    return (z, None)


@vjp("cat")
def _cat(gs, node):
    d = node.params["dim"]
    out, start = [], 0
    for t in node.args:
        n = t.shape[d]
        out.append(gs[0].narrow(d, start, n) if _needs(t) else None)
        start += n
    return tuple(out)


@vjp("gather")
def _gather(gs, node):
    x, coords, shape = node.args
    z = zeros_like(x, dtype=gs[0].dtype)
    apply("scatter_add", z, coords, gs[0], target=z)  # repeated indices accumulate
    return (z, None, None)


@vjp("mask_select", saves=(1,))
def _mask_select(gs, node):
    x, mask = node.args
    z = zeros_like(x, dtype=gs[0].dtype)
    apply("mask_scatter", z, mask, gs[0], target=z)
    return (z, None)


# ------------------------------------------------------------------------ linalg
@vjp("matmul", saves=(0, 1))
def _matmul(gs, node):
    a, b, _ = node.args
    g = gs[0]
    # d(a @ b) = da @ b + a @ db; a's gradient is row-split like a, b's (a weight) is the
    # k-split product a^T g: partial products summed across the workers by the tree
    return (unbroadcast(g @ b.mT, a) if _needs(a) else None,
            unbroadcast(a.mT @ g, b) if _needs(b) else None, None)


from . import gradients_linalg  # noqa: E402,F401
