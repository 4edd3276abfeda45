"""st.matmul and the products (mm, bmm, mv, dot, inner, outer, vecdot, multi_dot) against
numpy on every layout pair, and the planner's layout choices (``sharded/ops/matmul.py``)."""

from types import SimpleNamespace

import numpy as np
import pytest

import sharded as st
from sharded.core.dataflow import Operand
from sharded.ops.linalg import plan as MM
from tests.helpers import (
    LINALG_TOL,
    PLACEMENT_IDS,
    PLACEMENTS,
    assert_matches_numpy,
    current_executor,
    float64_tensor,
)

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
ex = current_executor
t = float64_tensor


# ------------------------------------------------------------------------------ products
A76, B65 = rng.standard_normal((7, 6)), rng.standard_normal((6, 5))
B75 = rng.standard_normal((7, 5))
A77, B77 = rng.standard_normal((7, 7)), rng.standard_normal((7, 7))


@pytest.mark.ray_mirror(False)  # on Ray a subset: tests/ray/test_linalg.py
@pytest.mark.parametrize("pb", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("pa", PLACEMENTS, ids=PLACEMENT_IDS)
def test_matmul_every_layout_pair(pa, pb):
    a, b = t(A77, **pa), t(B77, **pb)
    assert_matches_numpy(a @ b, A77 @ B77, **TOL)
    assert_matches_numpy(a.mT @ b, A77.T @ B77, **TOL)  # rows of a: the contraction dim
    assert_matches_numpy(a @ b.mT, A77 @ B77.T, **TOL)


def test_layout_rules():
    x, w = t(A76, shards=3), t(B65, layout=st.Layout.replicated())
    moved = ex().bytes_moved
    y = x @ w
    assert y.layout.bounds[0] == x.layout.bounds[0] and ex().bytes_moved == moved  # local
    r = t(A76, layout=st.Layout.replicated()) @ w
    assert r.layout.is_replicated
    g = x.mT @ t(B75, shards=3)  # k-split, small: summed into one block
    assert g.layout.num_shards == 1
    big_x, big_g = rng.standard_normal((600, 400)), rng.standard_normal((600, 400))
    gg = t(big_x, shards=3).mT @ t(big_g, shards=3)  # k-split, big: reduce-scattered rows
    assert gg.layout.grid == (3, 1) and len(set(gg.layout.workers)) == 3
    assert_matches_numpy(gg, big_x.T @ big_g, **TOL)
    c = t(A76, layout=st.Layout.replicated()) @ t(B65, shards=3, dim=1)  # columns stay put
    assert c.layout.grid == (1, 3)
    blk = t(rng.standard_normal((8, 8)), layout=st.Layout.block((2, 2)))
    assert_matches_numpy(blk @ blk, blk.numpy() @ blk.numpy(), **TOL)
    # a big 2x2 block grid on 4 workers: SUMMA blocks, one per worker (the planner is pure)
    lay = st.Layout.block((2, 2)).bind((1000, 1000), 4)
    a = Operand(lay, st.float64, range(4))
    _, plan = MM.choose(SimpleNamespace(num_workers=4), a, a)
    assert (
        plan[0] == "blocks" and plan[1].grid == (2, 2) and sorted(plan[1].workers) == [0, 1, 2, 3]
    )


@pytest.mark.parametrize(
    "pa, pb",
    [
        (dict(shards=2), dict(shards=2)),
        (dict(shards=3, dim=1), dict(shards=2, dim=2)),
        (dict(shards=2, dim=2), dict(layout=st.Layout.replicated())),
        (dict(layout=st.Layout.replicated()), dict(shards=3)),
    ],
    ids=["batch", "rows-cols", "k", "rep"],
)
def test_batched_matmul_and_broadcast(pa, pb):
    a3, b3 = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5, 2))
    b2 = rng.standard_normal((5, 2))
    a = t(a3, **pa)
    assert_matches_numpy(a @ t(b3, **pb), a3 @ b3, **TOL)
    assert_matches_numpy(a @ t(b2), a3 @ b2, **TOL)
    assert_matches_numpy(t(b2).mT @ a.mT, b2.T @ a3.transpose(0, 2, 1), **TOL)
    a4 = rng.standard_normal((2, 1, 3, 5))
    assert_matches_numpy(t(a4, shards=2) @ t(b3, **pb), a4 @ b3, **TOL)
    assert_matches_numpy(st.bmm(a, t(b3, **pb)), a3 @ b3, **TOL)


