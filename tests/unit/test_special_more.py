"""torch.special's Bessel functions, airy_ai, erfcx, orthogonal polynomials and igamma/igammac
against torch's values (tests/unit/data/special_more_torch.npz, written by
scripts/torch_refs_special.py: the tests never import torch): float64 and float32, integer
inputs promoted to the default float dtype, special values, whole and split tensors, and the
gradients torch has (float64)."""

from pathlib import Path

import numpy as np
import pytest

import sharded as st
from sharded.errors import AutogradError
from sharded.ops.elementwise import kernels as K
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "special_more_torch.npz")
f64, f32 = st.float64, st.float32

# torch's float64 J and Y are off by up to 1.2e-7 (absolute, bessel_j0(5.69)) and airy_ai by
# 6e-9; SciPy's (Cephes) are within a few ulp (checked against mpmath), so those compare
# with torch's error as the tolerance; the others within a few ulp.
UNARY = {
    "airy_ai": 1e-8,
    "bessel_j0": 3e-7,
    "bessel_j1": 3e-7,
    "bessel_y0": 3e-7,
    "bessel_y1": 3e-7,
    "modified_bessel_i0": 0,
    "modified_bessel_i1": 0,
    "modified_bessel_k0": 0,
    "modified_bessel_k1": 0,
    "scaled_modified_bessel_k0": 0,
    "scaled_modified_bessel_k1": 0,
    "spherical_bessel_j0": 0,
    "erfcx": 0,
}
POLYS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


def _same(got, exp, rtol, atol):
    """Equal values (NaN where torch's is, infinities and their signs the same)."""
    got = np.asarray(got, dtype=np.float64)
    exp = np.asarray(exp, dtype=np.float64)
    assert got.shape == exp.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exp))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(exp))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(exp))
    np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values(name):
    f = getattr(st.special, name)
    x = st.tensor(REF["x"], dtype=f64, shards=2)
    y = f(x)
    assert y.dtype == f64 and y.layout == x.layout
    _same(y.numpy(), REF[f"{name}/f64"], 1e-13, UNARY[name])
    # float32 in float32 (torch computes in float32: its own error, ~1e-5 by the zeros)
    y = f(st.tensor(REF["xs"], dtype=f32))
    assert y.dtype == f32
    _same(y.numpy(), REF[f"{name}/f32"], 4e-5, 3e-7)
    # integers give the default float dtype, float32
    y = f(st.arange(-3, 6, shards=2))
    assert y.dtype == f32
    _same(y.numpy(), REF[f"{name}/int"], 2e-5, 3e-7)


def test_unary_special_values():
    t = st.tensor([0.0, -1.0, 104.0, -np.inf, np.inf], dtype=f64)
    y0 = st.special.bessel_y0(t).tolist()
    assert y0[0] == -np.inf and np.isnan(y0[1])  # negative x
    assert st.special.modified_bessel_k1(t).tolist()[0] == np.inf
    airy = st.special.airy_ai(t).tolist()
    assert airy[2] == 0.0 and np.isnan(airy[3]) and np.isnan(airy[4])  # torch's, not SciPy's
    # far to the left SciPy's airy gives NaN: torch's asymptotic value
    assert st.special.airy_ai(st.tensor([-1e10], dtype=f64)).tolist() == pytest.approx(
        [3.6400e-05], rel=1e-4
    )
    assert st.special.spherical_bessel_j0(st.tensor([True, False])).tolist() == pytest.approx(
        [0.8414709568023682, 1.0]
    )
    assert st.special.bessel_j0(st.tensor([True])).dtype == f32


def test_unary_dtype_errors_and_no_gradient():
    with pytest.raises(st.UnsupportedDType, match="bessel_j0 is not implemented for float16"):
        st.special.bessel_j0(st.tensor([1.0], dtype=st.float16))
    with pytest.raises(st.UnsupportedDType, match="complex64"):
        st.special.airy_ai(st.tensor([1j]))
    with pytest.raises(st.DTypeError, match="argument 'input'.*must be a tensor, not float"):
        st.special.bessel_j1(0.5)
    # torch defines no derivative of the Bessel functions: their results do not require grad
    x = st.tensor([0.5, 1.0], dtype=f64, requires_grad=True)
    assert not st.special.bessel_j0(x).requires_grad
    assert not st.special.modified_bessel_k0(x).requires_grad


