"""Property test of bad calls: each raises a typed error naming the values, and changes nothing.

Hypothesis draws a kind of mistake (shapes that do not broadcast or multiply, in-place results
of the wrong shape or dtype, bitwise ops on floats, dims and indices out of range, bad shard
counts, layouts that do not fit, unknown devices and dtypes, ragged data, out-of-range
gather/scatter indices, ...) and the operands it is made with (random shapes, dtypes and
placements: one shard, even or uneven or empty chunks, block grids, replicated).  For every
call:

* the error is a :class:`sharded.ShardedError` from ``sharded.errors`` that is also the builtin
  torch users catch for it (``ValueError``, ``TypeError``, ``IndexError``, ``RuntimeError``);
* its message names the offending values (a shape, a dim, an index, a dtype, a device...);
* every operand keeps its shape, dtype, layout and values, and the session goes on working
  (each operand is read again through a new op, and a fresh op runs).

``run_bad_calls(n)`` is shared with the Ray mirror (``tests/ray/test_bad_calls.py``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as hs

import sharded as st

N_EXAMPLES = 520
DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]
INTS = ["uint8", "int32", "int64"]
FLOATS = ["float32", "float64"]


# ------------------------------------------------------------------------------ operands
@hs.composite
def shapes(draw, min_dims=1, max_dims=3, min_size=1):
    n = draw(hs.integers(min_dims, max_dims))
    return tuple(draw(hs.integers(min_size, 5)) for _ in range(n))


@hs.composite
def placements(draw, shape):
    """Placement keywords: shards over a dim, explicit (uneven, empty) chunks, a block grid,
    replicated, one shard."""
    kind = draw(hs.sampled_from(["shards", "chunks", "block", "replicated", "one"]))
    if not shape or kind == "one":
        return {"shards": 1}
    d = draw(hs.integers(0, len(shape) - 1))
    if kind == "shards":
        return {"shards": draw(hs.integers(1, 5)), "dim": d}
    if kind == "chunks":
        cuts = sorted(draw(hs.lists(hs.integers(0, shape[d]), max_size=3)))
        sizes = np.diff([0, *cuts, shape[d]])
        return {"layout": st.Layout(chunks=tuple(int(s) for s in sizes), dim=d)}
    if kind == "block" and len(shape) >= 2:
        return {"layout": st.Layout.block(tuple(draw(hs.integers(1, min(n, 2))) for n in shape))}
    return {"layout": st.Layout.replicated()}


def _values(rng, shape, dt):
    kind = np.dtype(dt).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "u":
        return rng.integers(0, 10, shape).astype(dt)
    if kind == "i":
        return rng.integers(-5, 6, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


@hs.composite
def tensors(draw, shape=None, dtypes=DTYPES):
    shape = draw(shapes()) if shape is None else tuple(shape)
    dt = draw(hs.sampled_from(dtypes))
    a = _values(np.random.default_rng(draw(hs.integers(0, 2**16))), shape, dt)
    return st.from_numpy(a, **draw(placements(shape)))


def _broken(draw, shape):
    """A shape that does not broadcast against ``shape`` (some dim differs, neither is 1)."""
    out = list(shape)
    d = draw(hs.integers(0, len(shape) - 1))
    out[d] = draw(hs.sampled_from([n for n in (2, 3, 4, 6) if n != shape[d]]))
    if shape[d] == 1:  # a 1 would broadcast: make it a 7
        shape = tuple(7 if i == d else n for i, n in enumerate(shape))
    return tuple(shape), tuple(out)


# ------------------------------------------------------------------------------ the cases
# Each case draws its operands and returns (call, operands, expected error class, builtin,
# the strings the message must contain).
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def broadcast(draw):
    a_shape, b_shape = _broken(draw, draw(shapes()))
    a, b = draw(tensors(a_shape, FLOATS)), draw(tensors(b_shape, FLOATS))
    op = draw(hs.sampled_from(["add", "sub", "mul", "maximum", "eq", "lt", "where", "pow"]))
    if op == "where":
        call = lambda: st.where(a > 0, a, b)  # noqa: E731
    else:
        call = lambda: getattr(st, op)(a, b)  # noqa: E731
    return call, [a, b], st.ShapeError, ValueError, [str(a_shape), str(b_shape)]


@case
def inplace_shape(draw):
    small = draw(shapes(max_dims=2))
    big = (draw(hs.integers(2, 4)), *small)
    a, b = draw(tensors(small, FLOATS)), draw(tensors(big, FLOATS))
    op = draw(hs.sampled_from(["add_", "mul_", "sub_", "copy_", "maximum_"]))
    call = lambda: getattr(a, op)(b)  # noqa: E731
    return call, [a, b], st.ShapeError, ValueError, [str(small), str(big)]


@case
def inplace_dtype(draw):
    shape = draw(shapes())
    a = draw(tensors(shape, ["bool", *INTS]))
    b = draw(hs.sampled_from([1.5, -0.25])) if draw(hs.booleans()) else draw(tensors(shape, FLOATS))
    op = draw(hs.sampled_from(["add_", "mul_", "sub_"]))
    if a.dtype == st.bool and op == "sub_":
        op = "add_"
    call = lambda: getattr(a, op)(b)  # noqa: E731
    return (
        call,
        [a] + ([b] if isinstance(b, st.ShardedTensor) else []),
        st.DTypeError,
        TypeError,
        [a.dtype.name],
    )


@case
def bitwise_float(draw):
    shape = draw(shapes())
    a, b = draw(tensors(shape, FLOATS)), draw(tensors(shape, INTS))
    op = draw(hs.sampled_from(["and", "or", "xor", "invert", "lshift"]))
    calls = {
        "and": lambda: a & b,
        "or": lambda: b | a,
        "xor": lambda: st.bitwise_xor(a, b),
        "invert": lambda: ~a,
        "lshift": lambda: st.bitwise_left_shift(a, 1),
    }
    return calls[op], [a, b], st.DTypeError, TypeError, [a.dtype.name]


@case
def matmul_inner(draw):
    m, k, n = (draw(hs.integers(1, 5)) for _ in range(3))
    k2 = draw(hs.sampled_from([j for j in range(1, 7) if j != k]))
    a, b = draw(tensors((m, k), FLOATS)), draw(tensors((k2, n), FLOATS))
    return lambda: a @ b, [a, b], st.ShapeError, ValueError, [f"{m}x{k}", f"{k2}x{n}"]


@case
def reshape_numel(draw):
    a = draw(tensors())
    numel = int(np.prod(a.shape))
    shape = (numel + draw(hs.integers(1, 3)), *draw(shapes(0, 1)))
    op = draw(hs.sampled_from(["reshape", "view"]))
    call = lambda: getattr(a, op)(shape)  # noqa: E731
    return call, [a], st.ShapeError, ValueError, [str(list(shape)), f"size {numel}"]


DIM_OPS = [
    "sum",
    "amax",
    "argmax",
    "softmax",
    "cumsum",
    "flip",
    "squeeze",
    "unsqueeze",
    "sort",
    "transpose",
    "narrow",
    "select",
    "reshard",
    "cat",
    "roll",
]


@case
def dim_out_of_range(draw):
    a = draw(tensors(dtypes=FLOATS))
    op = draw(hs.sampled_from(DIM_OPS))
    nd = a.ndim + (op == "unsqueeze")
    dim = draw(hs.sampled_from([nd, nd + 1, nd + 3, -nd - 1, -nd - 4]))
    calls = {
        "softmax": lambda: st.softmax(a, dim),
        "flip": lambda: a.flip(dim),
        "transpose": lambda: a.transpose(0, dim),
        "narrow": lambda: a.narrow(dim, 0, 1),
        "select": lambda: a.select(dim, 0),
        "reshard": lambda: a.reshard(dim=dim),
        "cat": lambda: st.cat([a, a], dim=dim),
        "roll": lambda: a.roll(1, dims=dim),
    }
    call = calls.get(op, lambda: getattr(a, op)(dim))
    return call, [a], st.DimError, IndexError, [f"dim {dim}"]


@case
def index_out_of_range(draw):
    a = draw(tensors())
    d = draw(hs.integers(0, a.ndim - 1))
    size = a.shape[d]
    i = draw(hs.sampled_from([size, size + 2, -size - 1, -size - 5]))
    key = (slice(None),) * d + (i,)
    kind = draw(hs.sampled_from(["get", "set", "select"]))
    calls = {
        "get": lambda: a[key],
        "set": lambda: a.__setitem__(key, 0),
        "select": lambda: a.select(d, i),
    }
    return calls[kind], [a], st.IndexOutOfRange, IndexError, [f"index {i}", f"size {size}"]


@case
def too_many_indices(draw):
    a = draw(tensors())
    key = (0,) * (a.ndim + draw(hs.integers(1, 2)))
    return lambda: a[key], [a], st.IndexOutOfRange, IndexError, [f"dimension {a.ndim}"]


@case
def routed_index(draw):
    a = draw(tensors(draw(shapes(min_dims=2, max_dims=2, min_size=2)), FLOATS))
    d = draw(hs.integers(0, 1))
    size = a.shape[d]
    bad = draw(hs.sampled_from([size, size + 3, -size - 1]))
    op = draw(hs.sampled_from(["index_select", "gather", "scatter", "index_add"]))
    if op == "index_select":
        idx = st.tensor([0, bad], shards=draw(hs.integers(1, 2)))
        call = lambda: a.index_select(d, idx)  # noqa: E731
    else:
        shape = list(a.shape)
        shape[d] = 1
        raw = np.zeros(shape, np.int64)
        raw.flat[-1] = bad
        idx = st.from_numpy(raw, **draw(placements(tuple(shape))))
        if op == "gather":
            call = lambda: st.gather(a, d, idx)  # noqa: E731
        elif op == "scatter":
            call = lambda: a.scatter_(d, idx, 1.0)  # noqa: E731
        else:
            src = st.ones(*((1 if i == d else n) for i, n in enumerate(a.shape)), dtype=a.dtype)
            idx = st.tensor([bad])
            call = lambda: a.index_add_(d, idx, src)  # noqa: E731
    return call, [a, idx], st.IndexOutOfRange, IndexError, [f"index {bad}", f"size {size}"]


BAD_SHARDS = [0, -1, -7, 1.5, "2", None]


@case
def bad_shards(draw):
    shards = draw(hs.sampled_from(BAD_SHARDS[:-1]))
    a = draw(tensors())
    make = draw(
        hs.sampled_from(["zeros", "ones", "rand", "full", "arange", "from_numpy", "reshard"])
    )
    shape = tuple(a.shape)
    calls = {
        "zeros": lambda: st.zeros(shape, shards=shards),
        "ones": lambda: st.ones(*shape, shards=shards),
        "rand": lambda: st.rand(shape, shards=shards),
        "full": lambda: st.full(shape, 2, shards=shards),
        "arange": lambda: st.arange(6, shards=shards),
        "from_numpy": lambda: st.from_numpy(np.ones(shape), shards=shards),
        "reshard": lambda: a.reshard(shards=shards),
    }
    return calls[make], [a], st.ShardingError, ValueError, [f"got {shards!r}"]


@case
def bad_layout(draw):
    a = draw(tensors())
    d = draw(hs.integers(0, a.ndim - 1))
    size = a.shape[d]
    kind = draw(hs.sampled_from(["short", "long", "negative", "grid"]))
    if kind == "grid":
        grid = (1,) * (a.ndim + draw(hs.integers(1, 2)))
        layout, names = st.Layout.block(grid), [str(grid), str(tuple(a.shape))]
    else:
        extra = {"short": -1, "long": 2, "negative": 0}[kind]
        chunks = (size + extra,) if kind != "negative" else (size + 1, -1)
        layout, names = st.Layout(chunks=chunks, dim=d), [str(chunks), f"size {size}"]
    if draw(hs.booleans()):
        call = lambda: a.reshard(layout=layout)  # noqa: E731
    else:
        call = lambda: st.zeros(tuple(a.shape), layout=layout)  # noqa: E731
    return call, [a], st.LayoutMismatch, ValueError, names


@case
def bad_device(draw):
    a = draw(tensors())
    dev = draw(hs.sampled_from(["tpu", "cuda:-1", "gpu", "cuda:x", "xla:0", "cpu:zero"]))
    how = draw(hs.sampled_from(["create", "to", "like"]))
    calls = {
        "create": lambda: st.ones(3, device=dev),
        "to": lambda: a.to(device=dev),
        "like": lambda: st.zeros_like(a, device=dev),
    }
    return calls[how], [a], st.BackendUnavailable, RuntimeError, [repr(dev)]


@case
def bad_dtype(draw):
    a = draw(tensors())
    dt = draw(hs.sampled_from(["float128", "int4", "string", "complex512", "object"]))
    how = draw(hs.sampled_from(["create", "to", "full"]))
    calls = {
        "create": lambda: st.zeros(3, dtype=dt),
        "to": lambda: a.to(dtype=dt),
        "full": lambda: st.full((2,), 1, dtype=dt),
    }
    return calls[how], [a], st.DTypeError, TypeError, [dt]


@case
def join_shapes(draw):
    shape = draw(shapes(min_dims=2))
    a = draw(tensors(shape))
    d = draw(hs.integers(0, a.ndim - 1))
    other = list(shape)
    k = (d + 1) % a.ndim
    other[k] = shape[k] + draw(hs.integers(1, 3))
    b = draw(tensors(other))
    if draw(hs.booleans()):
        call = lambda: st.cat([a, b], dim=d)  # noqa: E731
    else:
        call = lambda: st.stack([a, b], dim=d)  # noqa: E731
    return call, [a, b], st.ShapeError, ValueError, [str(list(shape)), str(other)]


@case
def bad_arguments(draw):
    a = draw(tensors(draw(shapes(min_size=2)), FLOATS))
    n = int(np.prod(a.shape))
    kind = draw(hs.sampled_from(["item", "split", "chunk", "topk", "narrow", "clamp"]))
    k = a.shape[-1] + draw(hs.integers(1, 3))
    zero = draw(hs.sampled_from([0, -1]))
    cases = {
        "item": (lambda: a.item(), [f"{n} elements"]),
        "split": (lambda: a.split(zero), [f"got {zero}"]),
        "chunk": (lambda: a.chunk(zero), [f"got: {zero}"]),
        "topk": (lambda: a.topk(k), [f"k={k}"]),
        "narrow": (lambda: a.narrow(0, 0, -2), ["got -2"]),
        "clamp": (lambda: a.clamp(), ["min", "max"]),
    }
    call, names = cases[kind]
    return call, [a], st.ArgumentError, ValueError, names


@case
def ragged_data(draw):
    rows = draw(
        hs.lists(hs.integers(1, 4), min_size=2, max_size=4).filter(lambda r: len(set(r)) > 1)
    )
    data = [[1.0] * r for r in rows]
    j = next(i for i, r in enumerate(rows) if r != rows[0])
    names = [f"length {rows[0]} at dim 1 (got {rows[j]})"]
    return lambda: st.tensor(data, shards=2), [], st.ArgumentError, ValueError, names


@case
def overflow(draw):
    dt = draw(hs.sampled_from(["uint8", "int8", "int16"]))
    value = int(np.iinfo(dt).max) + draw(hs.integers(1, 1000))
    call = lambda: st.full((3,), value, dtype=dt, shards=2)  # noqa: E731
    return call, [], st.ValueOverflow, OverflowError, [str(value), dt]


@case
def division_by_zero(draw):
    a = draw(tensors(dtypes=INTS))
    op = draw(hs.sampled_from(["floordiv", "mod", "ifloordiv"]))
    calls = {
        "floordiv": lambda: a // 0,
        "mod": lambda: a % 0,
        "ifloordiv": lambda: a.floor_divide_(0),
    }
    return calls[op], [a], st.DivisionByZero, ZeroDivisionError, ["divisor 0", a.dtype.name]


@case
def mask_shape(draw):
    a_shape, m_shape = _broken(draw, draw(shapes()))
    a = draw(tensors(a_shape, FLOATS))
    mask = draw(tensors(m_shape, ["bool"]))
    if draw(hs.booleans()):
        call = lambda: a.masked_fill(mask, 0.0)  # noqa: E731
    else:
        call = lambda: a.masked_fill_(mask, 0.0)  # noqa: E731
    return call, [a, mask], st.ShapeError, ValueError, [str(list(m_shape)), str(list(a_shape))]


@case
def setitem_value(draw):
    a = draw(tensors(draw(shapes(min_dims=2, min_size=2)), FLOATS))
    row = tuple(a.shape[1:])
    wrong = row[:-1] + (row[-1] + draw(hs.integers(1, 3)),)
    v = draw(tensors(wrong, FLOATS))
    call = lambda: a.__setitem__(0, v)  # noqa: E731
    return call, [a, v], st.ShapeError, ValueError, [str(wrong), str(row)]


@case
def bool_mask_index(draw):
    a = draw(tensors())
    n = a.shape[0] + draw(hs.integers(1, 3))
    mask = draw(tensors((n,), ["bool"]))
    # torch's message: the mask's shape and the indexed tensor's
    names = [f"mask [{n}]", f"indexed tensor {list(a.shape)}"]
    return lambda: a[mask], [a, mask], st.IndexOutOfRange, IndexError, names


@case
def expand_size(draw):
    shape = draw(shapes(min_size=2))
    a = draw(tensors(shape))
    d = draw(hs.integers(0, len(shape) - 1))
    target = tuple(n + 1 if i == d else n for i, n in enumerate(shape))
    names = [f"size {shape[d] + 1}", f"size {shape[d]}"]
    return lambda: a.expand(*target), [a], st.ShapeError, ValueError, names


@case
def linalg_operands(draw):
    n = draw(hs.integers(2, 4))
    kind = draw(hs.sampled_from(["solve", "det", "cholesky"]))
    if kind == "solve":
        a = draw(tensors((n, n), FLOATS))  # b of a's dtype: torch checks dtypes first
        b = draw(tensors((n + 1,), [a.dtype.name]))
        call, names = (lambda: st.linalg.solve(a, b)), [f"{n}x{n}", str(n + 1)]
        return call, [a, b], st.ShapeError, ValueError, names
    if kind == "det":
        a = draw(tensors((n, n + 1), FLOATS))
        return lambda: st.linalg.det(a), [a], st.ShapeError, ValueError, [f"{n}x{n + 1}"]
    a = draw(tensors((n, n), INTS))
    return lambda: st.linalg.cholesky(a), [a], st.DTypeError, TypeError, [a.dtype.name]


# ------------------------------------------------------------------------------ checking
def _snapshot(t):
    return tuple(t.shape), t.dtype, t.layout, t.numpy().copy()


def check_bad_call(call, operands, error, builtin, names):
    before = [_snapshot(t) for t in operands]
    with pytest.raises(error) as info:
        call()
    err = info.value
    assert isinstance(err, st.ShardedError) and isinstance(err, builtin), type(err).__mro__
    assert type(err).__module__ == "sharded.errors", type(err)
    for name in names:
        assert name in str(err), f"{name!r} not named in {str(err)!r}"
    for t, (shape, dtype, layout, values) in zip(operands, before):
        assert (tuple(t.shape), t.dtype, t.layout) == (shape, dtype, layout)
        np.testing.assert_array_equal(t.numpy(), values)
        np.testing.assert_array_equal(t.clone().numpy(), values)  # a new op on it works
    st.synchronize()  # nothing failed behind the driver's back either
    assert (st.arange(6, shards=3) * 2).tolist() == [0, 2, 4, 6, 8, 10]


def run_bad_calls(n: int, phases=tuple(Phase), only=None) -> Counter:
    """Check ``n`` hypothesis-drawn bad calls (deterministic); return how often each case ran."""
    seen: Counter = Counter()
    names = sorted(CASES)

    @settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=phases,
    )
    @given(hs.data())
    def prop(data):
        name = data.draw(hs.sampled_from(names if only is None else [only]), label="case")
        seen[name] += 1
        check_bad_call(*CASES[name](data.draw))

    prop()
    return seen


def test_bad_calls_raise_typed_errors_and_change_nothing():
    seen = run_bad_calls(N_EXAMPLES)
    assert sum(seen.values()) >= 500
    assert len(seen) >= len(CASES) * 3 // 4, set(CASES) - set(seen)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_kind_of_bad_call(name):
    # every kind runs here whatever the shared run above happened to draw
    assert run_bad_calls(4, only=name)[name] >= 1


def test_tensors_of_another_session_are_refused_and_leave_the_new_one_intact():
    old = st.arange(6, shards=3).float()
    st.shutdown()
    try:
        st.init(executor="local", num_workers=2)
        y = st.ones(6, shards=2)
        calls = [
            lambda: y + old,
            lambda: y.add_(old),
            lambda: st.cat([y, old]),
            lambda: st.where(y > 0, y, old),
            lambda: y.copy_(old),
            lambda: y.__setitem__(slice(0, 6), old),
            lambda: st.gather(y, 0, old.long()),
            lambda: old.numpy(),
        ]
        for call in calls:
            check_bad_call(call, [y], st.SessionClosed, RuntimeError, ["shape (6,)"])
    finally:
        st.shutdown()
        st.init(executor="local", num_workers=3, min_shard_bytes=0)