def test_vectors_and_family():
    v, m = rng.standard_normal(7), rng.standard_normal((7, 7))
    for pv in (dict(shards=3), dict(layout=st.Layout(chunks=(4, 0, 3)))):
        x, a = t(v, **pv), t(m, shards=2, dim=1)
        assert_matches_numpy(a @ x, m @ v, **TOL)
        assert_matches_numpy(x @ a, v @ m, **TOL)
        assert abs((x @ x).item() - v @ v) < 1e-12 and (x @ x).ndim == 0
        assert abs(st.dot(x, x).item() - v @ v) < 1e-12
        assert_matches_numpy(st.mv(a, x), m @ v, **TOL)
        assert_matches_numpy(st.outer(x, x), np.outer(v, v), **TOL)
    assert_matches_numpy(st.mm(t(A76, shards=2), t(B65)), A76 @ B65, **TOL)
    assert_matches_numpy(L.inner(t(A76), t(B75.T @ A76)), np.inner(A76, B75.T @ A76), **TOL)
    assert_matches_numpy(L.vecdot(t(A76, shards=2), t(A76[0])), A76 @ A76[0], **TOL)
    assert_matches_numpy(L.multi_dot([t(A76), t(B65), t(B65.T)]), A76 @ B65 @ B65.T, **TOL)
    assert_matches_numpy(
        L.matmul(st.arange(6).reshape(2, 3), st.arange(3)), [5, 14], dtype=st.int64
    )


def test_product_errors_name_shapes():
    with pytest.raises(st.ShapeError, match=r"7x6 and 5x6"):
        t(A76) @ t(B65.T)
    with pytest.raises(st.ShapeError, match="at least 1D"):
        st.matmul(st.tensor(1.0), t(B65))
    with pytest.raises(st.ShapeError, match="cannot be broadcast"):
        t(np.ones((2, 3, 4))) @ t(np.ones((3, 4, 5)))
    with pytest.raises(st.ShapeError, match="equal batch sizes"):
        st.bmm(t(np.ones((2, 3, 4))), t(np.ones((3, 4, 5))))
    with pytest.raises(st.ShapeError, match="do not match"):
        L.tensordot(t(A76), t(B65), ([0], [0]))


# ------------------------------------------------------------------------------ issue 12
# Expected shapes and values are torch's (CPU).
EMPTY_BATCH = [((0, 6, 3), (3, 2), (0, 6, 2)), ((1, 1, 4), (0, 4, 4), (0, 1, 4))]
EMPTY_PLACES = [dict(shards=1), dict(shards=2, dim=1), dict(layout=st.Layout.replicated())]


@pytest.mark.parametrize("sa, sb, shape", EMPTY_BATCH, ids=["a0", "b0"])
@pytest.mark.parametrize("pb", EMPTY_PLACES, ids=["1", "2", "repl"])
@pytest.mark.parametrize("pa", EMPTY_PLACES, ids=["1", "2", "repl"])
def test_size0_batch_dims(sa, sb, shape, pa, pb):
    # a size-0 batch dim broadcast against a size-1 one is 0, not 1 (was (1,6,2) of garbage)
    a = st.zeros(*sa, requires_grad=True, **pa)
    b = st.ones(*sb, requires_grad=True, **pb)
    r = a @ b
    assert_matches_numpy(r, np.zeros(shape), dtype=st.float32)
    r.sum().backward()
    assert_matches_numpy(a.grad, np.zeros(sa)) and assert_matches_numpy(b.grad, np.zeros(sb))


