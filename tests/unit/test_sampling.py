"""normal (torch's overloads), normal_/uniform_/bernoulli(_), multinomial, poisson and the
generator state: identical for any layout after one seed, right in distribution, torch's
dtypes and errors."""

import math

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def _draws(place):
    st.manual_seed(3)
    m = st.zeros(7, 5, dtype=st.float64, **place)
    ones = st.ones(7, 5, **place)
    return [
        st.normal(m, 2.0),
        st.normal(1.0, ones),
        st.normal(m, ones.double()),
        st.normal(0.0, 1.0, (7, 5), **place),
        st.zeros(7, 5, **place).normal_(),
        st.zeros(7, 5, **place).uniform_(1, 2),
        st.bernoulli(st.full((7, 5), 0.5, **place)),
        st.zeros(7, 5, **place).bernoulli_(0.3),
        st.poisson(st.full((7, 5), 3.0, **place)),
        st.poisson(st.ones(7, 5, dtype=st.float64, **place) * RATES),  # inversion and PTRS
        st.multinomial(ones, 3),
        st.multinomial(ones, 9, replacement=True),
    ]


REF = None
RATES = np.array([0.0, 2.5, 9.9, 10.0, 12.0, 1e4, 1e6] * 5).reshape(7, 5)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_identical_for_every_layout(place):
    global REF
    if REF is None:
        REF = [t.numpy() for t in _draws(dict(shards=1))]
    for got, want in zip(_draws(place), REF):
        np.testing.assert_array_equal(got.numpy(), want)


def test_distributions():
    st.manual_seed(0)
    n = 200_000
    z = st.normal(st.full((n,), 3.0, dtype=st.float64, shards=3), 2.0).numpy()
    assert abs(z.mean() - 3) < 0.02 and abs(z.std() - 2) < 0.02
    u = st.empty(n, shards=2).uniform_(-1.0, 3.0).numpy()
    assert u.min() >= -1 and u.max() < 3 and abs(u.mean() - 1) < 0.02
    b = st.bernoulli(st.full((n,), 0.25, shards=2)).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.01
    for rate in (0.5, 4.0, 40.0, 4000.0):
        p = st.poisson(st.full((n,), rate, dtype=st.float64, shards=3)).numpy()
        assert (p == np.round(p)).all() and abs(p.mean() / rate - 1) < 0.02
        assert abs(p.var() / rate - 1) < 0.05
    w = st.tensor([[1.0, 2.0, 7.0]])
    freq = np.bincount(st.multinomial(w, n, replacement=True).numpy().ravel()) / n
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.01)
    first = st.multinomial(st.tensor([[1.0, 2.0, 7.0]] * 50_000, shards=2), 1).numpy().ravel()
    np.testing.assert_allclose(np.bincount(first) / 50_000, [0.1, 0.2, 0.7], atol=0.01)
    # without replacement every row is a set of distinct categories
    rows = st.multinomial(st.rand(50, 6, shards=3) + 0.1, 6).numpy()
    assert (np.sort(rows, axis=1) == np.arange(6)).all()
    assert st.multinomial(st.tensor([0.0, 1.0, 0.0]), 1).tolist() == [1]


def test_dtypes_and_errors_as_torch():
    assert st.normal(2.0, st.ones(3)).dtype == st.float32
    assert st.normal(st.zeros(2, dtype=st.float64), 1.0).dtype == st.float64
    assert st.normal(0.0, 1.0, (2, 3)).shape == (2, 3)
    assert st.bernoulli(st.full((3,), 0.5, dtype=st.float64)).dtype == st.float64
    assert st.multinomial(st.ones(2, 3), 2).dtype == st.int64
    assert st.poisson(st.ones(2)).dtype == st.float32
    with pytest.raises(st.ArgumentError, match="std -1"):
        st.normal(st.zeros(2), -1.0)
    with pytest.raises(st.ArgumentError, match="std >= 0.0"):
        st.normal(st.zeros(2), st.tensor([1.0, -1.0]))
    with pytest.raises(st.DTypeError, match="int64"):
        st.normal(st.zeros(2, dtype=st.int64), 1.0)
    with pytest.raises(st.ArgumentError, match="p=1.5"):
        st.bernoulli(st.zeros(2), 1.5)
    with pytest.raises(st.ArgumentError, match="element < 0"):
        st.multinomial(st.tensor([-1.0, 2.0]), 1)
    with pytest.raises(st.ArgumentError, match="3 > 2"):
        st.multinomial(st.tensor([1.0, 2.0]), 3)
    with pytest.raises(st.ArgumentError, match="non-negative"):
        st.poisson(st.tensor([-1.0]))
    with pytest.raises(st.ArgumentError, match="from=2 > to=1"):
        st.zeros(2).uniform_(2, 1)
    x = st.ones(2)
    with pytest.raises(st.ArgumentError):
        x.normal_(0, -1)
    assert x.tolist() == [1.0, 1.0]  # a refused fill leaves the tensor intact


