"""The matmul primitive (its kernels, planner, VJP) and the public products built on it:
``matmul``/``@``, ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``inner``, ``outer``/``ger``.

The planner picks a layout strategy (SUMMA-style blocks, a k-split, or replicated) with the
cost model of the family's :mod:`..plan`.
"""

from __future__ import annotations

import math

import numpy as np

from .... import dtypes as D
from ....amp import lower_precision
from ....backend import host_blas
from ....core.dataflow import Operand
from ....core.dispatch import apply, as_tensor, is_tensor, unbroadcast, via_float32
from ....core.registry import bind, kernel, primitive, vjp
from ....errors import ArgumentTypeError, DTypeError, ShapeError, UnsupportedDType
from ....layout import Layout, broadcast_shapes
from ..plan import Vec, choose, run_blocks, run_ksplit

__all__ = [
    "addbmm",
    "addmm",
    "addmv",
    "addr",
    "baddbmm",
    "bmm",
    "ger",
    "dot",
    "inner",
    "matmul",
    "mm",
    "mv",
    "outer",
    "vdot",
]


# ------------------------------------------------------------------------------ kernels
def _cast(a, dtype):
    if dtype is None or not hasattr(a, "dtype") or a.dtype == dtype:
        return a
    return a.astype(dtype)


# the public ``matmul`` below takes this name in the module; the kernel stays registered
@kernel(pooled=True)
def matmul(xp, a, b, out=None, stack=False, alloc=None):
    """Block product (BLAS through NumPy / cuBLAS through CuPy; a matrix times a vector is
    one gemv); ``stack`` adds a leading dim of 1 (a partial product, one entry of a stack
    that is summed afterwards). A 2-D product is made in a block of the worker's pool where
    one fits (``alloc``)."""
    a, b = _cast(a, out), _cast(b, out)
    if D.is_bf16(a):  # NumPy has no bfloat16 BLAS: a float32 product, rounded once
        r = xp.asarray(xp.matmul(a.astype(np.float32), b.astype(np.float32)))
        return (r[None] if stack else r).astype(a.dtype)
    buf = None
    if alloc is not None and a.ndim == b.ndim == 2 and a.dtype == b.dtype and not stack:
        buf = alloc((a.shape[0], b.shape[1]), a.dtype)
    # (two vectors: NumPy returns a scalar, not the 0-d array a block must be)
    r = _cast(xp.asarray(xp.matmul(a, b)) if buf is None else xp.matmul(a, b, out=buf), out)
    return r[None] if stack else r