@pytest.mark.parametrize("pa", [dict(shards=1), dict(shards=3)], ids=["1", "3"])
def test_size1_batch_split_into_empty_chunks(pa):
    # a size-1 batch dim on 3 shards has two empty chunks: their blocks must be empty
    a, b = st.ones(1, 2, 3, **pa), st.ones(1, 3, 2, shards=3)
    assert_matches_numpy(a @ b, np.full((1, 2, 2), 3.0), dtype=st.float32)
    assert_matches_numpy(a @ st.ones(4, 3, 2, shards=3), np.full((4, 2, 2), 3.0))


def test_mixed_dtypes_refused_as_torch():
    # torch never promotes in a product: "expected m1 and m2 to have the same dtype, but got:
    # long int != float" (mm, @), "expected scalar type Long but found Float" (bmm), "dot :
    # expected both vectors to have same dtype" (dot, 1-D @ 1-D); complex with real too
    i = st.ones(2, 2, dtype=st.int64, shards=2)
    f, d = st.ones(2, 2), st.ones(2, 2, dtype=st.float64)
    c, i32 = st.ones(2, 2, dtype=st.complex64), st.ones(2, 2, dtype=st.int32)
    pairs = [(i, f), (f, i), (f, d), (d, c), (c, f), (i, i32), (i32, d)]
    calls = [
        ("matmul", lambda a, b: a @ b),
        ("mm", st.mm),
        ("bmm", lambda a, b: st.bmm(a[None], b[None])),
        ("mv", lambda a, b: st.mv(a, b[0])),
        ("dot", lambda a, b: st.dot(a[0], b[0])),
        ("matmul", lambda a, b: a[0] @ b),  # 1-D @ 2-D, 3-D @ 2-D, 2-D @ 1-D: matmul too
        ("matmul", lambda a, b: a[None] @ b),
        ("matmul", lambda a, b: st.matmul(a, b[0])),
    ]
    for a, b in pairs:
        names = f"{a.dtype.name} and {b.dtype.name}"
        for op, call in calls:
            with pytest.raises(st.DTypeError, match=f"{op}: .*same dtype.*{names}"):
                call(a, b)
    assert i.tolist() == [[1, 1], [1, 1]] and f.dtype == st.float32  # operands intact
    with pytest.raises(st.DTypeError, match="float32 and float64"):
        st.vdot(f[0], d[0])
    with pytest.raises(st.DTypeError, match="float32 and float64"):
        st.inner(f, d)
    # equal integer dtypes multiply in that dtype; bool products are refused (NotImplemented)
    assert (i @ i).tolist() == [[2, 2], [2, 2]] and (i32 @ i32).dtype == st.int32
    assert st.dot(i[0], i[0]).dtype == st.int64
    b = st.ones(2, 2, dtype=st.bool)
    with pytest.raises(st.DTypeError, match="bool"):
        b @ b
    # shapes are checked first, as torch: "mat1 and mat2 shapes cannot be multiplied"
    with pytest.raises(st.ShapeError, match="1x1 and 2x1"):
        st.ones(1, 1) @ st.ones(2, 1, dtype=st.float64)
    # outer is a broadcast product in torch, so it promotes
    assert st.outer(f[0], d[0]).dtype == st.float64


def test_vecdot_as_torch():
    # torch.linalg.vecdot conjugates x and refuses mixed dtypes ("Expected x and y to have the
    # same dtype, but found x of type Float and y of type Long")
    x, y = st.tensor([1 + 2j, 3j], shards=2), st.tensor([1j, 1 + 0j])
    assert st.linalg.vecdot(x, y).item() == pytest.approx(2 - 2j)
    with pytest.raises(st.DTypeError, match="vecdot.*float32 and int64"):
        st.linalg.vecdot(st.ones(2), st.ones(2, dtype=st.int64))


