"""Complex dtypes through the surface: creation, arithmetic, reductions, matmul, linalg, the
complex primitives (real/imag views, conj, angle, complex, polar, view_as_real/complex),
torch's refusals, printing, checkpoints and autograd in torch's convention. Values are
compared with NumPy; the expected gradients, dtypes and errors are torch's answers (asked of
torch 2.x on CPU, recorded here)."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.autograd import gradcheck
from tests.helpers import PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(13)
Z = (rng.standard_normal((7, 4)) + 1j * rng.standard_normal((7, 4))).astype(np.complex64)
W = (rng.standard_normal((7, 4)) + 1j * rng.standard_normal((7, 4))).astype(np.complex64)
TOL = dict(rtol=1e-5, atol=1e-5)


def ct(a, **kw):
    return st.from_numpy(np.ascontiguousarray(a), **kw)


# ------------------------------------------------------------------------------ creation
def test_creation_and_dtypes():
    assert st.tensor([1 + 2j]).dtype == st.complex64 == st.cfloat
    assert st.tensor([1, 2.5, 1j]).tolist() == [1 + 0j, 2.5 + 0j, 1j]
    assert st.zeros(3, dtype=st.cdouble).dtype == st.complex128
    assert_matches_numpy(st.ones(2, 3, dtype=st.cfloat, shards=2), np.ones((2, 3), np.complex64))
    assert_matches_numpy(st.full((2,), 1 + 1j), np.full(2, 1 + 1j, np.complex64))
    assert st.full((2,), 1, dtype=st.cdouble).dtype == st.complex128
    assert_matches_numpy(st.linspace(0, 1, 3, dtype=st.cfloat), [0, 0.5, 1], dtype=st.cfloat)
    with pytest.raises(st.DTypeError, match="complex64"):
        st.arange(3, dtype=st.cfloat)  # torch: "arange_cpu" not implemented for ComplexFloat
    with pytest.raises(st.DTypeError, match="complex64"):
        st.randint(3, (3,), dtype=st.cfloat)
    st.set_default_dtype(st.float64)
    try:
        assert st.tensor([1j]).dtype == st.complex128  # the default float's counterpart
    finally:
        st.set_default_dtype(st.float32)
    z = ct(Z, shards=3)
    assert z.is_complex() and st.is_complex(z) and not z.is_floating_point()
    assert not st.ones(2).is_complex() and not z.is_conj() and z.resolve_conj() is z


@pytest.mark.parametrize("kw", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_random_complex_is_counter_based(kw):
    st.manual_seed(5)
    ref = st.randn(64, 8, dtype=st.cfloat, shards=1).numpy()
    st.manual_seed(5)
    got = st.randn(64, 8, dtype=st.cfloat, **kw)
    assert got.dtype == st.complex64
    np.testing.assert_array_equal(got.numpy(), ref)
    st.manual_seed(5)
    u = st.rand(64, 8, dtype=st.cdouble, **kw).numpy()
    assert u.dtype == np.complex128 and (u.real >= 0).all() and (u.imag < 1).all()


def test_randn_complex_has_unit_variance_split_evenly():
    st.manual_seed(0)
    z = st.randn(200_000, dtype=st.cfloat, shards=3).numpy()
    # torch: real and imaginary parts each N(0, 1/2), so E|z|^2 = 1
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01
    assert abs(np.mean(z.real * z.imag)) < 0.01


# ---------------------------------------------------------------------------- arithmetic
@pytest.mark.parametrize("kw", PLACEMENTS[:5])
def test_arithmetic_matches_numpy(kw):
    z, w = ct(Z, **kw), ct(W, **kw)
    for got, exp in [
        (z + w, Z + W),
        (z - w, Z - W),
        (z * w, Z * W),
        (z / w, Z / W),
        (z**2, Z**2),
        (-z, -Z),
        (z * 2, Z * 2),
        (z + 1j, Z + 1j),
        (1j - z, 1j - Z),
        (st.exp(z), np.exp(Z)),
        (st.log(z), np.log(Z)),
        (st.sqrt(z), np.sqrt(Z)),
        (st.sin(z), np.sin(Z)),
        (st.tanh(z), np.tanh(Z)),
        (st.sigmoid(z), 1 / (1 + np.exp(-Z))),
        (st.reciprocal(z), 1 / Z),
        (st.sgn(z), Z / np.abs(Z)),
        (st.where(z.real > 0, z, w), np.where(Z.real > 0, Z, W)),
    ]:
        assert_matches_numpy(got, exp, dtype=st.complex64, **TOL)
    assert_matches_numpy(st.abs(z), np.abs(Z), dtype=st.float32, **TOL)
    assert_matches_numpy(st.angle(z), np.angle(Z), dtype=st.float32, **TOL)
    assert_matches_numpy(z == w, Z == W)
    assert_matches_numpy(z != z, Z != Z)


def test_promotion_follows_torch():
    # torch: int * 1j -> complex64; float64 + 1j -> complex128; complex64 with float64 ->
    # complex128; float16 + 1j -> complex32 in torch, complex64 here (no complex32)
    assert (st.tensor([1, 2]) * 1j).dtype == st.complex64
    assert (st.tensor([1.0], dtype=st.float64) + 1j).dtype == st.complex128
    assert (ct(Z) + st.ones(4, dtype=st.float64)).dtype == st.complex128
    assert (st.ones(2) + 1j).tolist() == [1 + 1j, 1 + 1j]
    with pytest.raises(st.DTypeError, match="can't be cast"):
        st.ones(2).add_(1j)  # torch: result type ComplexFloat can't be cast to Float
    assert (ct(Z).to(st.float32)).dtype == st.float32


REFUSED = {
    "lt": lambda z: z < z,
    "ge": lambda z: z >= 1j,
    "max": lambda z: z.max(),
    "amin": lambda z: z.amin(0),
    "argmax": lambda z: z.argmax(),
    "maximum": lambda z: st.maximum(z, z),
    "sort": lambda z: st.sort(z),
    "topk": lambda z: st.topk(z, 1),
    "floor": lambda z: st.floor(z),
    "round": lambda z: st.round(z),
    "clamp": lambda z: st.clamp(z, 0, 1),
    "relu": lambda z: st.relu(z),
    "remainder": lambda z: z % 2,
    "floor_divide": lambda z: z // 2,
    "atan2": lambda z: st.atan2(z, z),
    "sign": lambda z: st.sign(z),
    "bitwise": lambda z: z & z,
    "cummax": lambda z: st.cummax(z, 0),
    "unique": lambda z: st.unique(z),
    "softmax": lambda z: st.softmax(z, 0),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_ops_torch_refuses_raise_dtype_error(name):
    z = ct(Z, shards=2)
    with pytest.raises(st.DTypeError, match="complex"):
        REFUSED[name](z)
    assert_matches_numpy(z, Z)  # the operand is intact, the session usable
    assert_matches_numpy(z + 1, Z + 1)


def test_abs_in_place_is_refused_for_complex():
    z = ct(Z)
    with pytest.raises(st.DTypeError, match="In-place abs"):
        z.abs_()
    assert_matches_numpy(z, Z)


# ---------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("kw", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_reductions(kw):
    z = ct(Z.astype(np.complex128), **kw)
    Zd = Z.astype(np.complex128)
    assert_matches_numpy(z.sum(), Zd.sum(), dtype=st.complex128)
    assert_matches_numpy(z.sum(0), Zd.sum(0))
    assert_matches_numpy(z.prod(1), Zd.prod(1))
    assert_matches_numpy(z.mean(), Zd.mean(), dtype=st.complex128)
    assert_matches_numpy(z.mean(1, keepdim=True), Zd.mean(1, keepdims=True))
    assert_matches_numpy(z.var(), Zd.var(ddof=1), dtype=st.float64)  # real, as torch
    assert_matches_numpy(z.std(0), Zd.std(0, ddof=1), dtype=st.float64)
    assert_matches_numpy(z.cumsum(0), Zd.cumsum(0), dtype=st.complex128)
    assert_matches_numpy(st.logsumexp(z, 1), np.log(np.exp(Zd).sum(1)))
    assert st.ones(2).sum(dtype=st.cfloat).item() == 2 + 0j


# ---------------------------------------------------------------------------- matmul, linalg
def test_matmul_and_linalg():
    a, b = ct(Z[:4], shards=2), ct(W[:4].T, shards=2, dim=1)
    assert_matches_numpy(a @ b, Z[:4] @ W[:4].T, dtype=st.complex64, **TOL)
    m = (Z[:4] + 4 * np.eye(4)).astype(np.complex128)
    mt = ct(m, shards=2)
    assert_matches_numpy(st.linalg.inv(mt), np.linalg.inv(m), **TOL)
    assert_matches_numpy(st.linalg.det(mt), np.linalg.det(m), **TOL)
    rhs = W[:4, 0].astype(np.complex128)
    assert_matches_numpy(st.linalg.solve(mt, ct(rhs)), np.linalg.solve(m, rhs), **TOL)
    h = m @ m.conj().T  # Hermitian positive-definite: complex Cholesky, as torch
    assert_matches_numpy(st.linalg.cholesky(ct(h, shards=2)), np.linalg.cholesky(h), **TOL)
    u, v = ct(np.array([1j, 2.0])), ct(np.array([1j, 1.0]))
    assert st.vdot(u, v).item() == 3 + 0j and st.dot(u, v).item() == 1 + 0j  # torch's values
    n = st.linalg.vector_norm(ct(np.array([3 + 4j, 0j])), ord=1)
    assert n.dtype == st.float64 and n.item() == 5.0


def test_eig_and_eigvals_are_complex():
    assert st.linalg.eigvals(st.tensor([[0.0, 1.0], [-1.0, 0.0]])).tolist() == [1j, -1j]
    a = rng.standard_normal((2, 5, 5))
    w, v = st.linalg.eig(ct(a, shards=2))
    assert w.dtype == v.dtype == st.complex128
    wr, vr = np.linalg.eig(a)
    assert_matches_numpy(w, wr, **TOL)
    # A v = v diag(w)
    assert_matches_numpy(ct(a.astype(np.complex128)) @ v, (vr * wr[:, None, :]), **TOL)
    assert st.linalg.eigvals(st.eye(2)).dtype == st.complex64


# ----------------------------------------------------------------- the complex primitives
def test_real_imag_are_writable_views():
    z = ct(Z, shards=3)
    r, i = z.real, z.imag
    assert r.dtype == i.dtype == st.float32
    assert_matches_numpy(r, Z.real)
    assert_matches_numpy(st.imag(z), Z.imag)
    assert r.stride() == (8, 2) and i.storage_offset() == 1  # torch's strides in reals
    z.real[0] = 9.0  # writes through to z's shards, as torch
    z.imag = st.zeros(7, 4)
    exp = Z.copy()
    exp[0] = 9 + exp[0].imag * 1j
    exp.imag = 0
    assert_matches_numpy(z, exp)
    x = st.ones(2)
    assert x.real is x
    with pytest.raises(st.DTypeError, match="non-complex"):
        x.imag  # noqa: B018


def test_conj_angle_complex_polar():
    z = ct(Z, shards=2)
    assert_matches_numpy(z.conj(), Z.conj(), dtype=st.complex64)
    assert_matches_numpy(st.conj_physical(z), Z.conj())
    x = st.tensor([1.0, -2.0])
    assert x.conj() is x
    assert st.angle(st.tensor([-1.0, 0.0, -0.0, 2.0])).tolist()[1:] == [0.0, 0.0, 0.0]
    assert st.angle(st.tensor([-1, 2])).dtype == st.float32
    re, im = ct(Z.real.copy(), shards=3), ct(Z.imag.copy(), shards=2)
    assert_matches_numpy(st.complex(re, im), Z, dtype=st.complex64)
    with pytest.raises(st.DTypeError, match="float32 and float64|one dtype"):
        st.complex(re, im.double())
    with pytest.raises(st.DTypeError, match="int64"):
        st.complex(st.tensor([1]), st.tensor([2]))
    r, th = np.abs(Z), np.angle(Z)
    assert_matches_numpy(st.polar(ct(r), ct(th)), r * np.exp(1j * th), **TOL)


def test_view_as_real_and_complex():
    z = ct(Z, shards=3)
    v = st.view_as_real(z)
    assert v.shape == (7, 4, 2) and v.dtype == st.float32 and v.stride() == (8, 2, 1)
    assert_matches_numpy(v, np.stack([Z.real, Z.imag], -1))
    v[0, 0, 1] = 5.0  # a view: writes reach z
    assert z[0, 0].item().imag == 5.0
    back = st.view_as_complex(v)
    assert back.dtype == st.complex64
    assert_matches_numpy(back, z.numpy())
    with pytest.raises(st.ArgumentError, match="size 2"):
        st.view_as_complex(st.ones(3, 3))
    with pytest.raises(st.ArgumentError, match="stride 1"):
        st.view_as_complex(st.ones(2, 3).t())
    with pytest.raises(st.DTypeError, match="int64"):
        st.view_as_complex(st.ones(3, 2, dtype=st.int64))
    with pytest.raises(st.DTypeError, match="complex"):
        st.view_as_real(st.ones(2))


# ----------------------------------------------------------------- interop, repr, io
def test_numpy_interop_and_repr():
    z = ct(Z, shards=2)
    assert np.asarray(z).dtype == np.complex64 and z[0, 0].item() == complex(Z[0, 0])
    assert repr(st.tensor([1 + 2j, 3.25 - 1j])).startswith("tensor([1.0000+2.j, 3.2500-1.j]")
    assert "dtype" not in repr(st.tensor([1 + 2j]))  # complex64 is the default complex
    assert "dtype=sharded.complex128" in repr(st.tensor([1j], dtype=st.cdouble))
    assert repr(st.zeros(2, dtype=st.cfloat)).startswith("tensor([0.+0.j, 0.+0.j]")


def test_checkpoint_round_trip(tmp_path):
    z = ct(Z.astype(np.complex128), shards=3).requires_grad_()
    st.save({"z": z, "w": ct(W, shards=2)}, tmp_path / "ck")
    back = st.load(tmp_path / "ck", shards=2)
    assert back["z"].dtype == st.complex128 and back["z"].requires_grad
    assert_matches_numpy(back["z"], Z.astype(np.complex128))
    assert_matches_numpy(back["w"], W, dtype=st.complex64)


# ------------------------------------------------------------------------------ autograd
Z3 = np.array([1 + 2j, 3 - 1j, -2 + 0.5j])
W3 = np.array([2 - 1j, 1 + 1j, 0.5j])
# (loss, torch's z.grad, torch's w.grad), asked of torch with these inputs
TORCH_GRADS = {
    "abs_mul": (
        lambda z, w: (z * w).abs().sum(),
        [1 + 2j, 1.341641 - 0.447214j, -0.485071 + 0.121268j],
        [2 - 1j, 2.236068 + 2.236068j, 2.061553j],
    ),
    "real_div": (
        lambda z, w: (z / w).real.sum(),
        [0.4 - 0.2j, 0.5 + 0.5j, 2j],
        [0.2 + 0.4j, 0.5 - 1.5j, -8 - 2j],
    ),
    "angle": (
        lambda z, w: (z * w).angle().sum(),
        [-0.4 + 0.2j, 0.1 + 0.3j, -0.117647 - 0.470588j],
        [0.2 + 0.4j, -0.5 + 0.5j, -2 + 0j],
    ),
    "conj": (lambda z, w: (z * w.conj()).real.sum(), [2 - 1j, 1 + 1j, 0.5j], list(Z3)),
    "var": (
        lambda z, w: (z * w).var(),
        [1.166667 + 4.75j, 2.083333 - 0.75j, -1.166667 + 1.416667j],
        [4.75 - 1.166667j, 3.583333 + 3.416667j, 4.5 + 6.083333j],
    ),
    "pow": (
        lambda z, w: (z**2 * w**3).real.sum(),
        [48 + 14j, -8 - 16j, 0.125 - 0.5j],
        [21 - 72j, 36 - 48j, -2.8125 - 1.5j],
    ),
    "matmul": (
        lambda z, w: (z.reshape(3, 1) @ w.reshape(1, 3)).abs().sum(),
        [1.856062 + 3.712125j, 3.937303 - 1.312434j, -4.026365 + 1.006591j],
        [6.672336 - 3.336168j, 5.274945 + 5.274945j, 7.459898j],
    ),
    "view_as_real": (
        lambda z, w: (st.view_as_real(z * w) * st.tensor([1.0, 2.0], dtype=st.float64)).sum(),
        [5j, 3 + 1j, 1 - 0.5j],
        [5 + 0j, 1 + 7j, -1 - 4.5j],
    ),
    "prod": (
        lambda z, w: (z * w).prod().abs(),
        [4.609772 + 9.219544j, 6.914658 - 2.304886j, -10.846523 + 2.711631j],
        [9.219544 - 4.609772j, 11.524431 + 11.524431j, 46.097722j],
    ),
}


@pytest.mark.parametrize("name", sorted(TORCH_GRADS))
def test_gradients_match_torch(name):
    f, gz, gw = TORCH_GRADS[name]
    z = ct(Z3, shards=2).requires_grad_()
    w = ct(W3, shards=2).requires_grad_()
    f(z, w).backward()
    assert_matches_numpy(z.grad, gz, dtype=st.complex128, **TOL)
    assert_matches_numpy(w.grad, gw, dtype=st.complex128, **TOL)


def test_autograd_grad_and_complex_outputs():
    z = ct(Z3, shards=2).requires_grad_()
    y = z * (2 - 1j)
    with pytest.raises(st.autograd.AutogradError, match="real scalar"):
        y.sum().backward()  # torch: grad can be implicitly created only for real outputs
    (g,) = st.autograd.grad(y, z, grad_outputs=st.ones(3, dtype=st.cdouble))
    assert_matches_numpy(g, np.full(3, 2 + 1j))  # torch: v * conj(f'(z))
    x = st.tensor([0.5, 1.5], dtype=st.float64, requires_grad=True)
    (x * (1 + 1j)).abs().sum().backward()  # a real leaf of a complex graph: real gradient
    assert x.grad.dtype == st.float64
    assert_matches_numpy(x.grad, [np.sqrt(2)] * 2)


GRADCHECKS = {
    "exp_log": lambda a, b: (a.exp() * b).log(),
    "sqrt_div": lambda a, b: a.sqrt() / b,
    "abs_angle": lambda a, b: a.abs() * b.angle(),
    "real_imag": lambda a, b: a.real * b.imag,
    "complex_polar": lambda a, b: st.complex(a.real, b.imag) * st.polar(a.abs(), b.real),
    "sgn_conj": lambda a, b: st.sgn(a) * b.conj(),
    "pow": lambda a, b: a**b,
    "mean_var": lambda a, b: a.mean() * b.var(),
    "logsumexp": lambda a, b: st.logsumexp(a * b, 0),
    "inv": lambda a, b: st.linalg.inv(a.reshape(3, 1) * b.reshape(1, 3) + st.eye(3) * 2),
    "view_as_complex": lambda a, b: st.view_as_complex(st.view_as_real(a) * b.abs().unsqueeze(-1)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck_complex(name):
    a = ct(Z3, shards=2).requires_grad_()
    b = ct(W3 + 0.5, shards=3).requires_grad_()
    assert gradcheck(GRADCHECKS[name], (a, b))


def test_gradcheck_eigvals_of_real_matrix():
    m = rng.standard_normal((3, 3)) + np.diag([1.0, 4.0, 9.0])
    x = ct(m, shards=2).requires_grad_()
    assert gradcheck(lambda a: st.linalg.eigvals(a), (x,))


def test_isinf_isreal_isposinf_of_complex_as_torch():
    """isinf: either part infinite; isreal: imaginary part 0; isposinf/isneginf refuse complex."""
    c = st.tensor([complex(1, math.inf), complex(math.nan, 0), complex(2, 0), 1j], shards=2)
    assert st.isinf(c).tolist() == [True, False, False, False]
    assert c.isreal().tolist() == [False, True, True, False]
    for f in (st.isposinf, st.isneginf):
        with pytest.raises(RuntimeError):
            f(c)
    assert st.is_floating_point(st.tensor([1.0])) and not st.is_floating_point(c)


def test_sgn_of_complex_with_inf_or_nan_is_nan_as_torch():
    z = st.tensor([complex(math.inf, 1), complex(0, 0), complex(math.nan, 0), 3 + 4j], shards=2)
    r = st.sgn(z).numpy()
    assert np.isnan(r[0].real) and np.isnan(r[0].imag) and np.isnan(r[2].imag)
    assert r[1] == 0 and r[3] == pytest.approx(0.6 + 0.8j)