@kernel
def matmul_acc(xp, c, a, b, out=None):
    """``c += a @ b`` in place (one more k panel of a blocked product): on the host one gemm
    call (``beta = 1``, :func:`host_blas.gemm_add`), else in row chunks so the temporary
    product stays small (recycled, not page-faulted afresh)."""
    a, b = _cast(a, out), _cast(b, out)
    if D.is_bf16(c):
        c += (a.astype(np.float32) @ b.astype(np.float32)).astype(c.dtype)
        return c
    if xp is np and host_blas.gemm_add(c, a, b):
        return c
    if c.ndim != 2 or a.ndim != 2:
        c += _cast(xp.matmul(a, b), c.dtype)
        return c
    step = max(64, (1 << 24) // max(1, c.shape[1] * c.itemsize))
    for r in range(0, c.shape[0], step):
        c[r : r + step] += _cast(a[r : r + step] @ b, c.dtype)
    return c


@kernel
def add_n(xp, *parts):
    """The sum of equally shaped blocks, in a fresh array (a reduce-scatter's last step)."""
    out = xp.array(parts[0], copy=True)
    for p in parts[1:]:
        out += p
    return out


@primitive("matmul", kind="linalg", kernels=[matmul, matmul_acc, add_n])
def plan_matmul(ex, a, b, out_dtype) -> Operand:
    """``a @ b`` for operands whose batch dims broadcast, a 1-D one only against a matrix
    or a vector (the caller turns other 1-D operands into matrices and checks dtypes and
    shapes); the strategy is :func:`choose`'s, a vector planned as a one-row or one-column
    matrix (:class:`~..plan.Vec`) and read as it is."""
    a = Vec(a, 0) if a._layout.ndim == 1 else a
    b = Vec(b, 1) if b._layout.ndim == 1 else b
    g, plan = choose(ex, a, b)
    if plan[0] == "replicated":
        lay = a._layout
        out = Layout.from_bounds(g.shape, [(0, s) for s in g.shape], lay.workers, replicated=True)
        return run_blocks(ex, g, out, g.k_cuts() or [], out_dtype)
    if plan[0] == "ksplit":
        return run_ksplit(ex, g, plan[1], out_dtype)
    return run_blocks(ex, g, plan[1], plan[2], out_dtype)


@vjp("matmul", saves=(0, 1))
def matmul_vjp(gs, node):
    a, b, _ = node.args
    g = gs[0]
    # d(a @ b) = da @ b + a @ db; a's gradient is row-split like a, b's (a weight) is the
    # k-split product a^T g: partial products summed across the workers by the tree. With a
    # vector operand (no unit dim in g): the same products, an outer one for the matrix.
    if a.ndim == 1 and b.ndim == 1:  # (k,) @ (k,): g is 0-d
        return (g * b, a * g, None)
    if b.ndim == 1:  # (n, k) @ (k,)
        return (g.unsqueeze(-1) @ b.unsqueeze(0), a.mT @ g, None)
    if a.ndim == 1:  # (k,) @ (k, m)
        return (b @ g, a.unsqueeze(-1) @ g.unsqueeze(0), None)
    return (unbroadcast(g @ b.mT, a), unbroadcast(a.mT @ g, b), None)


# ------------------------------------------------------------------------------ public
def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _dims(s) -> str:
    return "x".join(map(str, s))


def _same_dtype(op, a, b) -> None:
    """torch multiplies only equal dtypes (no promotion: ``int @ float`` and ``float32 @
    float64`` raise), and no bool matrices; checked before anything is queued."""
    if a.dtype != b.dtype:
        raise DTypeError(
            f"{op}: expected both operands to have the same dtype, but got "
            f"{a.dtype.name} and {b.dtype.name}"
        )
    if a.dtype == D.bool_:
        raise UnsupportedDType(f"{op} is not implemented for bool tensors")  # torch's class


@bind("matmul", "__matmul__", "__rmatmul__", prim="matmul")
@lower_precision
@via_float32
def matmul(input, other):
    """Matrix product with torch's rules for 1-D and batched (broadcast) operands.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.arange(6.).reshape(3, 2)
    >>> (a @ st.tensor([[1.], [1.]])).tolist()
    [[1.0], [5.0], [9.0]]
    """
    return _matmul("matmul", _t(input), _t(other))


def _matmul(op, a, b):
    """``a @ b`` for tensors; ``op`` names the public function in errors."""
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    sa = (1,) + tuple(a.shape) if a.ndim == 1 else tuple(a.shape)
    sb = tuple(b.shape) + (1,) if b.ndim == 1 else tuple(b.shape)
    if sa[-1] != sb[-2]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(sa)} and {_dims(sb)})")
    broadcast_shapes(sa[:-2], sb[:-2])
    _same_dtype(op, a, b)  # after the shapes, as torch
    if min(a.ndim, b.ndim) > 1 or max(a.ndim, b.ndim) <= 2:
        # a vector against a matrix or a vector goes in as it is: the planner reads it as a
        # one-row or one-column matrix, with no reshaping commands around the product
        return apply("matmul", a, b, a.dtype)
    # a vector against a batch of matrices: as the matrix torch makes of it
    out = apply(
        "matmul",
        a.unsqueeze(0) if a.ndim == 1 else a,
        b.unsqueeze(1) if b.ndim == 1 else b,
        a.dtype,
    )
    return out.squeeze(-2 if a.ndim == 1 else -1)