# ------------------------------------------------------------------------------ add*
# torch's addmm family: beta * input + alpha * product (input broadcast, ignored at beta=0).
def test_addmm_family():
    c, a, b = rng.standard_normal((3, 5)), rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    got = st.addmm(t(c, shards=2), t(a, shards=3, dim=1), t(b), beta=0.5, alpha=2.0)
    assert_matches_numpy(got, 0.5 * c + 2.0 * a @ b, **TOL)
    assert_matches_numpy(t(c[0]).addmm(t(a), t(b)), c[0] + a @ b, **TOL)
    nan = t(np.full((3, 5), np.nan))
    assert_matches_numpy(st.addmm(nan, t(a), t(b), beta=0), a @ b, **TOL)  # NaN ignored
    v = rng.standard_normal(4)
    assert_matches_numpy(
        st.addmv(t(c[:, 0]), t(a), t(v), beta=2, alpha=0.5), 2 * c[:, 0] + 0.5 * a @ v, **TOL
    )
    assert_matches_numpy(st.addr(t(a), t(c[:, 0]), t(v)), a + np.outer(c[:, 0], v), **TOL)
    ba, bb = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    assert_matches_numpy(
        st.baddbmm(t(np.ones((2, 3, 5))), t(ba, shards=2), t(bb), alpha=3), 1 + 3 * ba @ bb, **TOL
    )
    assert_matches_numpy(st.addbmm(t(c), t(ba), t(bb)), c + (ba @ bb).sum(0), **TOL)
    assert st.ger(st.tensor([1, 2]), st.tensor([3, 4])).tolist() == [[3, 4], [6, 8]]
    with pytest.raises(st.ShapeError):  # input must broadcast to the product's shape
        st.addmm(t(np.ones((4, 5))), t(a), t(b))
    x = st.tensor(a, dtype=st.float64, requires_grad=True)
    st.addmm(t(c), x, t(b), alpha=2.0).sum().backward()
    assert_matches_numpy(x.grad, 2.0 * np.ones((3, 5)) @ b.T, **TOL)


@pytest.mark.parametrize("shards", [1, 2])
def test_addmm_family_integer_factors_like_torch(shards):
    # torch reads beta and alpha in an integer result's dtype (0.5 -> 0, 2.7 -> 2, -1.5 -> -1):
    # a Python number never widens int64 to float; addr refuses a float factor
    m = st.tensor([[1, 2], [3, 4]], shards=shards)
    v, b = st.tensor([1, -1]), st.tensor([10, 20], shards=shards)
    bb = st.arange(8, shards=shards).reshape(2, 2, 2)
    for got, want in [
        (st.addmv(b, m, v, beta=0.5, alpha=1.5), [-1, -1]),
        (st.addmv(b, m, v, beta=2.7, alpha=-1.5), [21, 41]),
        (st.addbmm(m, bb, bb, beta=0.5, alpha=1.5), [[48, 58], [72, 90]]),
        (st.baddbmm(bb, bb, bb, beta=0.5, alpha=1.5), [[[2, 3], [6, 11]], [[46, 55], [66, 79]]]),
        (st.addmm(m, m, m, beta=0.5, alpha=1.5), [[7, 10], [15, 22]]),
        (st.addr(m, v, v, beta=2, alpha=-3), [[-1, 7], [9, 5]]),
    ]:
        assert got.dtype == st.int64 and got.tolist() == want
    with pytest.raises(st.ArgumentTypeError, match="argument beta must not be a floating"):
        st.addr(m, v, v, beta=0.5)
    with pytest.raises(TypeError, match="argument alpha must not be a floating"):
        st.addr(m, v, v, alpha=0.5)


