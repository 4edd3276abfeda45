"""FFT along one dim, the split one included: the ``fft1`` primitive and its planners.

``fft1`` runs one of NumPy's four 1-D transforms (``fft``, ``ifft``, ``rfft``, ``irfft``) along
``dim``, with optional conjugation of its input or output and an optional real part of the
output (what ``hfft``/``ihfft`` and the VJPs need). Where it runs:

- ``dim`` whole in every shard (not split, or replicated): one local transform per shard.
- ``dim`` split and the tensor has another dim: an all-to-all transpose (worker to worker,
  :func:`~sharded.core.dataflow.reshard`) to a layout that moves the cuts onto the largest
  other dim, local transforms, and the transpose back to the input's cuts (a dim whose length
  changes, such as rfft's ``n // 2 + 1``, is re-cut evenly over the same number of chunks).
- a 1-D tensor split along its only dim (complex transforms): the four-step algorithm. The
  length ``N = N1 * N2`` is viewed as an ``(N1, N2)`` matrix held by rows; a transpose to
  columns, ``N1``-point FFTs down the columns times the twiddles ``w^(k1 * n2)``, a transpose
  to rows, ``N2``-point FFTs along the rows, and a transpose to columns that each worker
  writes out as its contiguous chunk of the result (three all-to-alls, never a gather). A
  length whose ``N1`` is below the worker count (a prime: ``N1 = 1``) would leave workers
  idle, or one holding the whole line: Bluestein's chirp-z instead, a convolution by three
  four-step FFTs of a smooth length ``M >= 2N - 1``, cut evenly over the workers.

The public functions (:mod:`sharded.fft`) reduce every other case to these: a 1-D split
``rfft`` is a complex FFT cut to ``n // 2 + 1``; a 1-D split ``irfft`` builds the Hermitian
extension with ``flip``/``cat`` and takes the real part of a complex inverse FFT.

VJPs (torch's convention for complex gradients, ``dL/dRe + i dL/dIm``): the adjoint of a
complex transform is the opposite transform with the dual norm (``backward`` <-> ``forward``),
resized back to the input's length, real part for a real input; rfft's adjoint zero-extends
the gradient to ``n`` first; irfft's is an rfft of the gradient weighted by ``1, 2, ..., 2,
(1)`` (each interior bin appears twice in the Hermitian spectrum).
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as D
from ...core import dataflow
from ...core.dataflow import Operand
from ...core.dispatch import apply
from ...core.registry import kernel, primitive, vjp
from ...layout import Layout, split_sizes
from ...runtime.commands import Key
from . import kernels  # fft_of; Bluestein's chirp kernels, registered on import

__all__: list = []  # the public names live in :mod:`sharded.fft`

NORMS = ("backward", "forward", "ortho")
DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# ------------------------------------------------------------------------ pure rules
def out_len(kind: str, n: int) -> int:
    """Length of the transformed dim: rfft keeps the non-negative frequencies only."""
    return n // 2 + 1 if kind == "rfft" else n


def out_dtype(kind: str, dtype, real_out: bool = False):
    """torch's result dtype: complex of the input's precision (ints: the default complex);
    irfft and a real part give the matching real type."""
    c = D.to_complex(dtype)
    return D.to_real(c) if kind == "irfft" or real_out else c


def _spec(x, kind, n, dim, norm, conj_in=False, conj_out=False, real_out=False):
    shape = list(x.shape)
    shape[dim] = out_len(kind, n)
    return tuple(shape), out_dtype(kind, x.dtype, real_out)


def _cuts(n: int, k: int) -> tuple:
    """Boundaries of ``n`` cut into ``k`` nearly equal chunks (empty ones allowed)."""
    out = [0]
    for s in split_sizes(n, k):
        out.append(out[-1] + s)
    return tuple(out)


def is_whole(lay: Layout, dim: int) -> bool:
    """Whether every shard holds all of ``dim`` (a local transform suffices)."""
    return lay.is_replicated or lay.grid[dim] == 1


def resized(lay: Layout, dim: int, m: int) -> Layout:
    """``lay`` with ``dim`` of length ``m``: the same cuts when the length is unchanged, else
    the same number of chunks cut evenly (same workers)."""
    if m == lay.shape[dim]:
        return lay
    shape = lay.shape[:dim] + (m,) + lay.shape[dim + 1 :]
    bounds = list(lay.bounds)
    bounds[dim] = (0, m) if lay.is_replicated else _cuts(m, lay.grid[dim])
    return lay.replace(shape=shape, bounds=bounds)


def whole_layout(lay: Layout, dim: int) -> Layout:
    """A layout of the same shape and workers where ``dim`` is whole: its cuts move onto the
    largest other dim (the all-to-all transpose target)."""
    other = max((d for d in range(lay.ndim) if d != dim), key=lambda d: lay.shape[d])
    return gathered_onto(lay, [dim], other)


def gathered_onto(lay: Layout, dims, target: int) -> Layout:
    """``lay`` with every dim of ``dims`` whole, their cuts moved onto ``target`` (same
    shard count and workers)."""
    bounds = list(lay.bounds)
    bounds[target] = _cuts(lay.shape[target], math.prod(lay.grid[d] for d in [*dims, target]))
    for d in dims:
        bounds[d] = (0, lay.shape[d])
    return Layout.from_bounds(lay.shape, bounds, lay.workers)


def factor(n: int) -> tuple:
    """``(n1, n2)`` with ``n1 * n2 == n`` and ``n1`` the largest divisor up to ``sqrt(n)``.

    Examples
    --------
    >>> factor(1 << 24), factor(12), factor(7)
    ((4096, 4096), (3, 4), (1, 7))
    """
    for a in range(math.isqrt(n), 0, -1):
        if n % a == 0:
            return a, n // a
    return 1, n


def _free(ex, op) -> None:
    ex.free_pairs([(w, k) for (w, _, _), k in zip(op._layout.shards(), op._keys)])


# --------------------------------------------------------------------------- kernels
@kernel
def fft_block(xp, a, *, kind, n, axis, norm, cast, dtype, conj_in, conj_out, real_out):
    """One transform of a block whose ``axis`` is whole (:func:`.kernels.fft_of`)."""
    if a.shape[axis] == 0:  # NumPy's irfft pads an empty line with garbage; all zeros in torch
        shape = list(a.shape)
        shape[axis] = n // 2 + 1 if kind == "rfft" else n
        return xp.zeros(shape, dtype=dtype)
    a = a.astype(cast, copy=False)
    if conj_in:
        a = xp.conj(a)
    mod, kw = kernels.fft_of(xp)
    r = getattr(mod, kind)(a, n=n, axis=axis, norm=norm, **kw)
    if conj_out:
        r = xp.conj(r)
    if real_out:
        r = r.real
    return xp.ascontiguousarray(r.astype(dtype, copy=False))


def _unscaled(xp, a, axis, inverse):
    """An unnormalized transform (the four-step applies the norm once, at the end), in place:
    ``a`` is a block the planner assembled for this step alone, so SciPy (``overwrite_x``)
    may overwrite it instead of allocating a second one."""
    mod, kw = kernels.fft_of(xp)
    fn = mod.ifft if inverse else mod.fft
    if inverse:
        kw["norm"] = "forward"
    if xp is np and a.flags.writeable:
        kw["overwrite_x"] = True
    return fn(a, axis=axis, **kw)


@kernel
def fft4_columns(xp, a, *, cast, conj_in, inverse, big, c0):
    """Step 1 of four: ``N1``-point FFTs down the columns ``[c0, c0 + c)`` of the
    ``(N1, N2)`` matrix, times the twiddles ``exp(-+2 pi i k1 n2 / N)``."""
    a = a.astype(cast, copy=False)
    if conj_in:
        a = xp.conj(a)
    r = _unscaled(xp, a, 0, inverse)
    n1, c = r.shape
    if r.size == 0:
        return r
    sign = 2j * np.pi / big * (1 if inverse else -1)
    # w^(k1 * (c0 + j)) = w^(k1 * (c0 + jh * b)) * w^(k1 * jl): two small tables of exact
    # angles (exponents reduced mod N) instead of one exp per element; their product is
    # formed a few rows at a time, in cache, and applied in one pass over the block
    b = min(_TW_COLS, c)
    q = -(-c // b)
    k1 = np.arange(n1, dtype=np.int64)[:, None]
    hi = np.exp(sign * ((k1 * (c0 + np.arange(q, dtype=np.int64) * b)) % big))
    lo = np.exp(sign * ((k1 * np.arange(b, dtype=np.int64)) % big))
    hi, lo = xp.asarray(hi.astype(r.dtype)), xp.asarray(lo.astype(r.dtype))
    tw = xp.empty((_TW_ROWS, q, b), dtype=r.dtype)
    for i in range(0, n1, _TW_ROWS):
        h = min(_TW_ROWS, n1 - i)
        t = xp.multiply(hi[i : i + h, :, None], lo[i : i + h, None, :], out=tw[:h])
        r[i : i + h] *= t.reshape(h, q * b)[:, :c]
    return r


_TW_COLS, _TW_ROWS = 256, 32  # twiddle table widths; a product tile of 32 x c stays in cache
_TILE = 64  # transpose tile: a 64 x 64 complex128 tile in and out fits in L1/L2


@kernel
def fft4_rows(xp, a, *, inverse):
    """Step 3 of four: ``N2``-point FFTs along the rows (in place where NumPy allows)."""
    return _unscaled(xp, a, 1, inverse)


@kernel
def fft4_out(xp, a, *, scale, conj_out, real_out, dtype):
    """Step 4 of four: a column block ``(N1, c)`` of the result matrix is the contiguous
    chunk ``[c0 * N1, (c0 + c) * N1)`` of the transform (its transpose, flattened)."""
    if xp is np:
        r = np.empty(a.shape[::-1], dtype=a.dtype)
        for i in range(0, a.shape[0], _TILE):  # tile by tile: a plain a.T copy misses cache
            for j in range(0, a.shape[1], _TILE):
                r[j : j + _TILE, i : i + _TILE] = a[i : i + _TILE, j : j + _TILE].T
    else:  # a GPU transposes in one kernel
        r = xp.ascontiguousarray(a.T)
    if conj_out:
        r = xp.conj(r, out=r)
    if real_out:
        r = xp.ascontiguousarray(r.real)
    if scale != 1.0:
        r *= scale
    return r.reshape(-1).astype(dtype, copy=False)


# ------------------------------------------------------------------------- planners
def _local(ex, x, lay, dim, m, odt, params) -> Operand:
    out = resized(lay, dim, m)
    keys = []
    for s, (w, _, _) in enumerate(lay.shards()):
        k = ex.new_key()
        ex.submit(w, "fft_block", (Key(x._keys[s], None),), (k,), params, ("fft", s))
        keys.append(k)
    return Operand(out, odt, keys)


def _each(ex, op, lay, kernel_name, params_of, dtype) -> Operand:
    """One ``kernel_name`` command per shard of ``lay`` reading the same shard of ``op``."""
    keys = []
    for s, (w, offs, shp) in enumerate(lay.shards()):
        k = ex.new_key()
        ex.submit(w, kernel_name, (Key(op._keys[s], None),), (k,), params_of(offs, shp), ("fft", s))
        keys.append(k)
    return Operand(lay, dtype, keys)


def _four_step(ex, x, inverse, norm, conj_in, conj_out, real_out, odt, own=False) -> Operand:
    """A complex FFT of a split 1-D operand (see the module doc): three all-to-alls;
    ``own``: ``x`` is the caller's temporary, freed as soon as its data moved on."""
    lay = x._layout
    big = lay.shape[0]
    ws = lay.workers
    k = len(ws)
    n1, n2 = factor(big)
    cdt = D.to_complex(x._dtype)
    rows, cols = _cuts(n1, k), _cuts(n2, k)
    by_rows = Layout.from_bounds((n1, n2), [rows, (0, n2)], ws)
    by_cols = Layout.from_bounds((n1, n2), [(0, n1), cols], ws)
    flat = Layout.from_bounds((big,), [tuple(b * n2 for b in rows)], ws)
    src = x if lay == flat else dataflow.reshard(ex, x, flat)
    a = _each(ex, src, by_rows, "reshape", lambda o, s: {"shape": s}, x._dtype)
    b = dataflow.reshard(ex, a, by_cols)
    _free(ex, a)
    if src is not x:
        _free(ex, src)
    if own:
        _free(ex, x)
    params = {"cast": cdt.np_str, "conj_in": conj_in, "inverse": inverse, "big": big}
    c = _each(ex, b, by_cols, "fft4_columns", lambda o, s: {**params, "c0": o[1]}, cdt)
    _free(ex, b)
    d = dataflow.reshard(ex, c, by_rows)
    _free(ex, c)
    e = _each(ex, d, by_rows, "fft4_rows", lambda o, s: {"inverse": inverse}, cdt)
    _free(ex, d)
    f = dataflow.reshard(ex, e, by_cols)
    _free(ex, e)
    done = Layout.from_bounds((big,), [tuple(b * n1 for b in cols)], ws)
    fin = {
        "scale": _scale(norm, inverse, big),
        "conj_out": conj_out,
        "real_out": real_out,
        "dtype": odt.np_str,
    }
    out = _each(ex, f, done, "fft4_out", lambda o, s: fin, odt)
    _free(ex, f)
    if done == lay:
        return out
    back = dataflow.reshard(ex, out, lay)  # the input's own cuts (moves chunk edges only)
    _free(ex, out)
    return back


