"""Property test: random op sequences on random shapes, dtypes and layouts against NumPy.

Each program starts from a random tensor (0-d and empty dims included; bool, uint8, int32,
int64, float32, float64; one shard, uneven or empty chunks, block grids, replicated) and applies
1-6 ops (elementwise arithmetic with tensors or Python scalars, comparisons, reductions with
dims, reshape/transpose/slicing, matmul of compatible shapes). After every step the result's
shape, dtype and values are compared with a NumPy reference that applies torch's promotion
rules, written out below (the reference does not call sharded's dtype code). Fixed seed,
bounded example count.
"""

from __future__ import annotations

import numpy as np

import sharded as st

SEED = 12
N_PROGRAMS = 400  # about 15 s on the in-process executor (40 seeds x 200 pass)

DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]


# ------------------------------------------------------------- torch's promotion, by hand
def _cat(dt) -> int:
    """0 bool, 1 integer, 2 floating."""
    k = np.dtype(dt).kind
    return 0 if k == "b" else 2 if k == "f" else 1


def _promote(a, b):
    """torch.promote_types: across categories the higher one's dtype wins unchanged."""
    ca, cb = _cat(a), _cat(b)
    if ca != cb:
        return np.dtype(a if ca > cb else b)
    return np.promote_types(a, b)


def _scalar_dtype(s):
    if isinstance(s, bool):
        return np.dtype(bool)
    return np.dtype(np.int64) if isinstance(s, int) else np.dtype(np.float32)


def result_type(dims=(), zero=(), scalars=()):
    """torch.result_type: dimensioned tensors decide; 0-d tensors, then Python scalars, only
    where they raise the category."""

    def top(dts):
        out = None
        for d in dts:
            out = d if out is None else _promote(out, d)
        return out

    def combine(hi, lo):
        if hi is None:
            return lo
        if lo is None or _cat(hi) == 2:
            return hi
        if _cat(hi) == 0 or _cat(lo) == 2:
            return _promote(hi, lo)
        return hi

    return combine(top(dims), combine(top(zero), top([_scalar_dtype(s) for s in scalars])))


def _wrap(s, dt):
    """A Python int as torch converts it against an integer operand (modulo 2**bits)."""
    if isinstance(s, int) and not isinstance(s, bool) and np.dtype(dt).kind in "iu":
        return np.array(s, np.int64).astype(dt)
    return np.asarray(s).astype(dt)