@pytest.mark.parametrize("shards", [1, 2])
def test_addr_of_bool_and_complex_factors_like_torch(shards):
    # torch's bool addr is (beta and input) or (alpha and outer): bool out, whatever the ints
    m = st.tensor([[True, False], [False, False]], shards=shards)
    v = st.tensor([True, False])
    want = [[True, False], [False, False]]
    for beta, alpha in [(2, 3), (True, False), (0, 1), (1, 1)]:
        got = st.addr(m, v, v, beta=beta, alpha=alpha)
        assert got.dtype == st.bool and got.tolist() == want
    with pytest.raises(st.ArgumentTypeError, match="beta must not be a floating"):
        st.addr(m, v, v, beta=0.5)
    f = st.ones(2, 2, shards=shards)  # torch: a complex factor of a real result refuses
    with pytest.raises(st.ArgumentTypeError, match="alpha=1j"):
        st.addr(f, st.ones(2), st.ones(2), alpha=1j)
    with pytest.raises(st.ArgumentTypeError, match="beta"):
        st.addmm(f, f, f, beta=2j)


# ------------------------------------------------------------------------------ thin products
# A matrix times a vector or a few columns: the thin operand is gathered whole to every worker
# holding rows of the matrix, one product (a gemv for a vector) per block, rows like A's.
A119, X9, X92, Y11 = (rng.standard_normal(s) for s in ((11, 9), 9, (9, 2), 11))
V_PLACES = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3),
    dict(layout=st.Layout(chunks=(4, 0, 5))),
    dict(layout=st.Layout.replicated()),
]
V_IDS = ["1", "2", "3", "uneven", "repl"]


def _for11(px):
    """Placement ``px`` for a length-11 vector (the uneven chunks are for 9)."""
    return dict(layout=st.Layout(chunks=(6, 0, 5))) if px is V_PLACES[3] else px


M_PLACES = [
    dict(shards=2),
    dict(shards=3),
    dict(shards=2, dim=1),
    dict(layout=st.Layout.replicated()),
]
M_IDS = ["rows2", "rows3", "cols", "repl"]


@pytest.mark.parametrize("px", V_PLACES, ids=V_IDS)
@pytest.mark.parametrize("pa", M_PLACES, ids=M_IDS)
def test_thin_products_every_layout(pa, px):
    a, x, x2, y = t(A119, **pa), t(X9, **px), t(X92, **px), t(Y11, **_for11(px))
    assert_matches_numpy(a @ x, A119 @ X9, **TOL)
    assert_matches_numpy(a @ x2, A119 @ X92, **TOL)
    assert_matches_numpy(st.mv(a, x), A119 @ X9, **TOL)
    assert_matches_numpy(a.mT @ y, A119.T @ Y11, **TOL)  # A^T x: a k-split
    assert_matches_numpy(y @ a, Y11 @ A119, **TOL)  # vector @ matrix
    assert_matches_numpy(x @ a.mT, X9 @ A119.T, **TOL)
    pv = {k: v for k, v in pa.items() if k != "dim"}  # a vector laid out as A's split
    assert_matches_numpy(x @ t(X9, **pv), X9 @ X9, **TOL)  # two vectors: a 0-d result
    assert (x @ x).ndim == 0


@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.complex128, st.int64])
@pytest.mark.parametrize("px", [dict(shards=2), dict(shards=1)], ids=["split", "whole"])
def test_thin_products_dtypes(dtype, px):
    k = lambda s: rng.integers(-5, 5, s)  # noqa: E731
    an, xn, x2n = k((11, 9)), k(9), k((9, 3))
    if dtype.is_complex:
        an, xn, x2n = an + 1j * k((11, 9)), xn - 2j * k(9), x2n + 1j
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == st.float32 else TOL
    a = st.tensor(an, dtype=dtype, shards=2)
    x, x2 = st.tensor(xn, dtype=dtype, **px), st.tensor(x2n, dtype=dtype, **px)
    assert_matches_numpy(a @ x, an @ xn, dtype=dtype, **tol)
    assert_matches_numpy(a @ x2, an @ x2n, dtype=dtype, **tol)
    assert_matches_numpy(x @ a.mT, xn @ an.T, dtype=dtype, **tol)
    assert_matches_numpy(st.dot(x, x), xn @ xn, dtype=dtype, **tol)