def test_normal_gradient_is_zero_as_torch():
    m = st.zeros(3, shards=2).requires_grad_()
    s = st.ones(3).requires_grad_()
    y = st.normal(m, s)
    assert y.requires_grad
    y.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3


def test_rng_state_round_trip():
    st.random.manual_seed(5)
    state = st.random.get_rng_state()
    assert state.dtype == st.uint8 and state.shape == (16,)
    a = st.randn(6, shards=2).tolist()
    st.rand(3)
    st.set_rng_state(state)
    assert st.randn(6, shards=3).tolist() == a
    with pytest.raises(st.ArgumentError, match="16-byte"):
        st.set_rng_state(st.zeros(4))


def _chi_square(p, rate):
    """Pearson's statistic of samples ``p`` against the Poisson(rate) pmf (bins merged until
    each expects at least 20) and its degrees of freedom."""
    lo, hi = int(max(0, rate - 6 * rate**0.5 - 3)), int(rate + 6 * rate**0.5 + 5)
    ks = np.arange(lo, hi + 1)
    logpmf = -rate + ks * math.log(rate) - np.array([math.lgamma(k + 1.0) for k in ks])
    expect = np.exp(logpmf) * len(p)
    seen = np.bincount((p - lo).astype(np.int64).clip(0, hi - lo), minlength=hi - lo + 1)
    obs, exp, o, e = [], [], 0, 0.0
    for so, se in zip(seen, expect):
        o, e = o + so, e + se
        if e >= 20:
            obs, exp, o, e = obs + [o], exp + [e], 0, 0.0
    obs[-1], exp[-1] = obs[-1] + o, exp[-1] + e
    obs, exp = np.array(obs), np.array(exp)
    return float(((obs - exp) ** 2 / exp).sum()), len(exp) - 1


@pytest.mark.parametrize("rate", [3.0, 15.0, 1e4, 1e6])
def test_poisson_exact_in_distribution(rate):
    # small rates invert the CDF, rates >= 10 use PTRS (a rejection sampler, exact: no
    # normal approximation); mean, variance and the whole pmf match for fixed seeds
    st.manual_seed(11)
    p = st.poisson(st.full((100_000,), rate, dtype=st.float64, shards=3)).numpy()
    assert (p == np.round(p)).all() and p.min() >= 0
    assert abs(p.mean() / rate - 1) < 5 / (rate * 100_000) ** 0.5
    assert abs(p.var() / rate - 1) < 0.02
    chi2, dof = _chi_square(p, rate)
    assert (chi2 - dof) / (2 * dof) ** 0.5 < 4, (chi2, dof)


def test_poisson_rates_as_torch():
    with pytest.raises(st.ArgumentError, match="non-negative"):
        st.poisson(st.tensor([1.0, float("nan")]))  # torch refuses NaN rates too
    assert st.poisson(st.tensor([0.0], dtype=st.float16)).dtype == st.float16
    big = st.poisson(st.tensor([1e6, 1e8], dtype=st.float32))
    assert big.dtype == st.float32 and abs(big.tolist()[1] / 1e8 - 1) < 1e-3
    # torch returns -2**63 for an infinite rate (undefined); here it comes back as inf
    assert st.poisson(st.tensor([float("inf")])).tolist() == [float("inf")]


# ---------------------------------------------------------------- audit against torch 2.x
def test_generator_none_and_size_forms_as_torch():
    assert st.rand(2, generator=None).shape == (2,)
    assert st.randint(5, (4,), generator=None).dtype == st.int64
    assert sorted(st.randperm(4, generator=None).tolist()) == [0, 1, 2, 3]
    with pytest.raises(TypeError):  # torch: no rand() overload without a size
        st.rand()
    with pytest.raises(TypeError):
        st.randn(2, 3, size=(2,))
    assert st.rand(()).shape == () and st.rand(size=(2, 3)).shape == (2, 3)
    s = st.seed()
    assert isinstance(s, int) and s == st.initial_seed()


@pytest.mark.parametrize(
    "low, high, dtype",
    [
        (-3, 5, st.uint8),
        (0, 300, st.int8),
        (0, 2**40, st.int32),
        (0, 3, st.bool),
        (0, 4096, st.float16),
    ],
)
def test_randint_bounds_of_the_dtype(low, high, dtype):
    with pytest.raises(RuntimeError, match="out of bounds"):  # torch: from/to - 1 out of bounds
        st.randint(low, high, (3,), dtype=dtype)


def test_randint_full_range_of_small_dtypes():
    st.manual_seed(0)
    a = st.randint(-128, 128, (4000,), dtype=st.int8, shards=3).numpy()
    assert a.dtype == np.int8 and a.min() == -128 and a.max() == 127
    b = st.randint(0, 2, (100,), dtype=st.bool).numpy()
    assert b.dtype == np.bool_ and 0 < b.sum() < 100