def test_erfcx_gradient():
    a = REF["x"]
    x = st.tensor(a, dtype=f64, shards=2, requires_grad=True)
    st.special.erfcx(x).sum().backward()
    _same(x.grad.numpy(), REF["erfcx/grad"], 1e-12, 0)
    x = st.tensor([-1.5, 0.0, 0.7, 4.0], dtype=f64, shards=2, requires_grad=True)
    assert st.autograd.gradcheck(st.special.erfcx, (x,))


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_values(name):
    f = getattr(st.special, name)
    px, pn = REF["px"], REF["pn"]
    # n < 0, NaN/inf n (0), fractional n (truncated), endpoints, |x| > 1, n past Hermite's
    # limit (NaN), the closed forms for large n and the recurrence's overflow to NaN
    y = f(st.tensor(px[:, None], dtype=f64, shards=2), st.tensor(pn[None], dtype=f64))
    assert y.dtype == f64
    _same(y.numpy(), REF[f"{name}/f64"], 1e-9, 1e-12)
    # float32 computes in float32, as torch (its overflow at 3e38); the closed forms of degree
    # 1000 differ by the float32 ulps of acos and cos times n (more by the endpoints)
    y = f(st.tensor(px[:, None], dtype=f32), st.tensor(pn[None], dtype=f32, shards=2, dim=1))
    assert y.dtype == f32
    _same(y.numpy(), REF[f"{name}/f32"], 1e-3, 2e-4)
    # int64 x and n: float32
    y = f(st.arange(-2, 4, shards=2)[:, None], st.arange(-1, 5)[None])
    assert y.dtype == f32
    _same(y.numpy(), REF[f"{name}/int"], 1e-6, 0)


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_of_operands_broadcast_across_the_middle_dim(name):
    # x (2, 1, 3) against n (1, 2, 1): the broadcast operands' natural layout is not C
    # order, which once left every recurrence's result at 0
    f = getattr(st.special, name)
    x = np.array([[[-8.5, 0.3, 2.0]], [[0.7, -0.4, 5.0]]])
    n = np.array([[[4.55], [3.0]]])
    want = np.stack(
        [[f(st.tensor(x[i, 0]), float(n[0, j, 0])).numpy() for j in range(2)] for i in range(2)]
    )
    got = f(st.tensor(x, dtype=f64, shards=2), st.tensor(n, dtype=f64)).numpy()
    _same(got, want, 1e-12, 0)
    zero_d = f(st.tensor(x[0, 0, 0]), st.tensor(n[0, 1, 0])).numpy()  # 0-d operands stay 0-d
    assert zero_d.shape == () and zero_d == want[0, 1, 0]
    if name == "chebyshev_polynomial_t":  # torch: T_4(-8.5), T_3(-8.5)
        assert got[0, :, 0].tolist() == pytest.approx([41183.5, -2431.0], rel=1e-14)


def test_polynomial_scalars_and_dtypes():
    cheb = st.special.chebyshev_polynomial_t
    # a Python n, a Python x with a tensor n (torch's overloads)
    assert cheb(st.tensor([0.5, 2.0], dtype=f64, shards=2), 3).tolist() == [-1.0, 26.0]
    assert cheb(0.5, st.tensor([2, 3])).tolist() == [-0.5, -1.0]
    assert cheb(0.5, st.tensor([2, 3])).dtype == f32
    assert cheb(st.tensor([0.5]), st.tensor([2.0], dtype=f64)).dtype == f64
    assert st.special.legendre_polynomial_p(st.tensor([1, 2]), 2.5).dtype == f32
    with pytest.raises(st.DTypeError, match="one of 'input' and 'n' must be a tensor"):
        cheb(0.5, 3)
    with pytest.raises(st.UnsupportedDType, match="float16"):
        cheb(st.tensor([0.5], dtype=st.float16), 2)
    x = st.tensor([0.5], dtype=f64, requires_grad=True)
    assert not st.special.hermite_polynomial_h(x, 3).requires_grad
    assert K.order(np, np.array([2.7, -0.5, np.nan, -np.inf, 1e30])).tolist() == [2, 0, -1, -1, -1]