def test_matvec_is_one_product_per_block():
    # A's 2 row blocks on 2 workers; x split too: each worker assembles x (its half and the
    # other's) and multiplies once. It was a product per k panel summed into the first, and
    # reshaping commands around the vector: 8 commands, now 4 (2 with x on every worker)
    a = t(rng.standard_normal((12, 8)), shards=2)
    lay = a.layout
    for px, want in ((dict(shards=2), 4), (dict(layout=st.Layout.replicated()), 2)):
        for xn in (rng.standard_normal(8), rng.standard_normal((8, 3))):
            x = t(xn, **px)
            b = x if x.ndim == 2 else MM.Vec(x, 1)
            _, plan = MM.choose(ex(), a, b)
            assert plan[0] == "blocks" and plan[2] == [(0, 8)]  # one panel: all of k
            before = ex().commands
            r = a @ x
            assert ex().commands - before == want
            assert r.layout.bounds[0] == lay.bounds[0] and r.layout.workers == lay.workers
            assert_matches_numpy(r, a.numpy() @ xn, **TOL)


def test_thin_limits_and_reduce_scatter_of_vectors(monkeypatch):
    # over THIN_BYTES the vector is multiplied panel by panel (an in-place gemv per panel
    # after the first); a big k-split result of a vector product is reduce-scattered
    monkeypatch.setattr(MM, "_PLANS", {})  # plans made with the limits below
    monkeypatch.setattr(MM, "THIN_BYTES", 0)
    monkeypatch.setattr(MM, "SMALL_RESULT", 0)
    a, x = t(A119, shards=3), t(X9, shards=2)
    _, plan = MM.choose(ex(), a, MM.Vec(x, 1))
    assert len(plan[2]) > 1
    assert_matches_numpy(a @ x, A119 @ X9, **TOL)
    assert_matches_numpy(a @ t(X92, shards=2), A119 @ X92, **TOL)
    cols = t(A119, shards=3, dim=1)  # k-split: partial (11,) vectors, reduce-scattered
    r = cols @ x
    assert r.layout.num_shards > 1
    assert_matches_numpy(r, A119 @ X9, **TOL)
    y = t(Y11, shards=3)
    r = y @ t(A119, shards=3)
    assert r.layout.num_shards > 1
    assert_matches_numpy(r, Y11 @ A119, **TOL)


def test_plans_are_remembered(monkeypatch):
    monkeypatch.setattr(MM, "_PLANS", {})
    a, x = t(A119, shards=2), t(X9, shards=2)
    p1 = MM.choose(ex(), a, MM.Vec(x, 1))[1]
    assert MM.choose(ex(), t(A119, shards=2), MM.Vec(t(X9, shards=2), 1))[1] is p1
    monkeypatch.setattr(MM, "PLAN_CACHE", 2)
    for s in (1, 3, 5):
        MM.choose(ex(), t(A119, shards=s), MM.Vec(x, 1))
    assert len(MM._PLANS) == 2


VG_PLACES = [dict(shards=2), dict(shards=1), dict(layout=st.Layout.replicated())]


