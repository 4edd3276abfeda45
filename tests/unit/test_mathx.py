"""cov, corrcoef, cdist, dist, renorm, the trapezoid rule, combinatorics, isin, frexp/ldexp,
unravel_index, sum_to_size, the legacy linalg wrappers, predicates, casts, the top-level
in-place forms, threads and print options: values, dtypes, shapes, errors and gradients are
torch 2.13's answers (written as literals), on layouts split along the dim each op works on
(uneven shards included)."""

import math
import warnings

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F64 = st.float64
X = [[0.0, 1.0, 2.0, 5.0, -1.0], [2.0, 1.0, 0.5, 0.0, 3.0], [1.0, 1.0, 2.0, 3.0, 4.0]]
SPLITS = [dict(), dict(dim=0, shards=2), dict(dim=1, shards=2), dict(dim=1, shards=3)]


def close(t, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(t.tolist(), dtype=complex), want, rtol=tol, atol=tol)


# ----------------------------------------------------------------------- cov, corrcoef
@pytest.mark.parametrize("place", SPLITS)
def test_cov_corrcoef_values_and_gradients(place):
    x = st.tensor(X, dtype=F64, **place, requires_grad=True)
    close(
        st.cov(x),
        [[5.3, -2.525, 0.15], [-2.525, 1.45, 0.425], [0.15, 0.425, 1.7]],
    )
    close(
        x.corrcoef(),
        [[1.0, -0.9108344462189591, 0.04997224534895776],
         [-0.9108344462189593, 1.0, 0.2706951460018548],
         [0.04997224534895776, 0.27069514600185485, 1.0]],
    )  # fmt: skip
    aw = st.tensor([0.5, 1.0, 2.0, 1.0, 0.25], dtype=F64)
    close(
        x.cov(correction=0, fweights=st.tensor([1, 2, 0, 3, 1]), aweights=aw),
        [[4.948960302457467, -1.6824196597353496, 1.6672967863894137],
         [-1.6824196597353496, 0.661625708884688, -0.3742911153119093],
         [1.6672967863894137, -0.3742911153119093, 1.1001890359168243]],
    )  # fmt: skip
    st.cov(x, aweights=aw).sum().backward()
    row = [-0.5384615384615385, -1.076923076923077, -0.4, 1.8461538461538463, 0.1692307692307692]
    close(x.grad, [row] * 3)
    x.grad = None
    (st.corrcoef(x) * st.arange(9.0, dtype=F64).reshape(3, 3)).sum().backward()
    close(
        x.grad,
        [[-0.7612447129769009, -0.9689731215156528, -0.3300416687246137, 0.6148859936970078,
          1.4453735095201596],
         [-2.750292302770625, -2.4576685537016822, -0.2202041565947434, 2.7387132672202816,
          2.6894517458467693],
         [1.0485230716389204, -0.19596958960375602, -1.0215558112536973, -0.5145488235980998,
          0.6835511528166329]],
        1e-7,
    )  # fmt: skip


@pytest.mark.parametrize("shards", [1, 2])
def test_cov_gradient_with_respect_to_aweights_like_torch(shards):
    # the weighted normalisation (sum(w) - sum(w * aw) / sum(w)) is part of torch's gradient
    x = st.tensor([[1.0, 2.0, 4.0, 7.0], [0.0, 3.0, 1.0, 2.0]], dtype=F64, requires_grad=True)
    aw = st.tensor([1.0, 2.0, 0.5, 3.0], dtype=F64, requires_grad=True, shards=shards)
    g = st.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    c = st.cov(x, aweights=aw)
    close(c, [[10.071428571428571, 0.5], [0.5, 1.5]])
    (c * g).sum().backward()
    close(aw.grad, [8.918367346938776, -3.683673469387757, -3.959183673469388, 0.142857142857141])
    aw.grad = None
    c = st.cov(x, fweights=st.tensor([1, 2, 1, 1]), aweights=aw, correction=0)
    (c * g).sum().backward()
    close(aw.grad, [5.612863830653368, -2.449012823122329, -0.560146549969469, -0.144921636474659])


