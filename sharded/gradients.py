"""The gradient table: one vector-Jacobian product per differentiable primitive.

Each rule maps the output gradients of a recorded :class:`~sharded.autograd.Node` to one
gradient per input (``None`` for inputs that are not tensors requiring grad). Rules use
sharded ops only, so backward is shard-parallel; broadcasting is undone by summing over the
broadcast dims. Derived ops (``mean``, ``var``, ``softmax``, ``mse_loss``...) need no rule.
"""

from __future__ import annotations

from . import functional as F
from .core.dispatch import apply
from .core.registry import nondiff, vjp
from .creation import zeros_like
from .tensor import ShardedTensor

for _n in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "logical_not", "isnan", "isfinite", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "all", "any", "argmax", "argmin", "floor_divide"):
    nondiff(_n)


def _needs(a) -> bool:
    return isinstance(a, ShardedTensor) and a.requires_grad


def unbroadcast(g, a):
    """``g`` summed back to the shape of operand ``a`` (None if ``a`` needs no gradient)."""
    if not _needs(a):
        return None
    shape = tuple(a.shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    return (F.sum(g, dims, keepdim=True) if dims else g).reshape(shape)


def _out(node, i=0):
    return node.saved["out"][i]


# ------------------------------------------------------------------------ elementwise
@vjp("add")
def _add(gs, node):
    a, b = node.args
    return unbroadcast(gs[0], a), unbroadcast(gs[0], b)


@vjp("sub")
def _sub(gs, node):
    a, b = node.args
    return unbroadcast(gs[0], a), unbroadcast(-gs[0], b) if _needs(b) else None


@vjp("mul", saves=(0, 1))
def _mul(gs, node):
    a, b = node.args
    g = gs[0]
    return (unbroadcast(g * b, a) if _needs(a) else None,
            unbroadcast(g * a, b) if _needs(b) else None)


@vjp("div", saves=(0, 1))
def _div(gs, node):
    a, b = node.args
    g = gs[0]
    return (unbroadcast(g / b, a) if _needs(a) else None,
            unbroadcast(-g * a / (b * b), b) if _needs(b) else None)


@vjp("pow", save_out=True, saves=(0, 1))
def _pow(gs, node):
    a, b = node.args
    g = gs[0]
    ga = unbroadcast(g * b * a ** (b - 1), a) if _needs(a) else None
    gb = None
    if _needs(b):  # d(a^b)/db = a^b log a, taken as 0 where a == 0 (as torch)
        gb = unbroadcast(g * F.where(a != 0, _out(node) * F.log(F.abs(a)), 0.0), b)
    return ga, gb


@vjp("maximum", "minimum", saves=(0, 1))
def _maxmin(gs, node):
    a, b = node.args
    g = gs[0]
    win = (a > b) if node.prim == "maximum" else (a < b)
    share = F.where(win, 1.0, F.where(a == b, 0.5, 0.0))  # ties split the gradient
    return (unbroadcast(g * share, a) if _needs(a) else None,
            unbroadcast(g * (1.0 - share), b) if _needs(b) else None)


@vjp("neg")
def _neg(gs, node):
    return (-gs[0],)


@vjp("abs", saves=(0,))
def _abs(gs, node):
    (a,) = node.args
    return (gs[0] * F.where(a > 0, 1.0, F.where(a < 0, -1.0, 0.0)),)


@vjp("exp", save_out=True)
def _exp(gs, node):
    return (gs[0] * _out(node),)


@vjp("log", saves=(0,))
def _log(gs, node):
    return (gs[0] / node.args[0],)


@vjp("log1p", saves=(0,))
def _log1p(gs, node):
    return (gs[0] / (node.args[0] + 1),)


@vjp("sqrt", save_out=True)
def _sqrt(gs, node):
    return (gs[0] / (2 * _out(node)),)


@vjp("sin", saves=(0,))
def _sin(gs, node):
    return (gs[0] * F.cos(node.args[0]),)


@vjp("cos", saves=(0,))
def _cos(gs, node):
    return (-gs[0] * F.sin(node.args[0]),)


@vjp("tanh", save_out=True)
def _tanh(gs, node):
    y = _out(node)
    return (gs[0] * (1 - y * y),)


@vjp("sigmoid", save_out=True)
def _sigmoid(gs, node):
    y = _out(node)
    return (gs[0] * y * (1 - y),)


@vjp("relu", saves=(0,))
def _relu(gs, node):
    return (apply("relu_grad", gs[0], node.args[0]),)


@vjp("relu_grad", saves=(1,))
def _relu_grad(gs, node):  # linear in g; zero almost everywhere in a
    return apply("relu_grad", gs[0], node.args[1]), None


@vjp("clamp", saves=(0, 1, 2))
def _clamp(gs, node):
    a, lo, hi = node.args
    g = gs[0]
    inside = [c for c in ((a >= lo) if lo is not None else None,
                          (a <= hi) if hi is not None else None) if c is not None]
    inside = inside[0] if len(inside) == 1 else inside[0] & inside[1]
    return (g * inside if _needs(a) else None,
            unbroadcast(g * (a < lo), lo) if _needs(lo) else None,
            unbroadcast(g * (a > hi), hi) if _needs(hi) else None)


@vjp("where", saves=(0,))
def _where(gs, node):
    c, a, b = node.args
    g = gs[0]
    return (None, unbroadcast(F.where(c, g, 0.0), a) if _needs(a) else None,
            unbroadcast(F.where(c, 0.0, g), b) if _needs(b) else None)


@vjp("remainder", saves=(0, 1))
def _remainder(gs, node):
    a, b = node.args
    g = gs[0]
    return (unbroadcast(g, a), unbroadcast(-g * F.floor_divide(a, b), b) if _needs(b) else None)


@vjp("astype")
def _astype(gs, node):
    return (gs[0].to(node.args[0].dtype), None)


@vjp("fill_")
def _fill(gs, node):
    x, value = node.args
    g = gs[0]
    return (zeros_like(g) if _needs(x) else None, unbroadcast(g, value))


# ------------------------------------------------------------------------ reductions
def _expand_back(g, x, dims, keepdim):
    """A reduced gradient broadcast back over the reduced dims of ``x``."""
    if not keepdim:
        for d in sorted(dims):
            g = g.unsqueeze(d)
    return g.expand(tuple(x.shape))


@vjp("sum")
def _sum(gs, node):
    x, dims, keepdim = node.args[:3]
    return (_expand_back(gs[0], x, dims, keepdim),) + (None,) * (len(node.args) - 1)


@vjp("prod", save_out=True, saves=(0,))
def _prod(gs, node):
    x, dims, keepdim = node.args[:3]
    out = _expand_back(_out(node), x, dims, keepdim)
    return (_expand_back(gs[0], x, dims, keepdim) * out / x,) + (None,) * (len(node.args) - 1)


@vjp("amax", "amin", save_out=True, saves=(0,))
def _amaxmin(gs, node):
    x, dims, keepdim = node.args[:3]
    hit = x == _expand_back(_out(node), x, dims, keepdim)
    count = F.sum(hit, dims, keepdim=True)  # ties share the gradient evenly, as torch
    return (_expand_back(gs[0], x, dims, keepdim) * hit / count,) + (None,) * (
        len(node.args) - 1)


@vjp("max_dim", "min_dim", save_out=True)
def _max_dim(gs, node):
    x, dim, keepdim = node.args[:3]
    idx = _out(node, 1)
    if not keepdim:
        idx = idx.unsqueeze(dim)
    from .creation import arange
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    pos = arange(x.shape[dim]).reshape(shape)
    return (_expand_back(gs[0], x, (dim,), keepdim) * (pos == idx),) + (None,) * (
        len(node.args) - 1)


@vjp("squeeze_dims")
def _squeeze(gs, node):
    x = node.args[0]
    return (gs[0].reshape(tuple(x.shape)), None)


# ------------------------------------------------------------------------ movement
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
