"""``einsum`` and ``tensordot``: parse the equation and reduce it to transposes, sums and
(batched) matrix products, run with tensor methods (``permute``, ``reshape``, ``sum``, ``@``),
so this module defines no primitive and needs no gradient rule of its own.

Two operands ``a`` (subscripts ``sa``) and ``b`` (``sb``) contract as one batched matmul:
indices in both and kept are the batch, indices in both and not kept are contracted (the
``k`` of the product), indices of one operand only are its rows (``a``) or columns (``b``).
Indices of one operand that nothing else needs are summed away first. More operands contract
left to right. A repeated index inside one operand (``'ii->i'``, ``'ii->'``) first takes the
diagonal over its dims (a masked sum: a new tensor, where torch's ``'ii->i'`` is a view of
the input). The result is contiguous, except when a single operand is only permuted
(``'ij->ji'``): that is a view, as in torch.
"""

from __future__ import annotations

import math
import string

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....core.registry import bind
from ....errors import ArgumentError, ShapeError

__all__ = [
    "einsum",
    "tensordot",
]

_POOL = string.ascii_uppercase + string.ascii_lowercase


def parse(equation: str, ndims):
    """``(input subscripts, output subscripts)`` with ``...`` expanded to fresh letters.

    Examples
    --------
    >>> parse("...ij,jk->...ik", [3, 2])
    (['Aij', 'jk'], 'Aik')
    >>> parse("ij,jk", [2, 2])
    (['ij', 'jk'], 'ik')
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ArgumentError(
            f"einsum(): {equation!r} names {len(ins)} operands but {len(ndims)} were given"
        )
    used = set(eq) - set(".,->")
    for c in used:
        if not c.isalpha():
            raise ArgumentError(f"einsum(): invalid subscript {c!r} in {equation!r}")
    fresh = [c for c in _POOL if c not in used]
    ell = 0
    for s, nd in zip(ins, ndims):
        letters = len(s.replace("...", ""))
        if "..." in s:
            ell = max(ell, nd - letters)
        elif letters != nd:
            raise ShapeError(
                f"einsum(): subscripts {s!r} name {letters} dims but the operand has {nd}"
            )
    if ell > len(fresh):
        raise ArgumentError("einsum(): too many dims under '...'")
    ell_chars = "".join(fresh[:ell])
    out_ins = []
    for s, nd in zip(ins, ndims):
        if "..." in s:
            n = nd - len(s.replace("...", ""))
            if n < 0:
                raise ShapeError(
                    f"einsum(): subscripts {s!r} name more dims than the operand's {nd}"
                )
            s = s.replace("...", ell_chars[ell - n :])
        out_ins.append(s)
    if arrow:
        out = rhs.replace("...", ell_chars)
        for c in out:
            if not any(c in s for s in out_ins):
                raise ArgumentError(
                    f"einsum(): output subscript {c!r} does not appear in the "
                    f"inputs of {equation!r}"
                )
        if len(set(out)) != len(out):
            raise ArgumentError(f"einsum(): output subscripts of {equation!r} repeat")
    else:
        counts = {}
        for s in out_ins:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell_chars + "".join(
            sorted(c for c, n in counts.items() if n == 1 and c not in ell_chars)
        )
    return out_ins, out


def sizes(subs, shapes):
    """Size of every index; size-1 dims broadcast (also to 0); a clash names both sizes."""
    out = {}
    for s, shp in zip(subs, shapes):
        for c, n in zip(s, shp):
            if c not in out or out[c] == 1:
                out[c] = n
            elif n not in (1, out[c]):
                raise ShapeError(
                    f"einsum(): subscript {c!r} has size {n} for one operand and "
                    f"{out[c]} for another (shapes {[tuple(x) for x in shapes]})"
                )
    return out


def pair_plan(sa: str, sb: str, keep: str):
    """Index groups of one pairwise contraction: ``(batch, rows, k, cols)``."""
    batch = [c for c in sa if c in sb and c in keep]
    k = [c for c in sa if c in sb and c not in keep]
    rows = [c for c in sa if c not in sb]
    cols = [c for c in sb if c not in sa]
    return batch, rows, k, cols


# ------------------------------------------------------------------------------ running
def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _sum_broadcast(t, dims):
    return t.sum(dims, keepdim=True) if dims else t


@bind("tensordot")
def tensordot(a, b, dims=2):
    """Contract ``dims`` (an int: a's last and b's first dims; or two lists) as one matmul
    of the flattened free and contracted dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.tensordot(st.ones(3, 4, 5), st.ones(4, 5, 2), dims=2).shape
    sharded.Size([3, 2])
    """
    a, b = _t(a), _t(b)
    if isinstance(dims, int):
        if dims < 0 or dims > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot expects 0 <= dims <= {min(a.ndim, b.ndim)}, got {dims}")
        ca, cb = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        ca, cb = ([d] if isinstance(d, int) else list(d) for d in dims)
        ca, cb = [d % a.ndim for d in ca], [d % b.ndim for d in cb]
    if len(ca) != len(cb) or any(
        a.shape[i] != b.shape[j] and 1 not in (a.shape[i], b.shape[j]) for i, j in zip(ca, cb)
    ):
        raise ShapeError(
            f"tensordot: contracted dims {ca} of {tuple(a.shape)} and {cb} of "
            f"{tuple(b.shape)} do not match"
        )
    # torch broadcasts a contracted dim of size 1: the other operand's dim is summed first
    # (the size-1 side is constant along it)
    a = _sum_broadcast(a, [i for i, j in zip(ca, cb) if a.shape[i] != 1 and b.shape[j] == 1])
    b = _sum_broadcast(b, [j for i, j in zip(ca, cb) if b.shape[j] != 1 and a.shape[i] == 1])
    fa = [d for d in range(a.ndim) if d not in ca]
    fb = [d for d in range(b.ndim) if d not in cb]
    k = math.prod(a.shape[d] for d in ca)
    sa, sb = [a.shape[d] for d in fa], [b.shape[d] for d in fb]
    am = a.permute(fa + ca).reshape(math.prod(sa), k)
    bm = b.permute(cb + fb).reshape(k, math.prod(sb))
    return (am @ bm).reshape(sa + sb)


def einsum(equation, *operands):
    """Einstein summation, reduced to diagonals, transposes, sums and (batched) matmuls:
    repeated indices of one operand take its diagonal, lone indices are summed, operands
    contract pairwise left to right (each pair one batched matmul), then permute to the
    output order.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.einsum("bij,bjk->bik", st.ones(2, 3, 4), st.ones(2, 4, 5)).shape
    sharded.Size([2, 3, 5])
    >>> st.linalg.einsum("ij->j", st.ones(3, 2)).tolist()
    [3.0, 3.0]
    >>> st.linalg.einsum("ii->", st.tensor([[1., 2.], [3., 4.]])).item()
    5.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [_t(o) for o in operands]
    subs, out = parse(equation, [t.ndim for t in ts])
    # torch returns a permuted view when one operand is only transposed, else a new tensor
    only_permuted = len(ts) == 1 and sorted(subs[0]) == sorted(out)
    ts, subs = map(list, zip(*[_diagonals(t, s, i) for i, (t, s) in enumerate(zip(ts, subs))]))
    size = sizes(subs, [t.shape for t in ts])
    for i in range(len(ts)):  # indices needed by no one else: sum them now
        others = out + "".join(s for j, s in enumerate(subs) if j != i)
        ts[i], subs[i] = _sum_out(ts[i], subs[i], others)
    cur, cs = ts[0], subs[0]
    for j in range(1, len(ts)):
        keep = out + "".join(subs[j + 1 :])
        cur, cs = _sum_out(cur, cs, keep + subs[j])
        b, bs = _sum_out(ts[j], subs[j], keep + cs)
        cur, cs = _contract(cur, cs, b, bs, keep)
    cur, cs = _sum_out(cur, cs, out)
    res = cur.permute([cs.index(c) for c in out]) if cs != out else cur
    if tuple(res.shape) != tuple(size[c] for c in out):  # a broadcast size-1 output index
        res = res.expand(tuple(size[c] for c in out))
    return res if only_permuted else res.contiguous()