def test_cov_edge_cases_and_dtypes():
    assert st.cov(st.tensor([1, 2, 4], shards=2)).dtype == st.float32  # ints: default float
    assert abs(st.cov(st.tensor([1, 2, 4])).item() - 2.3333333) < 1e-6
    assert st.corrcoef(st.tensor([1, 2, 4])).item() == 1.0  # a 0-d cov: c / c
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(st.cov(st.tensor(3.0)).item())
    with pytest.warns(UserWarning):
        assert np.isnan(st.cov(st.ones(2, 0)).numpy()).all()
    c = st.cov(st.tensor([[1 + 1j, 2, 3j], [1, 0, 1]], dim=1, shards=2))
    close(c, [[3.3333333 + 0j, -0.5 + 0.6666667j], [-0.5 - 0.6666667j, 0.3333333 + 0j]], 1e-6)
    r = st.corrcoef(st.tensor([[1 + 1j, 2, 3j], [1, 0, 1]]))
    close(r, [[1, -0.4743416 + 0.6324555j], [-0.4743416 - 0.6324555j, 1]], 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = st.corrcoef(st.tensor([[1.0, 1, 1], [1, 2, 3]])).tolist()
    assert np.isnan(r[0]).all() and np.isnan(r[1][0]) and r[1][1] == 1.0


def test_cov_errors():
    x = st.tensor([[1.0, 2, 3], [0, 1, 0]])
    with pytest.raises(TypeError, match="integral"):
        st.cov(x, fweights=st.tensor([1.0, 2, 1]))
    with pytest.raises(TypeError, match="floating point"):
        st.cov(x, aweights=st.tensor([1, 2, 1]))
    with pytest.raises(RuntimeError, match="cannot be negative"):
        st.cov(x, fweights=st.tensor([1, -2, 1]))
    with pytest.raises(RuntimeError, match="same numel"):
        st.cov(x, fweights=st.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="two or fewer dimensions"):
        st.cov(st.ones(2, 3, 4))
    assert x.tolist() == [[1.0, 2, 3], [0, 1, 0]]  # operands intact


# ------------------------------------------------------------------------ cdist, dist
CD = {  # p -> (distances, grad of x1, grad of x2) for the weights arange(12).reshape(3, 4)
    0: ([[1, 1, 0, 2], [2, 2, 2, 1], [1, 2, 2, 2]], [[0, 0]] * 3, [[0, 0]] * 4),
    1: ([[1, 1, 0, 3], [3, 5, 4, 1], [2, 2, 3, 4]], [[-3, -2], [15, 22], [8, -38]],
        [[-4, 4], [-14, 3], [-16, 4], [14, 7]]),
    2: ([[1, 1, 0, 2.23606797749979], [2.23606797749979, 3.605551275463989, 2.8284271247461903,
          1], [2, 1.4142135623730951, 2.23606797749979, 3.1622776601683795]],
        [[-2.6832815729997477, -0.34164078649987384], [8.804996050245261, 18.98060092280817],
         [7.35759155949329, -33.74374921923374]],
        [[-1.7888543819998317, 4.422291236000337], [-9.137462011805074, 1.2037095589897087],
         [-8.714776642118863, 4.7016312228798744], [6.161786999184965, 4.777157065055525]]),
    math.inf: ([[1, 1, 0, 2], [2, 3, 2, 1], [2, 1, 2, 3]], [[-3, 1], [6, 22], [9, -38]],
               [[0, 4], [-9, 3], [-6, 4], [3, 4]]),
}  # fmt: skip


@pytest.mark.parametrize("p", list(CD))
@pytest.mark.parametrize("place", [dict(), dict(dim=0, shards=2), dict(dim=1, shards=2)])
def test_cdist_values_and_gradients(p, place):
    a = st.tensor([[0.0, 1], [2, 3], [1, -1]], dtype=F64, **place, requires_grad=True)
    b = st.tensor([[1.0, 1], [0, 0], [0, 1], [2, 2]], dtype=F64, shards=3, requires_grad=True)
    d = st.cdist(a, b, p=p)
    (d * st.arange(12.0, dtype=F64).reshape(3, 4)).sum().backward()
    want, ga, gb = CD[p]
    close(d, want)
    close(a.grad, ga)
    close(b.grad, gb)


def test_cdist_batched_shapes_and_errors():
    a = st.tensor(np.arange(24.0).reshape(2, 4, 3), dtype=st.float32, dim=1, shards=3)
    b = st.tensor(np.ones((5, 3)), dtype=st.float32)
    assert st.cdist(a, b).shape == (2, 4, 5)
    assert st.cdist(st.ones(2, 1, 4, 3), st.ones(3, 2, 3)).shape == (2, 3, 4, 2)
    assert st.cdist(st.ones(0, 2), st.ones(3, 2)).shape == (0, 3)
    assert st.cdist(st.ones(2, 0), st.ones(3, 0)).tolist() == [[0.0] * 3] * 2
    assert st.cdist(a, b, compute_mode="use_mm_for_euclid_dist").shape == (2, 4, 5)
    with pytest.raises(ValueError, match="compute_mode"):
        st.cdist(st.ones(2, 2), st.ones(2, 2), compute_mode="bad")
    with pytest.raises(RuntimeError, match="same number of columns"):
        st.cdist(st.ones(2, 2), st.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2D"):
        st.cdist(st.ones(2), st.ones(2, 2))
    with pytest.raises(RuntimeError, match="non-negative p"):
        st.cdist(st.ones(2, 2), st.ones(2, 2), p=-1)
    with pytest.raises(RuntimeError, match="floating-point"):
        st.cdist(st.ones(2, 2, dtype=st.int64), st.ones(2, 2, dtype=st.int64))
    with pytest.raises(RuntimeError):
        st.cdist(st.ones(2, 2), st.ones(2, 2, dtype=F64))


@pytest.mark.parametrize(
    "p, want", [(2, 3.1622776601683795), (0, 4.0), (math.inf, 2.0), (-math.inf, 0.0), (1, 6.0)]
)
def test_dist(p, want):
    a = st.tensor([[0.0, 1.0], [2.0, 3.0], [1.0, -1.0]], dtype=F64, dim=0, shards=2)
    r = a.dist(st.tensor([1.0, 1.0], dtype=F64), p)
    assert r.shape == () and r.dtype == F64
    assert abs(r.item() - want) < 1e-12
    with pytest.raises(TypeError):
        st.dist(a, 2.0)
    with pytest.raises(RuntimeError):
        st.dist(st.tensor([1, 2]), st.tensor([1, 2]))


# --------------------------------------------------------------------------- renorm
@pytest.mark.parametrize("place", [dict(), dict(dim=0, shards=3), dict(dim=1, shards=2)])
def test_renorm_values_gradient_and_inplace(place):
    data = [[1.0, 2, 2], [3, 0, 4], [0.1, 0.1, 0.1], [5, 5, 5]]
    x = st.tensor(data, dtype=F64, **place, requires_grad=True)
    w = st.arange(12.0, dtype=F64).reshape(4, 3)
    r = st.renorm(x, 2, 0, 3.0)
    (r * w).sum().backward()
    close(r, [[1, 2, 2], [1.7999999640000006, 0, 2.399999952000001], [0.1] * 3,
              [1.7320507875688775] * 3])  # fmt: skip
    close(x.grad, [[0, 1, 2], [-0.2879999524800015, 2.399999952000001, 0.2160000513599979],
                   [6, 7, 8], [-0.3464101175137762, 3.99999992737562e-08, 0.3464101975137747]],
          1e-7)  # fmt: skip
    x.grad = None
    r = x.renorm(1, -1, 6.0)
    (r * w).sum().backward()
    close(r[0], [0.6593406520951577, 1.6901408212656222, 1.0810810713416121])
    close(x.grad[0], [-3.956043869097937, -5.42749437994362, -2.804967069012038], 1e-7)
    y = st.tensor(data, **place)
    assert y.renorm_(math.inf, 0, 2.0) is y
    close(y[1], [1.5, 0, 2], 1e-6)


def test_renorm_errors():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        st.renorm(st.ones(3), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        st.renorm(st.ones(3, 3), 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="maxnorm"):
        st.renorm(st.ones(3, 3), 2, 0, -1.0)
    with pytest.raises(IndexError):
        st.renorm(st.ones(3, 3), 2, 2, 1.0)
    with pytest.raises(RuntimeError):
        st.renorm(st.ones(3, 3, dtype=st.int64), 2, 0, 1.0)


# ----------------------------------------------------------------------- trapezoid
Y = [[1.0, 2, 4, 0, 3], [0, 3, 1, 2, 2]]
XS = [0.0, 1, 3, 3.5, 6]


@pytest.mark.parametrize("place", [dict(), dict(dim=1, shards=2), dict(dim=1, shards=3),
                                   dict(dim=0, shards=2)])  # fmt: skip
def test_trapezoid_family(place):
    y = st.tensor(Y, dtype=F64, **place, requires_grad=True)
    xs = st.tensor(XS, dtype=F64, shards=2)
    close(st.trapezoid(y, xs), [12.25, 11.25])
    close(st.trapz(y, xs, dim=-1), [12.25, 11.25])
    close(st.cumulative_trapezoid(y, xs), [[1.5, 7.5, 8.5, 12.25], [1.5, 5.5, 6.25, 11.25]])
    close(st.trapezoid(y, dim=0, dx=0.5), [0.25, 1.25, 1.25, 0.5, 1.25])
    close(st.trapezoid(y), [8.0, 7.0])
    close(st.trapz(y, dx=2.0), [16.0, 14.0])
    close(st.cumulative_trapezoid(y, dim=0), [[0.5, 2.5, 2.5, 1, 2.5]])
    (st.trapezoid(y, xs) * st.tensor([1.0, 2.0], dtype=F64)).sum().backward()
    close(y.grad, [[0.5, 1.5, 1.25, 1.5, 1.25], [1.0, 3.0, 2.5, 3.0, 2.5]])
    close(st.trapezoid(y.detach(), st.tensor([[0.0, 1, 3, 3.5, 6], [0, 2, 2, 2, 3]])), [12.25, 5.0])


def test_trapezoid_dtypes_edges_and_errors():
    r = st.trapezoid(st.tensor([1, 2, 4]))
    assert r.dtype == st.float32 and r.item() == 4.5
    assert st.trapezoid(st.tensor([1, 2, 4]), st.tensor([1, 2, 5])).item() == 10.5
    assert st.cumulative_trapezoid(st.tensor([1, 2, 4])).tolist() == [1.5, 4.5]
    assert st.trapezoid(st.tensor([1.0])).item() == 0.0
    e = st.trapezoid(st.ones(3, 0, dtype=st.int64))
    assert e.dtype == st.int64 and e.tolist() == [0, 0, 0]  # torch: zeros of y's dtype
    assert st.cumulative_trapezoid(st.tensor([1.0])).shape == (0,)
    close(st.trapezoid(st.tensor([1 + 1j, 2])), [1.5 + 0.5j])
    with pytest.raises(RuntimeError, match="one `x` value"):
        st.trapezoid(st.ones(2, 3), st.ones(2))
    with pytest.raises(TypeError):
        st.trapezoid(st.ones(3), 2.0)
    with pytest.raises(TypeError):
        st.trapezoid(st.ones(3), st.ones(3), dx=1.0)
    with pytest.raises(RuntimeError, match="bool"):
        st.trapezoid(st.tensor([True, False]))
    with pytest.raises(IndexError):
        st.trapezoid(st.tensor(1.0))


# ---------------------------------------------------------- combinations, cartesian
def test_combinations_values_gradients_and_edges():
    x = st.tensor([1.0, 2, 3, 4], dtype=F64, shards=3, requires_grad=True)
    c = st.combinations(x, 3)
    assert c.tolist() == [[1, 2, 3], [1, 2, 4], [1, 3, 4], [2, 3, 4]]
    (c * st.arange(12.0, dtype=F64).reshape(4, 3)).sum().backward()
    assert x.grad.tolist() == [9.0, 14.0, 19.0, 24.0]
    x.grad = None
    c = st.combinations(x, 2, with_replacement=True)
    assert c.shape == (10, 2) and c[4].tolist() == [2.0, 2.0]
    (c * st.arange(20.0, dtype=F64).reshape(10, 2)).sum().backward()
    assert x.grad.tolist() == [13.0, 42.0, 61.0, 74.0]
    i = st.tensor([1, 2, 3], shards=2)
    assert st.combinations(i).tolist() == [[1, 2], [1, 3], [2, 3]]
    assert st.combinations(i, r=4).shape == (0, 4) and st.combinations(i, r=4).dtype == st.int64
    assert st.combinations(i, r=0).shape == (0,)
    assert st.combinations(i, r=1).tolist() == [[1], [2], [3]]
    assert st.combinations(st.tensor([]), r=2).shape == (0, 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        st.combinations(i, r=-1)
    with pytest.raises(RuntimeError, match="1D vector"):
        st.combinations(st.ones(2, 2))


def test_cartesian_prod():
    a, b = st.tensor([1, 2], shards=2), st.tensor([3, 4, 5], shards=3)
    assert st.cartesian_prod(a, b).tolist() == [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]
    assert st.cartesian_prod(a).tolist() == [1, 2]
    assert st.cartesian_prod(a, b, a).shape == (12, 3)
    with pytest.raises(RuntimeError, match="same dtype"):
        st.cartesian_prod(a, st.tensor([3.0]))
    with pytest.raises(RuntimeError, match="1D vector"):
        st.cartesian_prod(st.ones(2, 2))
    with pytest.raises(RuntimeError, match="non-empty"):
        st.cartesian_prod()


# ------------------------------------------------------------------------------- isin
@pytest.mark.parametrize("place", [dict(), dict(dim=0, shards=2), dict(dim=1, shards=3)])
def test_isin(place):
    e = st.tensor([[1, 2, 3], [4, 5, 6]], **place)
    t = st.tensor([[6, 2], [9, 9]], shards=2)
    assert st.isin(e, t).tolist() == [[False, True, False], [False, False, True]]
    assert st.isin(e, t, invert=True).tolist() == [[True, False, True], [True, True, False]]
    assert st.isin(e, 5).tolist() == [[False] * 3, [False, True, False]]
    assert st.isin(e, st.tensor([], dtype=st.int64)).tolist() == [[False] * 3] * 2
    assert st.isin(e, st.tensor([], dtype=st.int64), invert=True).tolist() == [[True] * 3] * 2
    assert st.isin(e, st.tensor([2.5, 3.0]), assume_unique=True).tolist()[0] == [0, 0, 1]
    r = st.isin(2, st.tensor([1, 2]))
    assert r.shape == () and r.item() is True
    f = st.isin(st.tensor([1.0, float("nan")]), st.tensor([float("nan"), 1.0]))
    assert f.tolist() == [True, False]
    with pytest.raises(RuntimeError, match="(?i)bool"):
        st.isin(st.tensor([True]), st.tensor([True]))
    with pytest.raises(RuntimeError, match="complex"):
        st.isin(st.tensor([1j]), st.tensor([1j]))
    with pytest.raises(TypeError):
        st.isin(2, 3)


# ------------------------------------------------------------------- diagflat and co
def test_diagflat_and_gradient():
    x = st.tensor([[1.0, 2], [3, 4]], dtype=F64, dim=1, shards=2, requires_grad=True)
    d = x.diagflat()
    assert d.tolist() == [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 3, 0], [0, 0, 0, 4]]
    (d * st.arange(16.0, dtype=F64).reshape(4, 4)).sum().backward()
    assert x.grad.tolist() == [[0.0, 5.0], [10.0, 15.0]]
    assert st.diagflat(st.tensor([1, 2]), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert st.diagflat(st.tensor([1, 2]), -2).tolist()[2:] == [[1, 0, 0, 0], [0, 2, 0, 0]]
    assert st.diagflat(st.tensor(5.0)).tolist() == [[5.0]]
    assert st.diagflat(st.tensor([])).shape == (0, 0)


def test_frexp_ldexp():
    v = [1.5, -0.0, 0.0, math.inf, math.nan, 1e-40, 3.0, -7.25]
    m, e = st.frexp(st.tensor(v, shards=3))
    assert e.dtype == st.int32 and m.dtype == st.float32
    assert e.tolist() == [1, 0, 0, 0, 0, -132, 2, 3]
    close(m, [0.75, 0, 0, math.inf, math.nan, 0.5444488525390625, 0.75, -0.90625], 1e-6)
    m, e = st.tensor(v, dtype=F64).frexp()
    assert e.tolist()[5] == -132 and m.dtype == F64
    x = st.tensor([1.5, 3.0], requires_grad=True)
    x.frexp()[0].sum().backward()
    assert x.grad.tolist() == [0.5, 0.25]
    with pytest.raises(RuntimeError, match="floating-point"):
        st.frexp(st.tensor([1, 2]))
    r = st.ldexp(st.tensor([1, 2], shards=2), st.tensor([3, 4]))
    assert r.dtype == st.float32 and r.tolist() == [8.0, 32.0]
    assert st.ldexp(st.tensor([1.0, 1.0, 1.0]), st.tensor([-1, 0, 2])).tolist() == [0.5, 1, 4]
    assert st.ldexp(st.tensor([1.0], dtype=F64), st.tensor([3])).dtype == F64
    close(st.ldexp(st.tensor([1.0, 2.0]), st.tensor([3.5, 4])), [11.3137085, 32.0], 1e-6)
    y = st.tensor([1.0, 2.0])
    assert y.ldexp_(st.tensor([1, 2])) is y and y.tolist() == [2.0, 8.0]
    with pytest.raises(RuntimeError):
        st.tensor([1, 2]).ldexp_(st.tensor([1, 1]))
    with pytest.raises(TypeError):
        st.ldexp(st.tensor([1.0]), 3)


def test_scalar_tensor():
    s = st.scalar_tensor(3)
    assert s.shape == () and s.dtype == st.float32 and s.item() == 3.0
    assert st.scalar_tensor(True).item() == 1.0
    assert st.scalar_tensor(3, dtype=st.int64).dtype == st.int64
    assert st.scalar_tensor(st.tensor(2.0)).item() == 2.0
    with pytest.raises(RuntimeError):
        st.scalar_tensor(1 + 2j)


def test_unravel_index():
    r = st.unravel_index(st.tensor([4, 1, 6, -1, -7], shards=2), (2, 3))
    assert isinstance(r, tuple) and [c.dtype for c in r] == [st.int64] * 2
    assert [c.tolist() for c in r] == [[1, 0, 0, 1, 1], [1, 1, 0, 2, 2]]  # torch wraps
    assert [c.tolist() for c in st.unravel_index(st.tensor(4), (2, 3))] == [1, 1]
    assert [c.tolist() for c in st.unravel_index(st.tensor([[1, 5]]), 6)] == [[[1, 5]]]
    assert st.unravel_index(st.tensor([0]), ()) == ()
    r = st.unravel_index(st.tensor([1], dtype=st.int32), st.Size([2, 3]))
    assert r[0].dtype == st.int64 and r[1].tolist() == [1]
    with pytest.raises(TypeError, match="integer dtype"):
        st.unravel_index(st.tensor([1.0]), (2, 3))
    with pytest.raises(TypeError, match="integer dtype"):
        st.unravel_index(st.tensor([True]), (2,))
    with pytest.raises(ValueError, match="negative"):
        st.unravel_index(st.tensor([1]), (2, -1))
    with pytest.raises(TypeError, match="only contain ints"):
        st.unravel_index(st.tensor([1]), (2.0, 3))


@pytest.mark.parametrize("place", [dict(), dict(dim=0, shards=2), dict(dim=1, shards=3)])
def test_sum_to_size(place):
    x = st.tensor(np.arange(12.0).reshape(3, 4), dtype=F64, **place, requires_grad=True)
    assert x.sum_to_size(1, 4).tolist() == [[12.0, 15.0, 18.0, 21.0]]
    assert x.sum_to_size((3, 1)).tolist() == [[6.0], [22.0], [38.0]]
    assert x.sum_to_size(4).tolist() == [12.0, 15.0, 18.0, 21.0]
    assert x.sum_to_size(()).item() == 66.0
    assert x.sum_to_size(3, 4) is x
    x.sum_to_size(1, 4).sum().backward()
    assert x.grad.tolist() == [[1.0] * 4] * 3
    b = st.ones(3, 4, dtype=st.bool, **place).sum_to_size(1, 4)
    assert b.dtype == st.int64 and b.tolist() == [[3] * 4]
    assert st.ones(3, 4, dtype=st.int32).sum_to_size(1, 4).dtype == st.int64
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(2, 2)
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(1, 3, 4)
    with pytest.raises(TypeError):
        x.sum_to_size()


def test_sum_to_size_of_a_0d_tensor_sums_as_torch():
    # torch sums to () even a 0-d tensor: bool and int32 come back int64 (torch 2.13)
    t = st.tensor(True).sum_to_size(())
    assert t.dtype == st.int64 and t.item() == 1
    t = st.tensor(3, dtype=st.int32).sum_to_size([])
    assert t.dtype == st.int64 and t.item() == 3
    t = st.tensor(2.5).sum_to_size(())
    assert t.dtype == st.float32 and t.item() == 2.5


# ---------------------------------------------------------- legacy svd / qr / cholesky
def test_legacy_svd_qr_cholesky():
    a = st.tensor([[3.0, 1], [1, 2], [0, 1]], dim=0, shards=2)
    u, s, v = st.svd(a)
    assert (u.shape, s.shape, v.shape) == ((3, 2), (2,), (2, 2))
    np.testing.assert_allclose((u @ st.diag(s) @ v.mT).numpy(), a.numpy(), atol=1e-5)
    r = a.svd(some=False)
    assert (r.U.shape, r.V.shape) == ((3, 3), (2, 2))
    z = st.svd(a, compute_uv=False)
    close(z.S, [3.6586, 1.6170], 1e-4)
    assert z.U.tolist() == [[0.0] * 3] * 3 and z.V.tolist() == [[0.0] * 2] * 2
    q, r = st.qr(a)
    assert (q.shape, r.shape) == ((3, 2), (2, 2))
    q, r = a.qr(some=False)
    assert (q.shape, r.shape) == ((3, 3), (3, 2))
    spd = st.tensor([[4.0, 2], [2, 2]])
    assert st.cholesky(spd, True).tolist() == [[2.0, 1.0], [0.0, 1.0]]
    assert spd.cholesky(True).tolist() == [[2.0, 1.0], [0.0, 1.0]]
    assert st.cholesky(spd).tolist() == [[2.0, 0.0], [1.0, 1.0]]


# ------------------------------------------------------------ predicates and casts
def test_predicates_casts_and_device():
    x = st.tensor([1, 2], shards=2)
    assert x.cfloat().dtype == st.complex64 and x.cdouble().dtype == st.complex128
    assert x.cfloat().tolist() == [1 + 0j, 2 + 0j]
    assert x.char().dtype == st.int8 and st.tensor([200.0]).char().tolist() == [-56]
    assert x.is_signed() and st.tensor([1.0]).is_signed() and st.tensor([1j]).is_signed()
    assert not st.tensor([True]).is_signed() and not st.is_signed(st.ones(1, dtype=st.uint8))
    assert x.ndimension() == 1 and st.tensor(2.0).ndimension() == 0
    assert x.get_device() == -1
    assert not st.is_nonzero(st.tensor([0.0])) and st.tensor([[2]]).is_nonzero()
    assert st.tensor(float("nan")).is_nonzero() and st.is_nonzero(st.tensor(1j))
    with pytest.raises(RuntimeError, match="more than one value"):
        x.is_nonzero()
    with pytest.raises(RuntimeError, match="no values"):
        st.tensor([]).is_nonzero()
    assert st.ones(2, 3).is_same_size(st.zeros(2, 3, dtype=st.int32))
    assert not st.is_same_size(st.ones(2, 3), st.ones(3, 2))
    with pytest.raises(TypeError):
        st.ones(2).is_same_size(3)


# ---------------------------------------------------------- top-level in-place forms
def test_top_level_inplace_forms():
    x = st.tensor([-1.0, 4.0, 0.25], shards=2)
    assert st.abs_(x) is x and x.tolist() == [1.0, 4.0, 0.25]
    assert st.sqrt_(x).tolist() == [1.0, 2.0, 0.5]
    assert st.clamp_(x, 0.6, 1.5).tolist() == [1.0, 1.5, 0.6000000238418579]
    assert st.clamp_max_(x, 1.2).tolist()[1] == pytest.approx(1.2)
    assert st.neg_(x).tolist()[0] == -1.0 and st.negative_(x).tolist()[0] == 1.0
    assert st.fill_(x, 2.0).tolist() == [2.0] * 3 and st.zero_(x).tolist() == [0.0] * 3
    i = st.tensor([4, 6])
    assert st.gcd_(i, st.tensor([6, 4])).tolist() == [2, 2]
    y = st.tensor([1.0, 2.0], requires_grad=True)
    assert st.detach(y * 2).requires_grad is False
    names = "exp_ log_ sigmoid_ tanh_ relu_ round_ trunc_ frac_ xlogy_ nan_to_num_ logit_ i0_"
    for name in names.split() + ["arccos_", "sinc_", "detach_"]:
        assert getattr(st, name).__doc__ and callable(getattr(st, name))
    with pytest.raises(TypeError):
        st.abs_(3.0)


# ---------------------------------------------------------------- threads and printing
def test_num_threads():
    n = st.get_num_threads()
    assert isinstance(n, int) and n >= 1
    st.set_num_threads(1)
    assert st.get_num_threads() == 1
    assert (st.ones(4, 4, shards=2) @ st.ones(4, 4)).sum().item() == 64.0  # workers still work
    st.set_num_threads(n)
    with pytest.raises(RuntimeError, match="positive integer"):
        st.set_num_threads(0)
    with pytest.raises(TypeError):
        st.set_num_threads(2.0)


def test_set_printoptions():
    try:
        st.set_printoptions(precision=2)
        assert repr(st.tensor([1.2345, 2.0])).startswith("tensor([1.23, 2.00]")
        st.set_printoptions(sci_mode=True)
        assert repr(st.tensor([1.2345, 2.0])).startswith("tensor([1.23e+00, 2.00e+00]")
        st.set_printoptions(profile="default")
        assert repr(st.tensor([1.2345, 2.0])).startswith("tensor([1.2345, 2.0000]")
        st.set_printoptions(sci_mode=False)
        assert repr(st.tensor([1e-9, 2.0])).startswith("tensor([0.0000, 2.0000]")
        st.set_printoptions(threshold=5, edgeitems=1, sci_mode=None)
        assert repr(st.arange(10)).startswith("tensor([0,  ..., 9]")
    finally:
        st.set_printoptions(profile="default", sci_mode=None)