@bind("mm", prim="matmul")
@lower_precision
@via_float32
def mm(input, mat2):
    """Product of two 2-D tensors.

    Examples
    --------
    >>> import sharded as st
    >>> st.mm(st.eye(2), st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    if _t(input).ndim != 2 or _t(mat2).ndim != 2:
        raise ShapeError(f"mm expects 2-D tensors, got {_t(input).ndim}-D and {_t(mat2).ndim}-D")
    return _matmul("mm", _t(input), _t(mat2))


@bind("bmm", prim="matmul")
@lower_precision
@via_float32
def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch sizes.

    Examples
    --------
    >>> import sharded as st
    >>> st.bmm(st.ones(4, 2, 3), st.ones(4, 3, 5)).shape
    sharded.Size([4, 2, 5])
    """
    a, b = _t(input), _t(mat2)
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise ShapeError(
            f"bmm expects 3-D tensors with equal batch sizes, got "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    return _matmul("bmm", a, b)


@bind("mv", prim="matmul")
def mv(input, vec):
    """Matrix-vector product.

    Examples
    --------
    >>> import sharded as st
    >>> st.mv(st.eye(2), st.tensor([1., 2.])).tolist()
    [1.0, 2.0]
    """
    if _t(input).ndim != 2 or _t(vec).ndim != 1:
        raise ShapeError(
            f"mv expects a 2-D and a 1-D tensor, got {_t(input).ndim}-D and {_t(vec).ndim}-D"
        )
    return _matmul("mv", _t(input), _t(vec))


@bind("dot", prim="matmul")
@via_float32
def dot(input, other):
    """Inner product of two 1-D tensors (a 0-d tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.dot(st.tensor([1., 2.]), st.tensor([3., 4.])).item()
    11.0
    """
    a, b = _t(input), _t(other)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ShapeError(
            f"dot expects two 1-D tensors of equal size, got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    return _matmul("dot", a, b)


@bind("vdot", prim="matmul")
def vdot(input, other):
    """``dot(conj(input), other)``: the inner product that conjugates its first operand.

    Examples
    --------
    >>> import sharded as st
    >>> st.vdot(st.tensor([1j, 2.0]), st.tensor([1j, 1.0])).item()
    (3+0j)
    """
    a = _t(input)
    return dot(a.conj() if a.dtype.is_complex else a, other)


@bind("inner", prim="matmul")
def inner(input, other):
    """Sum of products over the last dim of both: one matmul of the flattened free dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inner(st.ones(2, 3), st.ones(4, 3)).shape
    sharded.Size([2, 4])
    """
    a, b = _t(input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(
            f"tensordot: contracted dims [{a.ndim - 1}] of {tuple(a.shape)} and "
            f"[{b.ndim - 1}] of {tuple(b.shape)} do not match"
        )
    k = a.shape[-1]
    fa, fb = list(a.shape[:-1]), list(b.shape[:-1])
    # as tensordot over the last dims: b's contracted dim moved first
    am = a.permute(list(range(a.ndim))).reshape(math.prod(fa), k)
    bm = b.permute([b.ndim - 1] + list(range(b.ndim - 1))).reshape(k, math.prod(fb))
    return (am @ bm).reshape(fa + fb)


@bind("outer", "ger", prim="matmul")
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``.

    Examples
    --------
    >>> import sharded as st
    >>> st.outer(st.tensor([1, 2]), st.tensor([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    a, b = _t(input), _t(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer expects two 1-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return a.unsqueeze(1) * b.unsqueeze(0)


ger = outer


# ------------------------------------------------------------------------------ add*
def _factor(op, name, value, dtype):
    """``beta`` or ``alpha`` as torch reads it in the result's ``dtype``: a Python number
    never widens the result. An integer (or bool) result truncates a float factor (addr
    refuses one); a real result refuses a complex factor."""
    if isinstance(value, complex) and value.imag and not dtype.is_complex:
        raise ArgumentTypeError(
            f"{op}: argument {name}={value} cannot be converted to {dtype.name}"
        )
    if D.category(dtype) > 1 or not isinstance(value, (float, complex)):
        return value
    if op == "addr":
        raise ArgumentTypeError(
            f"For integral input tensors, argument {name} must not be a floating point "
            f"number (addr got {name}={value} for {dtype.name})"
        )
    return int(value.real)


def _add_scaled(op, input, prod, beta, alpha):
    """torch's ``beta * input + alpha * prod``: ``input`` broadcasts to ``prod``'s shape
    and is ignored (NaN included) when ``beta`` is 0; unit factors multiply nothing, and
    the factors are read in the result's dtype, so integer products stay integer."""
    input = _t(input)
    shape = tuple(prod.shape)
    try:
        ok = tuple(broadcast_shapes(tuple(input.shape), shape)) == shape
    except ShapeError:
        ok = False
    if not ok:
        raise ShapeError(
            f"{op}: input of shape {_dims(input.shape)} does not broadcast to the product's "
            f"shape {_dims(shape)}"
        )
    dt = D.promote_types(input.dtype, prod.dtype)
    beta, alpha = _factor(op, "beta", beta, dt), _factor(op, "alpha", alpha, dt)
    if dt == D.bool_:  # torch's bool addr: (beta and input) or (alpha and outer)
        beta, alpha = bool(beta), bool(alpha)
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return out.expand(shape) if out.ndim else out
    return out + (input if beta == 1 else input * beta)


@bind("addmm")
@lower_precision
@via_float32
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``, ``mat2``.

    Examples
    --------
    >>> import sharded as st
    >>> st.addmm(st.ones(2, 2), st.eye(2), st.eye(2), beta=2).tolist()
    [[3.0, 2.0], [2.0, 3.0]]
    """
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


@bind("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` for a 2-D ``mat`` and 1-D ``vec``.

    Examples
    --------
    >>> import sharded as st
    >>> st.addmv(st.ones(2), st.eye(2), st.tensor([1., 2.]), alpha=3).tolist()
    [4.0, 7.0]
    """
    return _add_scaled("addmv", input, mv(mat, vec), beta, alpha)


@bind("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.addr(st.zeros(2, 2), st.tensor([1., 2.]), st.tensor([1., 1.])).tolist()
    [[1.0, 1.0], [2.0, 2.0]]
    """
    return _add_scaled("addr", input, outer(vec1, vec2), beta, alpha)


@bind("baddbmm")
@lower_precision
@via_float32
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)`` (3-D batches).

    Examples
    --------
    >>> import sharded as st
    >>> st.baddbmm(st.zeros(1, 2, 2), st.ones(1, 2, 3), st.ones(1, 3, 2)).tolist()
    [[[3.0, 3.0], [3.0, 3.0]]]
    """
    return _add_scaled("baddbmm", input, bmm(batch1, batch2), beta, alpha)


@bind("addbmm")
@lower_precision
@via_float32
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b (batch1[b] @ batch2[b])``.

    Examples
    --------
    >>> import sharded as st
    >>> st.addbmm(st.zeros(2, 2), st.ones(3, 2, 1), st.ones(3, 1, 2)).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    return _add_scaled("addbmm", input, bmm(batch1, batch2).sum(0), beta, alpha)