def test_normal_overload_errors_as_torch():
    with pytest.raises(TypeError):  # normal(float, float) has no overload without size
        st.normal(1.0, 2.0)
    with pytest.raises(TypeError):  # no tensor overload takes size
        st.normal(st.zeros(3), st.ones(3), size=(3,))
    with pytest.raises(RuntimeError):  # 2 vs 3 do not broadcast
        st.normal(st.zeros(2), st.ones(3))
    with pytest.raises(RuntimeError, match="non-complex"):
        st.normal(st.zeros(3), st.ones(3, dtype=st.cfloat))
    with pytest.raises(NotImplementedError):  # "normal_kernel_cpu" not implemented for 'Long'
        st.normal(0.0, 1.0, (2,), dtype=st.int64)
    with pytest.raises(NotImplementedError):
        st.zeros(3, dtype=st.int64).normal_()
    assert st.normal(st.zeros(1), st.ones(2, 1)).shape == (2, 1)


def test_complex_normal_and_uniform_as_torch():
    """torch fills complex tensors through their real view: normal_(m, s) gives each part
    N(m, s^2 / 2), uniform_(a, b) each part in [a, b); normal(complex mean, s) adds the mean."""
    st.manual_seed(1)
    n = 20000
    a = st.zeros(n, dtype=st.cfloat, shards=3).normal_(3.0, 2.0).numpy()
    assert a.dtype == np.complex64
    assert abs(a.real.mean() - 3) < 0.05 and abs(a.imag.mean() - 3) < 0.05
    assert abs(a.real.std() - math.sqrt(2)) < 0.05 and abs(a.imag.std() - math.sqrt(2)) < 0.05
    b = st.zeros(n, dtype=st.cdouble, shards=2).uniform_(2.0, 3.0).numpy()
    assert b.real.min() >= 2 and b.real.max() < 3 and b.imag.min() >= 2 and b.imag.max() < 3
    c = st.normal(st.full((n,), 3.0, dtype=st.cfloat), 2.0).numpy()
    assert c.dtype == np.complex64 and abs(c.real.mean() - 3) < 0.05 and abs(c.imag.mean()) < 0.05
    assert st.normal(0.0, 1.0, (2,), dtype=st.cfloat).dtype == st.complex64


def test_bernoulli_checks_as_torch():
    with pytest.raises(RuntimeError):  # Expected p_in >= 0 && p_in <= 1
        st.bernoulli(st.tensor([0.5, 1.5]))
    with pytest.raises(RuntimeError):
        st.bernoulli(st.tensor([float("nan")]))
    x = st.zeros(2, 3, shards=2)
    with pytest.raises(RuntimeError):
        x.bernoulli_(st.full((3,), 2.0))
    assert x.tolist() == [[0.0] * 3] * 2  # intact
    with pytest.raises(NotImplementedError):  # not implemented for 'Long' probabilities
        st.bernoulli(st.zeros(3, dtype=st.int64))
    with pytest.raises(NotImplementedError):
        st.zeros(3, dtype=st.cfloat).bernoulli_(0.5)
    assert st.bernoulli(st.zeros(3, dtype=st.int64), 0.0).tolist() == [0, 0, 0]  # p given
    assert st.zeros(2, 3).bernoulli_(st.ones(3)).tolist() == [[1.0] * 3] * 2


def test_samples_stay_on_the_tape_with_zero_gradients():
    p = st.full((3,), 0.5, requires_grad=True)
    y = st.bernoulli(p)
    assert y.requires_grad
    y.sum().backward()
    assert p.grad.tolist() == [0.0, 0.0, 0.0]
    r = st.tensor([2.0, float("inf")], requires_grad=True)
    z = st.poisson(r)
    assert z.requires_grad
    z.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]


def test_more_argument_checks_as_torch():
    with pytest.raises(TypeError):  # randint takes ints only
        st.randint(2.5, 5.5, (3,))
    with pytest.raises(TypeError):
        st.multinomial(st.ones(3), 1.0)
    with pytest.raises(RuntimeError, match="std"):  # NaN std fails std >= 0.0
        st.normal(st.ones(3), float("nan"))
    with pytest.raises(NotImplementedError):
        st.zeros(3).bernoulli_(st.ones(3, dtype=st.int64))
    for n, dtype in [(200, st.int8), (3000, st.float16)]:
        with pytest.raises(RuntimeError):  # n - 1 not representable in the dtype
            st.randperm(n, dtype=dtype)
    for dtype in (st.bool, st.cfloat):
        with pytest.raises(NotImplementedError):
            st.randperm(2, dtype=dtype)
    assert sorted(st.randperm(128, dtype=st.int8).tolist()) == list(range(128))


def test_fork_rng_restores_the_state():
    st.manual_seed(2)
    with st.random.fork_rng():
        a = st.rand(4, shards=2).tolist()
    assert st.rand(4, shards=3).tolist() == a
    with st.random.fork_rng(enabled=False):
        st.rand(1)
    assert st.rand(4).tolist() != a