def _diagonals(t, s, i):
    """Operand ``t`` (number ``i``, subscripts ``s``) with each repeated subscript replaced
    by the diagonal over its dims, kept at the first one (``'ii'`` -> ``'i'``)."""
    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        p = s.index(c)
        q = s.index(c, p + 1)
        if t.shape[p] != t.shape[q]:
            raise ShapeError(
                f"einsum(): subscript {c!r} is repeated for operand {i} but the sizes don't "
                f"match, {t.shape[q]} != {t.shape[p]}"
            )
        t, s = _diagonal(t, p, q), s[:q] + s[q + 1 :]
    return t, s


def _diagonal(t, p, q):
    """The diagonal of dims ``p < q`` at ``p`` (``q`` dropped): ``t`` where an identity mask
    is set, 0 elsewhere, summed over ``q``: elementwise ops and a sum, so any layout works
    and the gradient (the incoming one on the diagonal, 0 off it) comes from their rules.
    A ``where``, not a product with the mask: ``inf * 0`` off the diagonal would be NaN."""
    n = t.shape[p]
    dev = t.device if not t.device.startswith("mixed") else "cpu"
    shape = [n if d in (p, q) else 1 for d in range(t.ndim)]
    mask = apply("eye", placement((n, n), device=dev), D.bool_).reshape(shape)
    return t.where(mask, 0).sum(q).to(t.dtype)  # an integer sum widens; one term is exact


def _sum_out(t, s, keep):
    drop = [i for i, c in enumerate(s) if c not in keep]
    if not drop:
        return t, s
    return t.sum(drop), "".join(c for c in s if c in keep)


def _match(a, sa, b, sb):
    """``a`` with its size-1 dims expanded to ``b``'s size of the same index (to 0 too): the
    product's reshapes need equal sizes on both sides."""
    want = [b.shape[sb.index(c)] if c in sb and n == 1 else n for c, n in zip(sa, a.shape)]
    return a.expand(want) if want != list(a.shape) else a


def _contract(a, sa, b, sb, keep):
    batch, rows, k, cols = pair_plan(sa, sb, keep)
    a, b = _match(a, sa, b, sb), _match(b, sb, a, sa)
    sz = dict(zip(sa, a.shape))
    szb = dict(zip(sb, b.shape))
    am = a.permute([sa.index(c) for c in batch + rows + k])
    bm = b.permute([sb.index(c) for c in batch + k + cols])
    nr, nk, nc = (
        math.prod(sz[c] for c in rows),
        math.prod(sz[c] for c in k),
        math.prod(szb[c] for c in cols),
    )
    am = am.reshape([sz[c] for c in batch] + [nr, nk])
    bm = bm.reshape([szb[c] for c in batch] + [nk, nc])
    r = am @ bm
    r = r.reshape(list(r.shape[: len(batch)]) + [sz[c] for c in rows] + [szb[c] for c in cols])
    return r, "".join(batch + rows + cols)