@pytest.mark.parametrize("px", VG_PLACES, ids=["split", "whole", "repl"])
@pytest.mark.parametrize("pa", [dict(shards=2), dict(shards=2, dim=1)], ids=["rows", "cols"])
def test_thin_product_gradients(pa, px):
    from sharded.autograd import gradcheck

    w, v = rng.standard_normal(11), rng.standard_normal(9)
    a = st.tensor(A119, dtype=st.float64, requires_grad=True, **pa)
    x = st.tensor(X9, dtype=st.float64, requires_grad=True, **px)
    ((a @ x) * t(w)).sum().backward()
    assert_matches_numpy(a.grad, np.outer(w, X9), **TOL)
    assert_matches_numpy(x.grad, A119.T @ w, **TOL)
    a.grad = x.grad = None
    y = st.tensor(Y11, dtype=st.float64, requires_grad=True, **px)
    ((y @ a) * t(v)).sum().backward()  # vector @ matrix
    assert_matches_numpy(a.grad, np.outer(Y11, v), **TOL)
    assert_matches_numpy(y.grad, A119 @ v, **TOL)
    (x @ x).backward()  # two vectors
    assert_matches_numpy(x.grad, 2 * X9, **TOL)
    # small operands: finite differences of every entry
    ra, ca = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)) * (1 + 1j)
    ra, rx = (
        st.tensor(v, dtype=st.float64, requires_grad=True, **p) for v, p in ((ra, pa), (ra[0], px))
    )
    assert gradcheck(lambda m, u: (m @ u, u @ m.mT, (m @ u) @ (m @ u)), (ra, rx))
    za, zx = (
        st.tensor(v, dtype=st.complex128, requires_grad=True, **p)
        for v, p in ((ca, pa), (ca[0], px))
    )
    assert gradcheck(lambda m, u: (m @ u, u @ m.mT), (za, zx))


def test_weight_gradient_of_chunks_on_one_worker_is_a_k_split():
    # x.T @ g with both k chunks on one worker (a worker with a thread per shard): a partial
    # product per chunk, summed, not a gathered copy of both 2.5 MB operands and one product
    xn, gn = rng.standard_normal((200, 8)), rng.standard_normal((200, 6))
    one = st.Layout.from_bounds((200, 8), [(0, 100, 200), (0, 8)], [0, 0])
    x = t(xn, layout=one)
    g = t(gn, layout=one.replace(shape=(200, 6), bounds=((0, 100, 200), (0, 6))))
    _, plan = MM.choose(SimpleNamespace(num_workers=1), x.mT, g)
    assert plan[0] == "ksplit"
    assert_matches_numpy(x.mT @ g, xn.T @ gn, **TOL)


def test_matvec_of_row_blocks_on_one_worker_stays_blocks():
    # A's row blocks and x's chunks all on one worker: one gemv per row block (x gathered,
    # 32 KB), not a k-split that would gather A's column halves (64 MB at 4096²)
    one = st.Layout.from_bounds((96, 64), [(0, 48, 96), (0, 64)], [0, 0])
    a = t(rng.standard_normal((96, 64)), layout=one)
    x = t(rng.standard_normal(64), layout=st.Layout.from_bounds((64,), [(0, 32, 64)], [0, 0]))
    one_worker = SimpleNamespace(num_workers=1)  # (more workers: a block may go elsewhere)
    _, plan = MM.choose(one_worker, a, MM.Vec(x, 1))
    assert plan[0] == "blocks" and plan[2] == [(0, 64)]
    assert_matches_numpy(a @ x, a.numpy() @ x.numpy(), **TOL)


def test_matvec_with_split_vector_on_one_worker_is_one_product_per_row_block(monkeypatch):
    # x split too: gathered whole (a copy of 64 entries) beats one block of all rows whose
    # k panels each assemble a column slice of both row blocks of A (A over THIN_BYTES, as
    # a 4096² one is: its whole-k regions are not gathered whole)
    monkeypatch.setattr(MM, "_PLANS", {})
    monkeypatch.setattr(MM, "THIN_BYTES", 1024)
    one = st.Layout.from_bounds((96, 64), [(0, 48, 96), (0, 64)], [0, 0])
    a = t(rng.standard_normal((96, 64)), layout=one)
    x = t(rng.standard_normal(64), layout=st.Layout.from_bounds((64,), [(0, 32, 64)], [0, 0]))
    _, plan = MM.choose(SimpleNamespace(num_workers=1), a, MM.Vec(x, 1))
    assert plan[0] == "blocks" and plan[2] == [(0, 64)]
    assert plan[1].bounds[0] == (0, 48, 96)
    assert_matches_numpy(a @ x, a.numpy() @ x.numpy(), **TOL)