def _scale(norm, inverse, n):
    return {
        "backward": 1.0 / n if inverse else 1.0,
        "ortho": 1.0 / math.sqrt(n),
        "forward": 1.0 if inverse else 1.0 / n,
    }[norm]


def conv_len(n: int, k: int) -> int:
    """The convolution length of Bluestein's FFT for ``n`` points over ``k`` workers: the
    least ``2^a 3^b 5^c >= 2n - 1`` (pocketfft's fast radices; a power of two can be twice
    as long) whose four-step rows ``factor(m)[0]`` reach every worker.

    Examples
    --------
    >>> conv_len(1009, 2), conv_len(4099, 5), conv_len(65537, 3)
    (2025, 8640, 131220)
    """
    lo, out = 2 * n - 1, []
    for b in range(lo.bit_length() + 1):
        for c in range(lo.bit_length() + 1):
            m = 3**b * 5**c
            if m > 2 * lo:
                break
            out.append(m << max(0, -(-lo // m) - 1).bit_length())
    return next(m for m in sorted(out) if factor(m)[0] >= min(k, math.isqrt(m)))


def _bluestein(ex, x, inverse, norm, conj_in, conj_out, real_out, odt) -> Operand:
    """A complex FFT of a split 1-D operand whose length has no factor to spread over the
    workers (a prime): Bluestein's convolution (:mod:`.kernels`) by three four-step FFTs
    of a smooth length ``M >= 2N - 1`` (:func:`conv_len`), every block cut evenly over the
    same workers. An inverse transform is the conjugate of the forward one of the conjugate.
    Peak per worker: about three ``M / k`` blocks (the filter's spectrum, the data's and
    a four-step's transpose buffers)."""
    lay = x._layout
    n, ws = lay.shape[0], lay.workers
    m = conv_len(n, len(ws))
    cdt = D.to_complex(x._dtype)
    pb = _cuts(m, len(ws))
    padded = Layout.from_bounds((m,), [pb], ws)
    head = Layout.from_bounds((n,), [tuple(min(b, n) for b in pb)], ws)  # its first n
    keys = []  # the filter's spectrum first: the data's is made next to it, not before
    for s, (w, offs, shp) in enumerate(padded.shards()):
        keys.append(ex.new_key())
        prm = {"first": offs[0], "count": shp[0], "n": n, "m": m, "dtype": cdt.np_str}
        ex.submit(w, "chirp_filter", (), (keys[-1],), prm, ("fft", s))
    fb = Operand(padded, cdt, keys)
    fb = _four_step(ex, fb, False, "backward", False, False, False, cdt, own=True)
    src = x if lay == head else dataflow.reshard(ex, x, head)
    prm = {"n": n, "cast": cdt.np_str, "conj": conj_in != inverse}
    a = _each(ex, src, padded, "chirp_in", lambda o, s: {**prm, "first": o[0], "size": s[0]}, cdt)
    if src is not x:
        _free(ex, src)
    fa = _four_step(ex, a, False, "backward", False, False, False, cdt, own=True)
    keys = []
    for s, (w, _, _) in enumerate(padded.shards()):
        keys.append(ex.new_key())
        pair = (Key(fa._keys[s], None), Key(fb._keys[s], None))
        ex.submit(w, "chirp_mul", pair, (keys[-1],), {}, ("fft", s))
    _free(ex, fa)
    _free(ex, fb)
    conv = Operand(padded, cdt, keys)
    conv = _four_step(ex, conv, True, "backward", False, False, False, cdt, own=True)
    y = _each(ex, conv, head, "chirp_head", lambda o, s: {"keep": s[0]}, cdt)
    _free(ex, conv)
    if head != lay:
        y, old = dataflow.reshard(ex, y, lay), y
        _free(ex, old)
    fin = {"n": n, "scale": _scale(norm, inverse, n), "conj_out": conj_out != inverse}
    fin.update(real_out=real_out, dtype=odt.np_str)
    out = _each(ex, y, lay, "chirp_out", lambda o, s: {**fin, "first": o[0]}, odt)
    _free(ex, y)
    return out


@primitive(
    "fft1",
    kernels=[fft_block, fft4_columns, fft4_rows, fft4_out, "reshape"]
    + ["chirp_in", "chirp_filter", "chirp_mul", "chirp_head", "chirp_out"],
    out_spec=_spec,
    kind="fft",
)
def _fft1_plan(ex, x, kind, n, dim, norm, conj_in=False, conj_out=False, real_out=False):
    """One 1-D transform along ``dim`` (see the module doc for where it runs)."""
    lay = x._layout
    m = out_len(kind, n)
    odt = out_dtype(kind, x._dtype, real_out)
    cast = D.to_real(D.to_complex(x._dtype)) if kind == "rfft" else D.to_complex(x._dtype)
    params = dict(
        kind=kind,
        n=n,
        axis=dim,
        norm=norm,
        cast=cast.np_str,
        dtype=odt.np_str,
        conj_in=conj_in,
        conj_out=conj_out,
        real_out=real_out,
    )
    if is_whole(lay, dim):
        return _local(ex, x, lay, dim, m, odt, params)
    if lay.ndim == 1:  # the public functions send only length-preserving complex ones here
        inverse = kind == "ifft"
        if factor(n)[0] < len(lay.workers) and n >= 16:  # rows for only some workers
            return _bluestein(ex, x, inverse, norm, conj_in, conj_out, real_out, odt)
        return _four_step(ex, x, inverse, norm, conj_in, conj_out, real_out, odt)
    whole = whole_layout(lay, dim)
    xr = dataflow.reshard(ex, x, whole)
    y = _local(ex, xr, whole, dim, m, odt, params)
    _free(ex, xr)
    out = dataflow.reshard(ex, y, resized(lay, dim, m))
    _free(ex, y)
    return out


def resize(t, dim: int, m: int):
    """``t`` cut or zero-padded at the end of ``dim`` to length ``m`` (NumPy's ``n=``)."""
    have = t.shape[dim]
    if have == m:
        return t
    if have > m:
        return t.narrow(dim, 0, m)
    pad = apply("full", resized(t.layout, dim, m - have), 0, t.dtype)
    return apply("cat", t, pad, dim=dim)


def hermitian_weights(n: int, h: int, ndim: int, dim: int, dtype):
    """``1, 2, ..., 2`` over the ``h`` bins of an ``n``-point real spectrum (the last one 1
    for even ``n``), shaped to broadcast along ``dim``."""
    w = np.full(h, 2.0, dtype=dtype.np)
    w[0] = 1.0
    if n % 2 == 0 and h > 1:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[dim] = h
    return w.reshape(shape)


@vjp("fft1")
def _fft1_vjp(gs, node):
    # The engine carries the conjugate of torch's gradient (see sharded.autograd), so each
    # rule is conj . (torch's adjoint) . conj: the conj flags of the adjoint are flipped.
    x, kind, n, dim, norm, conj_in, conj_out, real_out = node.args  # always given in full
    g, m, dual = gs[0], x.shape[dim], DUAL[norm]
    real_in = not x.dtype.is_complex
    if kind in ("fft", "ifft"):
        back = "ifft" if kind == "fft" else "fft"
        v = transform(g, back, n, dim, dual, not conj_out, not conj_in, real_in)
    elif kind == "rfft":  # zero-extend to n, adjoint of the full transform, real part
        v = transform(resize(g, dim, n), "ifft", n, dim, dual, not conj_out, False, True)
    else:  # irfft: each interior bin stands for two in the Hermitian spectrum
        h = n // 2 + 1
        v = transform(g, "rfft", n, dim, dual, False, not conj_in, False)
        v = v * hermitian_weights(n, h, v.ndim, dim, D.to_real(v.dtype))
    return (resize(v, dim, m),) + (None,) * (len(node.args) - 1)


# ------------------------------------------------------------ n-D complex transforms
@kernel
def fftn_block(xp, a, *, kind, s, axes, norm, cast, dtype, real_out):
    """One n-D transform over ``axes`` (all whole in the block)."""
    mod, kw = kernels.fft_of(xp)
    fn = mod.fftn if kind == "fft" else mod.ifftn
    if any(a.shape[d] == 0 for d in axes):  # a zero-padded empty line: zeros (as torch)
        shape = list(a.shape)
        for d, m in zip(axes, s):
            shape[d] = m
        return xp.zeros(shape, dtype=dtype)
    r = fn(a.astype(cast, copy=False), s=s, axes=axes, norm=norm, **kw)
    if real_out:
        r = r.real
    return xp.ascontiguousarray(r.astype(dtype, copy=False))


def _nspec(x, kind, sizes, dims, norm, real_out=False):
    shape = list(x.shape)
    for d, n in zip(dims, sizes):
        shape[d] = n
    return tuple(shape), out_dtype(kind, x.dtype, real_out)


@primitive("fftn", kernels=[fftn_block], out_spec=_nspec, kind="fft")
def _fftn_plan(ex, x, kind, sizes, dims, norm, real_out=False):
    """A complex transform over several dims of a tensor of two or more dims: the dims that
    are whole go together in one local pass; then the cuts of the rest move (one all-to-all)
    onto a dim already done (or the largest one left), and so on; a last all-to-all returns
    the input's cuts."""
    cdt = D.to_complex(x._dtype)
    odt = out_dtype(kind, x._dtype, real_out)
    todo = dict(zip(dims, sizes))
    cur, owned = x, False
    while todo:
        lay = cur._layout
        group = [d for d in todo if is_whole(lay, d)]
        if not group:
            free = [d for d in range(lay.ndim) if d not in todo] or list(todo)
            t = max(free, key=lambda d: lay.shape[d])
            moved = dataflow.reshard(ex, cur, gathered_onto(lay, [d for d in todo if d != t], t))
            if owned:
                _free(ex, cur)
            cur, owned = moved, True
            continue
        last = len(group) == len(todo)
        out, dt = lay, odt if last else cdt
        for d in group:
            out = resized(out, d, todo.pop(d))
        params = dict(
            kind=kind,
            s=[out.shape[d] for d in group],
            axes=group,
            norm=norm,
            cast=cdt.np_str,
            dtype=dt.np_str,
            real_out=real_out and last,
        )
        nxt = _each(ex, cur, lay, "fftn_block", lambda o, s, p=params: p, dt)
        nxt = Operand(out, dt, nxt._keys)
        if owned:
            _free(ex, cur)
        cur, owned = nxt, True
    final = x._layout
    for d, n in zip(dims, sizes):
        final = resized(final, d, n)
    if cur._layout == final:
        return cur
    back = dataflow.reshard(ex, cur, final)
    _free(ex, cur)
    return back


@vjp("fftn")
def _fftn_vjp(gs, node):
    # torch's adjoint is the inverse transform under the dual norm; conjugated on both sides
    # (the engine's convention, see sharded.autograd) it is the same transform and norm,
    # the DFT matrix being symmetric.
    x, kind, sizes, dims, norm, real_out = node.args  # always given in full
    v = apply("fftn", gs[0], kind, sizes, dims, norm, not x.dtype.is_complex)
    for d in dims:
        v = resize(v, d, x.shape[d])
    return (v,) + (None,) * 5


# --------------------------------------------------- the 1-D split cases, composed
@kernel
def fft_conj(xp, a):
    return xp.conj(a)


@primitive("fft_conj", kernels=[fft_conj], out_spec=lambda x: (tuple(x.shape), x.dtype))
def _conj_plan(ex, x):
    """Complex conjugate (private: the Hermitian extension of a split irfft needs it)."""
    return _each(ex, x, x._layout, "fft_conj", lambda o, s: {}, x._dtype)


@vjp("fft_conj")
def _conj_vjp(gs, node):
    return (apply("fft_conj", gs[0]),)


def _even(t, like):
    """``t`` (1-D, a narrowed ``like``) cut evenly into ``like``'s chunks and workers, so that
    a cut spectrum keeps no idle shards."""
    lay = like.layout
    if lay.is_replicated:
        return t
    want = Layout.from_bounds(t.shape, [_cuts(t.shape[0], lay.grid[0])], lay.workers)
    return t if want == t.layout else apply("reshard", t, want)


def transform(x, kind, n, dim, norm, conj_in=False, conj_out=False, real_out=False):
    """``fft1`` of ``x`` for any layout: a 1-D tensor split along its dim is reduced to
    length-preserving complex transforms (four-step) and tensor ops."""
    m = x.shape[dim]
    if is_whole(x.layout, dim) or x.ndim > 1:
        return apply("fft1", x, kind, n, dim, norm, conj_in, conj_out, real_out)
    if kind in ("fft", "ifft"):
        return apply("fft1", resize(x, 0, n), kind, n, 0, norm, conj_in, conj_out, real_out)
    if kind == "rfft":
        y = apply("fft1", resize(x, 0, n), "fft", n, 0, norm, False, conj_out, False)
        return _even(y.narrow(0, 0, n // 2 + 1), y)
    # irfft: Y[k] = y[k] for k < h, conj(y[n - k]) above; the real part of its inverse FFT
    h = n // 2 + 1
    y = resize(x, 0, h) if m != h else x
    if conj_in:
        y = apply("fft_conj", y)
    if n - h:
        tail = apply("fft_conj", y.narrow(0, 1, n - h).flip(0))
        y = apply("cat", y, tail, dim=0)
    return apply("fft1", y, "ifft", n, 0, norm, False, conj_out, True)