def test_polynomial_large_degree():
    """Large degrees: Legendre and Laguerre where bounded in SciPy's recurrence (torch's values
    within their accumulated rounding), the overflowing ones stopped at their NaN, the
    Chebyshev closed form at n = 10^9."""
    x = st.tensor([0.3, 2.0, -0.999, 1.0, -1.0], dtype=f64, shards=2)
    p = st.special.legendre_polynomial_p(x, 20000).tolist()
    assert p[0] == pytest.approx(0.004475861477861899, rel=1e-9)
    assert np.isnan(p[1])  # overflow to inf, then inf - inf
    assert p[2] == pytest.approx(0.0011880669509617791, rel=1e-8)
    assert p[3:] == [1.0, 1.0]
    p = st.special.legendre_polynomial_p(st.tensor([0.3], dtype=f64), 10**6).tolist()
    assert p == pytest.approx([-0.000545061867770907], rel=1e-9)
    lag = st.special.laguerre_polynomial_l(st.tensor([0.5, 30.0], dtype=f64), 10**6).tolist()
    assert lag == pytest.approx([0.026118760473562232, -11772.332762900394], rel=1e-9)
    # the recurrence on the elements of small degree, SciPy's on the large ones, one tensor
    n = st.tensor([3.0, 20000.0], dtype=f64)
    assert st.special.legendre_polynomial_p(st.tensor([0.3, 0.3], dtype=f64), n).tolist() == (
        pytest.approx([-0.3825, 0.004475861477861899], rel=1e-9)
    )
    t = st.special.chebyshev_polynomial_t(st.tensor([0.5], dtype=f64), 1e9).tolist()
    # torch: -0.49999994; n * acos(x) near 1e9 carries 1.2e-7 of rounding either way
    assert t == pytest.approx([-0.49999994075890575], abs=1e-6)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_values(name):
    ga, gx = REF["ga"], REF["gx"]
    f = getattr(st, name)
    # torch's boundary values in torch's order: P(nan, 0) = 0, P(inf, nan) = 0, P(0, 0) nan...
    # (torch's P(100, 120) is 3e-11 off, SciPy's exact to the ulp: an absolute 1e-10)
    y = f(st.tensor(ga[:, None], dtype=f64, shards=2), st.tensor(gx[None], dtype=f64))
    assert y.dtype == f64
    _same(y.numpy(), REF[f"{name}/f64"], 1e-12, 1e-10)
    y = f(st.tensor(ga[:, None], dtype=f32), st.tensor(gx[None], dtype=f32))
    assert y.dtype == f32
    _same(y.numpy(), REF[f"{name}/f32"], 2e-5, 1e-7)  # torch computes in float32
    # the method, in place, and st.special's name
    a = st.tensor(ga[1:7], dtype=f64, shards=2)
    x = st.tensor(gx[1:7], dtype=f64, shards=2)
    special = getattr(st.special, "gammainc" if name == "igamma" else "gammaincc")
    assert_matches_numpy(getattr(a, name)(x), special(a, x).numpy(), rtol=0, atol=0)
    out = getattr(a.clone(), name + "_")(x)
    assert_matches_numpy(out, REF[f"{name}/f64"][1:7, 1:7].diagonal(), rtol=1e-12, atol=0)


def test_igamma_dtypes_and_errors():
    one = st.tensor([1.0])
    assert st.igamma(one, st.tensor([2.0], dtype=f64)).dtype == f64
    assert st.igamma(st.tensor([True]), st.tensor([2.0])).dtype == f32
    assert st.igamma(one, st.tensor([2])).dtype == f32
    assert (
        st.igamma(st.tensor([1.0], dtype=st.float16), st.tensor([2.0], dtype=st.float16)).dtype
        == st.float16
    )
    with pytest.raises(st.UnsupportedDType, match="igamma is not implemented for int64"):
        st.igamma(st.tensor([1, 2]), st.tensor([3]))
    with pytest.raises(st.DTypeError, match="argument 'other' .* must be a tensor, not float"):
        st.igamma(one, 2.0)
    with pytest.raises(st.DTypeError, match="argument 'other'"):
        st.special.gammaincc(one, 2.0)
    with pytest.raises(st.UnsupportedDType, match="igammac is not implemented for bool"):
        st.tensor([True]).igammac(st.tensor([False]))
    with pytest.raises(st.DTypeError, match="can't be cast"):
        st.tensor([1, 2]).igamma_(st.tensor([1.0]))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_gradient(name):
    a = st.tensor(REF[f"{name}/grad_a"], dtype=f64, shards=2)
    x = st.tensor(REF[f"{name}/grad_x"], dtype=f64, shards=2, requires_grad=True)
    getattr(st, name)(a, x).sum().backward()
    _same(x.grad.numpy(), REF[f"{name}/grad"], 1e-12, 1e-15)
    assert st.autograd.gradcheck(lambda t: getattr(st, name)(a, t), (x,))
    # torch has no derivative in a: a typed error, as its NotImplementedError
    a.requires_grad_(True)
    y = getattr(st, name)(a, x.detach())
    with pytest.raises(AutogradError, match="derivative for 'input' \\(a\\) is not implemented"):
        y.sum().backward()