# ------------------------------------------------------------------------- generators
def rand_array(rng, shape, dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind == "u":
        return rng.integers(0, 10, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-5, 6, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def rand_shape(rng):
    nd = int(rng.integers(0, 4))
    return tuple(
        int(rng.choice([0, 1, 2, 3, 4, 5, 7])) if rng.random() < 0.15 else int(rng.integers(1, 6))
        for _ in range(nd)
    )


def rand_place(rng, shape):
    """Placement keywords: one shard, split (even, uneven, with empty chunks), a block grid,
    replicated."""
    if not shape or rng.random() < 0.15:
        return dict(layout=st.Layout.replicated()) if rng.random() < 0.5 else dict(shards=1)
    r = rng.random()
    d = int(rng.integers(0, len(shape)))
    if r < 0.35:
        return dict(shards=int(rng.integers(1, 6)), dim=d)
    if r < 0.7:  # explicit chunk sizes, some of them empty
        k = int(rng.integers(1, 5))
        cuts = np.sort(rng.integers(0, shape[d] + 1, k - 1))
        sizes = np.diff(np.concatenate([[0], cuts, [shape[d]]])).astype(int)
        return dict(layout=st.Layout(chunks=tuple(int(s) for s in sizes), dim=d))
    if len(shape) >= 2:
        grid = tuple(int(rng.integers(1, min(n, 3) + 1)) if n else 1 for n in shape)
        return dict(layout=st.Layout.block(grid))
    return dict(layout=st.Layout.replicated())


def rand_tensor(rng, shape, dt):
    a = rand_array(rng, shape, dt)
    return st.from_numpy(a, **rand_place(rng, shape)), a


def rand_scalar(rng, dt):
    r = rng.random()
    if r < 0.2:
        return bool(rng.random() < 0.5)
    if r < 0.6:
        return int(rng.integers(-3, 6))  # negative ints wrap on uint8 tensors, as torch
    return float(np.round(rng.standard_normal(), 3))


# ------------------------------------------------------------------------------- ops
def _tensor_or(f, x, y, bound):
    """``f(x, y)``; for a Python scalar ``y`` the clamp that torch offers instead (its
    ``maximum``/``minimum`` refuse numbers)."""
    return f(x, y) if isinstance(y, st.ShardedTensor) else x.clamp(**{bound: y})


BINARY = {
    "add": (lambda x, y: x + y, np.add),
    "mul": (lambda x, y: x * y, np.multiply),
    "sub": (lambda x, y: x - y, np.subtract),
    "maximum": (lambda x, y: _tensor_or(st.maximum, x, y, "min"), np.maximum),
    "minimum": (lambda x, y: _tensor_or(st.minimum, x, y, "max"), np.minimum),
}
COMPARE = {
    "gt": (lambda x, y: x > y, np.greater),
    "eq": (lambda x, y: x == y, np.equal),
    "le": (lambda x, y: x <= y, np.less_equal),
}


def _other(rng, x):
    """A second operand for ``x``: a Python scalar or a tensor broadcastable with it."""
    if rng.random() < 0.4:
        s = rand_scalar(rng, x.dtype)
        return s, s
    shape = tuple(x.shape)
    if shape and rng.random() < 0.4:  # a trailing slice, some dims 1: broadcasting
        shape = tuple(
            1 if rng.random() < 0.3 else n for n in shape[int(rng.integers(0, len(shape))) :]
        )
    return rand_tensor(rng, shape, rng.choice(DTYPES))


def step(rng, x, a):
    """One random op applied to tensor ``x`` and its reference ``a``: returns
    ``(name, result, reference)`` or None where the op does not apply."""
    kind = rng.choice(["binary", "binary", "compare", "div", "reduce", "view", "matmul", "unary"])
    if kind in ("binary", "compare", "div"):
        y, b = _other(rng, x)
        is_t = isinstance(y, st.ShardedTensor)
        dims, zero = [], []
        for d in [a, b] if is_t else [a]:
            (dims if d.ndim else zero).append(d.dtype)
        rt = result_type(dims, zero, () if is_t else (y,))
        if kind == "div":
            out_dt = rt if _cat(rt) == 2 else np.dtype(np.float32)
            with np.errstate(all="ignore"):
                ref = np.true_divide(
                    a.astype(out_dt), _wrap(b, out_dt) if not is_t else b.astype(out_dt)
                )
            return "div", x / y, ref.astype(out_dt)
        name = rng.choice(list(BINARY if kind == "binary" else COMPARE))
        f, npf = (BINARY if kind == "binary" else COMPARE)[name]
        if name == "sub" and (
            rt == np.bool_ or a.dtype == np.bool_ or np.asarray(b).dtype == np.bool_
        ):
            return None  # torch refuses - with a bool operand (tested in test_arithmetic)
        if name in ("maximum", "minimum") and not is_t and rt == np.bool_:
            return None  # torch's clamp refuses a bool result (tested in test_selection)
        bb = b.astype(rt) if is_t else _wrap(b, rt)
        with np.errstate(all="ignore"):
            ref = npf(a.astype(rt), bb)
        return name, f(x, y), ref.astype(rt if kind == "binary" else bool)
    if kind == "reduce":
        nd = a.ndim
        dim = int(rng.integers(-max(nd, 1), max(nd, 1))) if rng.random() < 0.8 else None
        axis = None if dim is None or nd == 0 else dim % nd
        name = rng.choice(["sum", "amax", "mean", "prod", "any"])
        keep = bool(rng.random() < 0.3)
        if name == "amax" and a.size == 0:
            return None  # no identity: torch raises too
        if name == "mean" and _cat(a.dtype) != 2:
            return None
        kw = {} if dim is None else {"dim": dim, "keepdim": keep}
        keep_np = keep and dim is not None and nd > 0
        np_kw = dict(axis=axis, keepdims=keep_np)
        if name in ("sum", "prod"):
            acc = a.dtype if _cat(a.dtype) == 2 else np.dtype(np.int64)
            ref = getattr(np, name)(a.astype(acc), **np_kw).astype(acc)
        elif name == "amax":
            ref = np.amax(a, **np_kw)
        elif name == "mean":
            with np.errstate(all="ignore"):
                ref = np.mean(a, **np_kw).astype(a.dtype)
        else:
            ref = np.any(a, **np_kw).astype(np.uint8 if a.dtype == np.uint8 else bool)
        r = getattr(x, name)(**kw) if name != "amax" or dim is not None else x.amax()
        return name, r, np.asarray(ref)
    if kind == "view":
        nd = a.ndim
        v = rng.choice(["reshape", "transpose", "slice"])
        if v == "reshape":
            return "reshape", x.reshape(-1), a.reshape(-1)
        if v == "transpose" and nd >= 2:
            return "transpose", x.transpose(0, 1), a.swapaxes(0, 1)
        if v == "slice" and nd >= 1:
            lo = int(rng.integers(0, a.shape[0] + 1))
            return "slice", x[lo:], a[lo:]
        return None
    if kind == "matmul":
        # 1-D and 2-D operands only: size-0 batch dims are issue 12's matmul item (another fix)
        if _cat(a.dtype) != 2 or a.ndim not in (1, 2):
            return None
        k = a.shape[-1]
        m = int(rng.integers(1, 4))
        y, b = rand_tensor(rng, (k, m), a.dtype)
        with np.errstate(all="ignore"):
            return "matmul", x @ y, a @ b
    # unary
    name = rng.choice(["neg", "abs", "exp"])
    if name == "neg":
        if a.dtype == np.bool_:
            return None  # torch refuses -bool
        with np.errstate(all="ignore"):
            return "neg", -x, np.negative(a)
    if name == "abs":
        if a.dtype == np.bool_:
            return None
        return "abs", x.abs(), np.abs(a)
    out_dt = a.dtype if _cat(a.dtype) == 2 else np.dtype(np.float32)
    with np.errstate(all="ignore"):
        return "exp", x.exp(), np.exp(a.astype(out_dt)).astype(out_dt)


def check(name, t, ref, history):
    ref = np.asarray(ref)
    where = f"after {' -> '.join(history)}"
    assert tuple(t.shape) == ref.shape, f"{where}: shape {tuple(t.shape)} != {ref.shape}"
    assert t.dtype.np == ref.dtype, f"{where}: dtype {t.dtype.name} != {ref.dtype}"
    got = t.numpy()
    if ref.dtype.kind == "f":
        # float32 steps (matmul sums in another order) may feed a float64 result
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=where)


def run_programs(n, seed=SEED):
    """Run ``n`` random programs; fails naming the op sequence of the first difference."""
    rng = np.random.default_rng(seed)
    ops = 0
    for p in range(n):
        shape = rand_shape(rng)
        dt = rng.choice(DTYPES)
        x, a = rand_tensor(rng, shape, dt)
        history = [f"program {p}: {dt}{list(shape)}"]
        for _ in range(int(rng.integers(1, 7))):
            out = step(rng, x, a)
            if out is None:
                continue
            name, x, a = out
            history.append(name)
            try:
                check(name, x, a, history)
            except st.OpFailed as e:
                raise AssertionError(f"after {' -> '.join(history)}: {e}") from e
            ops += 1
            if x.numel() > 4096:  # keep programs small
                break
    return ops


def test_random_programs_match_numpy_with_torch_rules():
    assert run_programs(N_PROGRAMS) > N_PROGRAMS
