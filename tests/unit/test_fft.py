"""``st.fft`` against ``numpy.fft`` with torch's dtypes and errors, along split and local dims
(1..5 shards, uneven and empty shards, block grids, replicated), and gradients against
finite differences of the same loss computed with NumPy (torch's convention for complex
inputs: dL/dRe + i dL/dIm)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sharded as st
from sharded.runtime.driver.local import LocalExecutor
from sharded.runtime.worker import store
from tests.helpers import (
    PLACEMENT_IDS,
    PLACEMENTS,
    assert_matches_numpy,
    block_bytes,
    examples,
    moved,
    placements,
    ray_ref_slack,
    traced_peak,
)

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
Z = rng.standard_normal((7, 6)) + 1j * rng.standard_normal((7, 6))
TOL = dict(rtol=1e-10, atol=1e-10)
NORMS = [None, "forward", "ortho"]
F = st.fft


def ref(name):
    return getattr(np.fft, name)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", [0, 1])
def test_one_dim_transforms_on_every_layout(place, dim):
    x, z = st.from_numpy(A, **place), st.from_numpy(Z, **place)
    for n in (None, 4, 9):
        for name, src, a in (
            ("fft", z, Z),
            ("ifft", z, Z),
            ("rfft", x, A),
            ("ihfft", x, A),
            ("irfft", z, Z),
            ("hfft", z, Z),
        ):
            got = getattr(F, name)(src, n=n, dim=dim)
            assert_matches_numpy(got, ref(name)(a, n=n, axis=dim), **TOL)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dim", [0, -1])
def test_norms_along_split_and_local_dims(norm, dim):
    x, z = st.from_numpy(A, shards=3), st.from_numpy(Z, shards=3)
    for name, src, a in (("fft", z, Z), ("ifft", z, Z), ("rfft", x, A), ("irfft", z, Z)):
        for n in (None, 5):
            got = getattr(F, name)(src, n=n, dim=dim, norm=norm)
            assert_matches_numpy(got, ref(name)(a, n=n, axis=dim, norm=norm), **TOL)
    assert_matches_numpy(F.hfft(z, dim=dim, norm=norm), np.fft.hfft(Z, axis=dim, norm=norm), **TOL)
    assert_matches_numpy(
        F.ihfft(x, dim=dim, norm=norm), np.fft.ihfft(A, axis=dim, norm=norm), **TOL
    )


ONE_D = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3),
    dict(shards=4),
    dict(shards=5),
    dict(layout=st.Layout(chunks=(9, 0, 3, 0, 12))),
    dict(layout=st.Layout.replicated()),
]


@pytest.mark.parametrize("size", [24, 16, 7, 2])
@pytest.mark.parametrize("place", ONE_D, ids=["1", "2", "3", "4", "5", "uneven", "repl"])
def test_one_dim_tensor_split_along_its_only_dim(size, place):
    # the four-step algorithm: three all-to-alls; a prime length puts the line on one worker
    if "layout" in place and not place["layout"]._req["replicated"] and size != 24:
        place = dict(shards=5)
    b = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    z, x = st.from_numpy(b, **place), st.from_numpy(b.real.copy(), **place)
    for n in (None, size + 3, max(1, size - 3)):
        for norm in NORMS:
            for name, src, a in (
                ("fft", z, b),
                ("ifft", z, b),
                ("rfft", x, b.real),
                ("ihfft", x, b.real),
                ("irfft", z, b),
                ("hfft", z, b),
            ):
                got = getattr(F, name)(src, n=n, norm=norm)
                assert_matches_numpy(got, ref(name)(a, n=n, norm=norm), **TOL)


@pytest.mark.parametrize("shards", [2, 3])
def test_a_long_split_line(shards):
    # 560,000 = 700 x 800: column blocks wider than one twiddle table (several tiles and a
    # remainder), row blocks of many transpose tiles
    b = rng.standard_normal(560_000) + 1j * rng.standard_normal(560_000)
    z = st.from_numpy(b, shards=shards)
    assert_matches_numpy(F.fft(z), np.fft.fft(b), rtol=1e-9, atol=1e-9)
    assert_matches_numpy(F.ifft(z, norm="ortho"), np.fft.ifft(b, norm="ortho"), **TOL)
    f = st.from_numpy(b.real.astype(np.float32), shards=shards)
    assert_matches_numpy(F.rfft(f), np.fft.rfft(b.real), rtol=1e-3, atol=2e-3)


@pytest.mark.parametrize("size", [1009, 4099])
@pytest.mark.parametrize("shards", [2, 3, 4, 5])
def test_a_prime_split_line(size, shards):
    # Bluestein's chirp-z: a convolution by four-step FFTs of 2048 / 16384 points, cut over
    # every worker; the result keeps the input's cuts
    b = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    z = st.from_numpy(b, shards=shards)
    for norm in [None, "backward", "forward", "ortho"]:
        assert_matches_numpy(F.fft(z, norm=norm), np.fft.fft(b, norm=norm), **TOL)
        got = F.ifft(z, norm=norm)
        assert_matches_numpy(got, np.fft.ifft(b, norm=norm), **TOL)
        assert got.layout == z.layout
    x = st.from_numpy(b.real.copy(), shards=shards)
    assert_matches_numpy(F.rfft(x), np.fft.rfft(b.real), **TOL)
    assert_matches_numpy(F.irfft(z, n=size), np.fft.irfft(b, n=size), **TOL)
    assert_matches_numpy(F.hfft(z, n=size), np.fft.hfft(b, n=size), **TOL)


def test_a_prime_split_line_uneven_float32_and_n():
    b = rng.standard_normal(101) + 1j * rng.standard_normal(101)
    z = st.from_numpy(b, layout=st.Layout(chunks=(0, 60, 0, 41)))
    assert_matches_numpy(F.fft(z), np.fft.fft(b), **TOL)
    assert_matches_numpy(F.ifft(z, n=97), np.fft.ifft(b, n=97), **TOL)  # cut to a prime
    assert_matches_numpy(F.fft(z, n=103), np.fft.fft(b, n=103), **TOL)  # padded to one
    c = st.from_numpy(b.astype(np.complex64), shards=3)
    got = F.fft(c)
    assert got.dtype == st.complex64
    assert_matches_numpy(got, np.fft.fft(b), rtol=1e-4, atol=1e-4)


def test_a_prime_split_line_spreads_its_memory(monkeypatch):
    # Bluestein holds the filter spectrum (2N points) while the data spectrum goes through
    # a four-step (its all-to-all: source, assembled and shipped blocks), all cut
    # over all three; in-process the workers share one tracer, so the peak is their sum.
    # Freed blocks are kept for reuse (the worker's pool): off here, to count live ones only
    if not isinstance(st.runtime.current().executor, LocalExecutor):
        pytest.skip("the pool switch and the summed peak are in-process only")
    monkeypatch.setattr(store, "POOL_MAX_BYTES", 0)
    z = st.from_numpy(rng.standard_normal(65_537) + 0j, shards=3)
    line = 16 * 65_537
    assert traced_peak(lambda: F.fft(z)) <= 9.5 * line  # measured 8.4x (four-step of 65,536: 2.5x)
    pow2 = st.from_numpy(np.ones(1 << 16) + 0j, shards=3)
    assert traced_peak(lambda: F.fft(pow2)) <= 3 * line


def test_results_keep_the_input_layout():
    x = st.from_numpy(Z, layout=st.Layout(chunks=(4, 0, 3)))
    assert F.fft(x, dim=0).layout == x.layout  # split dim: transposed there and back
    assert F.fft(x, dim=1).layout == x.layout  # local
    y = st.from_numpy(np.ones(24, complex), layout=st.Layout(chunks=(9, 0, 3, 0, 12)))
    assert F.ifft(y).layout == y.layout
    # a length that changes is cut evenly into as many chunks: rfft's 13 bins over 5 shards
    r = F.rfft(st.from_numpy(np.ones(24), shards=5))
    assert r.layout.chunk_sizes(0) == (3, 3, 3, 2, 2)
    assert F.rfft(st.from_numpy(A, shards=3), dim=0).layout.chunk_sizes(0) == (2, 1, 1)


def test_dtypes_follow_torch():
    f32 = st.from_numpy(A.astype(np.float32), shards=2)
    assert F.fft(f32).dtype == st.complex64 and F.rfft(f32).dtype == st.complex64
    assert F.irfft(F.rfft(f32)).dtype == st.float32
    assert F.fft(st.from_numpy(A, shards=2)).dtype == st.complex128
    ints = st.arange(4)
    assert F.fft(ints).dtype == st.complex64 and F.rfft(ints).dtype == st.complex64
    assert F.irfft(ints).dtype == st.float32 and F.hfft(ints).dtype == st.float32
    assert F.fft(st.tensor([True, False])).dtype == st.complex64
    assert F.irfft(st.from_numpy(Z)).dtype == st.float64
    assert_matches_numpy(F.fft(ints), np.fft.fft(np.arange(4)), dtype=st.complex64)
    assert_matches_numpy(F.rfft(f32, dim=0), np.fft.rfft(A, axis=0), rtol=1e-5, atol=1e-5)


def test_errors_are_typed_and_name_the_values():
    z, x = st.from_numpy(Z, shards=2), st.from_numpy(A, shards=2)
    with pytest.raises(st.DTypeError, match="rfft expects a real input"):
        F.rfft(z)
    with pytest.raises(st.DTypeError, match="ihfft expects a real input"):
        F.ihfft(z)
    with pytest.raises(st.DTypeError, match="rfftn expects a real input"):
        F.rfftn(z)
    with pytest.raises(st.ArgumentError, match='"bad"'):
        F.fft(x, norm="bad")
    with pytest.raises(st.ArgumentError, match=r"\(0\)"):
        F.fft(x, n=0)
    with pytest.raises(st.ArgumentError, match=r"\(0\)"):
        F.irfft(st.zeros(1))
    with pytest.raises(st.ArgumentError, match=r"\(0\)"):
        F.fft(st.zeros(0))
    with pytest.raises(IndexError):
        F.fft(x, dim=2)
    with pytest.raises(st.ArgumentError, match="unique"):
        F.fftn(x, dim=(0, 0))
    with pytest.raises(st.ArgumentError, match="same length"):
        F.fftn(x, s=(2,), dim=(0, 1))
    with pytest.raises(st.ArgumentError, match="3 values"):
        F.fftn(x, s=(5, 6, 7))
    with pytest.raises(st.DTypeError, match="float16"):
        F.fft(x.half())
    with pytest.raises(st.DimError, match="0-d"):
        F.fft(st.tensor(1.0))
    assert_matches_numpy(F.fft(x), np.fft.fft(A), **TOL)  # the operands are intact


def test_errors_have_torchs_builtin_types():
    # torch raises RuntimeError for bad lengths, norms, (s, dim) pairs and refused dtypes,
    # IndexError for a 0-d input of a 1-D transform, TypeError for a non-int n or dim
    z, x = st.from_numpy(Z, shards=2), st.from_numpy(A, shards=3, dim=1)
    runtime = [
        lambda: F.fft(x, n=0),
        lambda: F.ifft(x, n=-1),  # -1 is no default in the 1-D functions
        lambda: F.rfft(x, n=-1, dim=0),
        lambda: F.irfft(z, n=-1),
        lambda: F.hfft(z, n=-2),
        lambda: F.ihfft(x, n=-1),
        lambda: F.fft(x, norm="bad"),
        lambda: F.irfft(st.zeros(3, 1, dtype=st.complex64)),  # default n = 2 * (1 - 1)
        lambda: F.rfft(z),
        lambda: F.ihfft(z),
        lambda: F.rfft2(z),
        lambda: F.ihfft2(z),
        lambda: F.fft(x.half()),
        lambda: F.fftn(x, dim=(1, -1)),
        lambda: F.fftn(x, s=(2,), dim=(0, 1)),
        lambda: F.fftn(x, s=(1, 2, 3)),
        lambda: F.fftn(x, s=(-2, 2)),
        lambda: F.rfftn(x, dim=()),
        lambda: F.irfftn(z, dim=()),
        lambda: F.hfftn(z, dim=()),
        lambda: F.ihfftn(st.tensor(1.0)),
        lambda: F.rfftn(st.tensor(1.0)),
        lambda: F.fftfreq(-1),
        lambda: F.fftfreq(4, dtype=st.int64),
        lambda: F.rfftfreq(4, dtype=st.int32),
        lambda: F.fftshift(st.tensor(1.0)),  # torch's roll: "`shifts` required"
        lambda: F.ifftshift(x, dim=()),
    ]
    for i, f in enumerate(runtime):
        with pytest.raises(RuntimeError) as info:
            f()
        assert isinstance(info.value, st.ShardedError), i
    for f in (
        lambda: F.fft(st.tensor(1.0)),
        lambda: F.rfft(st.tensor(1.0), dim=0),
        lambda: F.fftn(st.tensor(1.0), dim=0),
        lambda: F.fft2(st.ones(4)),
        lambda: F.ihfft2(z, dim=(0, 2)),  # ihfftn checks dims before the dtype
        lambda: F.fftshift(st.tensor(1.0), dim=0),
        lambda: F.ifftshift(x, dim=2),
    ):
        with pytest.raises(st.DimError):
            f()
    for f in (
        lambda: F.fft(x, n=2.0),
        lambda: F.fft(x, dim=[0]),
        lambda: F.fftn(x, s=(2.0, 3)),
        lambda: F.fftfreq(4.0),
        lambda: F.rfftfreq(4.5),
    ):
        with pytest.raises(st.DTypeError):
            f()
    assert_matches_numpy(F.fft(x), np.fft.fft(A), **TOL)  # the operands are intact
    # what torch accepts: fftn of a 0-d tensor (no dims), s=-1 keeps a dim's length
    assert F.fftn(st.tensor(2.0)).tolist() == 2 + 0j and F.fftn(st.tensor(2.0)).ndim == 0
    assert F.fftn(x, s=(-1, 2)).shape == (7, 2) and F.rfft2(x, s=(-1, -1)).shape == (7, 4)
    assert F.irfftn(z, s=(3, -1)).shape == (3, 10)


B3 = rng.standard_normal((5, 4, 6))
C3 = B3 + 1j * rng.standard_normal((5, 4, 6))
PLACE3 = [
    dict(shards=3),
    dict(shards=2, dim=1),
    dict(shards=4, dim=2),
    dict(layout=st.Layout.block((2, 1, 2))),
    dict(layout=st.Layout(chunks=(2, 0, 3))),
    dict(layout=st.Layout.replicated()),
]


@pytest.mark.parametrize("place", PLACE3, ids=["d0", "d1", "d2", "block", "uneven", "repl"])
def test_multi_dim_transforms(place):
    x, z = st.from_numpy(B3, **place), st.from_numpy(C3, **place)
    for s, dim in ((None, None), ((3, 8), None), (None, (0, 2)), ((-1, 4), (2, 0)), (None, 1)):
        np_kw = dict(s=s, axes=dim if dim is None or isinstance(dim, tuple) else (dim,))
        if s is not None and dim is None:
            np_kw["axes"] = tuple(range(3 - len(s), 3))
        if s is not None and -1 in s:
            ax = np_kw["axes"]
            np_kw["s"] = tuple(B3.shape[a] if n == -1 else n for n, a in zip(s, ax))
        assert_matches_numpy(F.fftn(z, s=s, dim=dim), np.fft.fftn(C3, **np_kw), **TOL)
        assert_matches_numpy(F.ifftn(z, s=s, dim=dim), np.fft.ifftn(C3, **np_kw), **TOL)
        assert_matches_numpy(F.rfftn(x, s=s, dim=dim), np.fft.rfftn(B3, **np_kw), **TOL)
        assert_matches_numpy(F.irfftn(z, s=s, dim=dim), np.fft.irfftn(C3, **np_kw), **TOL)
    for norm in NORMS:
        kw = dict(norm=norm)
        assert_matches_numpy(F.fft2(z, **kw), np.fft.fft2(C3, **kw), **TOL)
        assert_matches_numpy(F.ifft2(z, **kw), np.fft.ifft2(C3, **kw), **TOL)
        assert_matches_numpy(F.rfft2(x, **kw), np.fft.rfft2(B3, **kw), **TOL)
        assert_matches_numpy(F.irfft2(z, s=(4, 5), **kw), np.fft.irfft2(C3, s=(4, 5), **kw), **TOL)
    assert_matches_numpy(F.fft2(z, dim=(0, 2)), np.fft.fft2(C3, axes=(0, 2)), **TOL)
    assert_matches_numpy(F.fftn(x, dim=()), B3.astype(complex))


SWAP = {None: "forward", "forward": "backward", "ortho": "ortho"}


@pytest.mark.parametrize("place", PLACE3, ids=["d0", "d1", "d2", "block", "uneven", "repl"])
def test_hermitian_multi_dim_transforms(place):
    # torch's hfftn is irfftn of the conjugate under the swapped norm (fft over the leading
    # dims, hfft over the last); ihfftn is the conjugate of rfftn under the swapped norm
    x, z = st.from_numpy(B3, **place), st.from_numpy(C3, **place)
    for s, dim in ((None, None), ((3, 8), None), (None, (0, 2)), ((5, 7), (2, 0)), (None, 1)):
        axes = dim if dim is None or isinstance(dim, tuple) else (dim,)
        if s is not None and dim is None:
            axes = tuple(range(3 - len(s), 3))
        for norm in NORMS:
            got = F.hfftn(z, s=s, dim=dim, norm=norm)
            want = np.fft.irfftn(np.conj(C3), s=s, axes=axes, norm=SWAP[norm])
            assert_matches_numpy(got, want, **TOL)
            got = F.ihfftn(x, s=s, dim=dim, norm=norm)
            want = np.conj(np.fft.rfftn(B3, s=s, axes=axes, norm=SWAP[norm]))
            assert_matches_numpy(got, want, **TOL)
    assert_matches_numpy(F.hfft2(z), np.fft.irfft2(np.conj(C3), norm="forward"), **TOL)
    assert_matches_numpy(F.ihfft2(x), np.conj(np.fft.rfft2(B3, norm="forward")), **TOL)
    assert F.hfft2(z).dtype == st.float64 and F.ihfft2(x).dtype == st.complex128
    ints = st.arange(12, shards=2).reshape(3, 4)
    assert F.hfftn(ints).dtype == st.float32 and F.ihfftn(ints).dtype == st.complex64
    assert F.hfftn(ints).shape == (3, 6) and F.ihfft2(ints).shape == (3, 3)


def test_an_empty_line_zero_padded_is_zeros():
    # torch: irfft/hfft of an empty dim padded to n are zeros (NumPy's irfft leaves garbage)
    for place in (dict(shards=1), dict(shards=3), dict(shards=3, dim=1)):
        e = st.from_numpy(np.zeros((4, 0), np.float32), **place)
        assert F.irfft(e, n=2).tolist() == [[0.0, 0.0]] * 4
        assert F.hfft(e, n=3).tolist() == [[0.0] * 3] * 4
        assert F.irfftn(e, s=(3, 5)).tolist() == [[0.0] * 5] * 3
        assert F.ifftn(e, s=(2, 2)).tolist() == [[0j, 0j]] * 2
    assert F.irfft(st.zeros(0, shards=2), n=5).tolist() == [0.0] * 5
    assert F.fft(st.zeros(0, shards=2), n=3).tolist() == [0j] * 3


def test_multi_dim_transforms_group_local_dims():
    # a block grid over dims 0 and 2: dim 1 alone first, then one transpose puts every cut
    # on dim 1 so that dims 0 and 2 go together, and one transpose back (not two per dim)
    z = st.from_numpy(C3, layout=st.Layout.block((2, 1, 2)))
    before = moved()
    y = F.fftn(z)
    assert_matches_numpy(y, np.fft.fftn(C3), **TOL)
    assert moved() - before <= 2 * C3.nbytes
    assert y.layout == z.layout


def test_frequencies_and_shifts():
    assert F.fftfreq(4).tolist() == [0.0, 0.25, -0.5, -0.25]
    np.testing.assert_allclose(
        F.fftfreq(5, 0.3).numpy(), [0.0, 0.6667, 1.3333, -1.3333, -0.6667], atol=1e-4
    )
    np.testing.assert_allclose(F.rfftfreq(6, 0.3).numpy(), [0.0, 0.5556, 1.1111, 1.6667], atol=1e-4)
    assert F.fftfreq(5).dtype == st.float32 and F.fftfreq(0).shape == (0,)
    # d = 0 (or n = 0 in rfftfreq's one bin): torch's 1 / (n * d) = inf, and 0 * inf = nan
    np.testing.assert_array_equal(F.fftfreq(4, d=0).numpy(), [np.nan, np.inf, -np.inf, -np.inf])
    np.testing.assert_array_equal(F.rfftfreq(4, d=0).numpy(), [np.nan, np.inf, np.inf])
    np.testing.assert_array_equal(F.rfftfreq(0).numpy(), [np.nan])
    f = F.fftfreq(7, 0.5, dtype=st.float64, shards=3)
    assert f.dtype == st.float64 and f.layout.num_shards == 3
    assert_matches_numpy(f, np.fft.fftfreq(7, 0.5), **TOL)
    assert_matches_numpy(F.rfftfreq(9, shards=2), np.fft.rfftfreq(9))
    assert F.fftfreq(3, requires_grad=True).requires_grad
    with pytest.raises(st.ArgumentError):
        F.fftfreq(-1)
    with pytest.raises(st.DTypeError):
        F.fftfreq(4, dtype=st.int64)
    a = np.arange(6).reshape(2, 3)
    for place in (dict(shards=2), dict(shards=3, dim=1)):
        t = st.from_numpy(a, **place)
        assert F.fftshift(t).tolist() == [[5, 3, 4], [2, 0, 1]]
        assert_matches_numpy(F.ifftshift(t, dim=1), np.fft.ifftshift(a, axes=1))
        assert_matches_numpy(F.ifftshift(F.fftshift(t)), a)
    assert F.ifftshift(st.arange(5, shards=3), dim=0).tolist() == [2, 3, 4, 0, 1]


# ------------------------------------------------------------------------- gradients
def numeric_grad(loss, a, eps=1e-6):
    """dL/da by central differences (for complex ``a``: dL/dRe + i dL/dIm, torch's grad)."""
    g = np.zeros(a.shape, dtype=a.dtype)
    for ix in np.ndindex(a.shape):
        for unit in (1.0, 1j) if np.iscomplexobj(a) else (1.0,):
            d = np.zeros_like(a)
            d[ix] = eps * unit
            g[ix] += unit * (loss(a + d) - loss(a - d)) / (2 * eps)
    return g


W6 = rng.standard_normal((5, 6))
W66 = rng.standard_normal((6, 6))
WR = rng.standard_normal(4)  # real weights per rfft bin
X5 = rng.standard_normal((5, 6))
Z5 = rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))

# (name, sharded loss, numpy loss, input): real losses through every transform
LOSSES = [
    (
        "rfft-irfft",
        lambda t: (F.irfft(F.rfft(t) * WR, n=6) * W6).sum(),
        lambda a: (np.fft.irfft(np.fft.rfft(a) * WR, n=6) * W6).sum(),
        X5,
    ),
    (
        "rfft-n",
        lambda t: (F.irfft(F.rfft(t, n=8).narrow(1, 0, 4) * WR, n=6) * W6).sum(),
        lambda a: (np.fft.irfft(np.fft.rfft(a, n=8)[:, :4] * WR, n=6) * W6).sum(),
        X5,
    ),
    (
        "fft-dim0",
        lambda t: (F.irfft(F.fft(t, dim=0, norm="ortho"), n=6) * W6[:, :6]).sum(),
        lambda a: (np.fft.irfft(np.fft.fft(a, axis=0, norm="ortho"), n=6) * W6).sum(),
        X5,
    ),
    (
        "hfft",
        lambda t: (F.hfft(t, n=6, norm="forward") * W6).sum(),
        lambda a: (np.fft.hfft(a, n=6, norm="forward") * W6).sum(),
        Z5,
    ),
    (
        "ihfft",
        lambda t: (F.irfft(F.ihfft(t) * WR, n=6) * W6).sum(),
        lambda a: (np.fft.irfft(np.fft.ihfft(a) * WR, n=6) * W6).sum(),
        X5,
    ),
    (
        "ifft-n",
        lambda t: (F.irfft(F.ifft(t, n=5, dim=0), n=7) * 1.0).sum(),
        lambda a: np.fft.irfft(np.fft.ifft(a, n=5, axis=0), n=7).sum(),
        Z5,
    ),
    (
        "fft2-s",
        lambda t: (F.irfft(F.fft2(t, s=(6, 5)), n=6) * W66).sum(),
        lambda a: (np.fft.irfft(np.fft.fft2(a, s=(6, 5)), n=6) * W66).sum(),
        X5,
    ),
    (
        "ifftn",
        lambda t: (F.irfft(F.ifftn(t, norm="ortho"), n=6) * W6).sum(),
        lambda a: (np.fft.irfft(np.fft.ifftn(a, norm="ortho"), n=6) * W6).sum(),
        Z5,
    ),
    (
        "rfftn",
        lambda t: (F.irfftn(F.rfftn(t) * WR, s=(5, 6)) * W6).sum(),
        lambda a: (np.fft.irfftn(np.fft.rfftn(a) * WR, s=(5, 6), axes=(0, 1)) * W6).sum(),
        X5,
    ),
    (
        "hfftn",
        lambda t: (F.hfftn(t, s=(5, 6), norm="ortho") * W6).sum(),
        lambda a: (np.fft.irfftn(np.conj(a), s=(5, 6), axes=(0, 1), norm="ortho") * W6).sum(),
        Z5,
    ),
    (
        "ihfftn-dim",
        lambda t: ((lambda y: y.real * W6[:3] + y.imag * W66[:3])(F.ihfftn(t, dim=(1, 0)))).sum(),
        lambda a: (
            (lambda y: y.real * W6[:3] + y.imag * W66[:3])(
                np.conj(np.fft.rfftn(a, axes=(1, 0), norm="forward"))
            )
        ).sum(),
        X5,
    ),
]


@pytest.mark.parametrize(
    "place",
    [dict(shards=1), dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout.block((2, 2)))],
    ids=["1", "rows", "cols", "block"],
)
@pytest.mark.parametrize("case", LOSSES, ids=[c[0] for c in LOSSES])
def test_gradients_match_finite_differences(case, place):
    _, f, f_np, a = case
    t = st.from_numpy(a, **place).requires_grad_(True)
    f(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(f_np, a), rtol=1e-6, atol=1e-6)
    assert t.grad.dtype == t.dtype


V = rng.standard_normal(12)
VZ = rng.standard_normal(12) + 1j * rng.standard_normal(12)
W12 = rng.standard_normal(12)
LOSSES_1D = [
    (
        "fft",
        lambda t: (F.irfft(F.fft(t), n=12) * W12).sum(),
        lambda a: (np.fft.irfft(np.fft.fft(a), n=12) * W12).sum(),
        V,
    ),
    (
        "ifft-n",
        lambda t: (F.irfft(F.ifft(t, n=10, norm="ortho"), n=12) * W12).sum(),
        lambda a: (np.fft.irfft(np.fft.ifft(a, n=10, norm="ortho"), n=12) * W12).sum(),
        VZ,
    ),
    (
        "rfft",
        lambda t: (F.irfft(F.rfft(t) * np.linspace(1, 2, 7), n=12) * W12).sum(),
        lambda a: (np.fft.irfft(np.fft.rfft(a) * np.linspace(1, 2, 7), n=12) * W12).sum(),
        V,
    ),
    (
        "hfft",
        lambda t: (F.hfft(t, n=11) * W12[:11]).sum(),
        lambda a: (np.fft.hfft(a, n=11) * W12[:11]).sum(),
        VZ,
    ),
]


@pytest.mark.parametrize(
    "place", [dict(shards=3), dict(layout=st.Layout(chunks=(5, 0, 7)))], ids=["3", "uneven"]
)
@pytest.mark.parametrize("case", LOSSES_1D, ids=[c[0] for c in LOSSES_1D])
def test_gradients_of_a_split_line(case, place):
    _, f, f_np, a = case
    t = st.from_numpy(a, **place).requires_grad_(True)
    f(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(f_np, a), rtol=1e-6, atol=1e-6)


W17 = rng.standard_normal(17)
LOSSES_PRIME = [  # 17 points over 3 workers: Bluestein forward and in the backward pass
    (
        "fft",
        lambda t: (F.fft(t, norm="ortho").real * W17 + F.ifft(t).imag).sum(),
        lambda a: (np.fft.fft(a, norm="ortho").real * W17 + np.fft.ifft(a).imag).sum(),
        rng.standard_normal(17) + 1j * rng.standard_normal(17),
    ),
    (
        "rfft",
        lambda t: (F.irfft(F.rfft(t) * np.linspace(1, 2, 9), n=17) * W17).sum(),
        lambda a: (np.fft.irfft(np.fft.rfft(a) * np.linspace(1, 2, 9), n=17) * W17).sum(),
        rng.standard_normal(17),
    ),
]


@pytest.mark.parametrize(
    "place", [dict(shards=3), dict(layout=st.Layout(chunks=(5, 0, 12)))], ids=["3", "uneven"]
)
@pytest.mark.parametrize("case", LOSSES_PRIME, ids=[c[0] for c in LOSSES_PRIME])
def test_gradients_of_a_prime_split_line(case, place):
    _, f, f_np, a = case
    t = st.from_numpy(a, **place).requires_grad_(True)
    f(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(f_np, a), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ random layouts
@hs.composite
def fft_cases(draw):
    shape = tuple(draw(hs.lists(hs.integers(1, 6), min_size=1, max_size=3)))
    place = draw(placements(shape))
    dim = draw(hs.integers(-len(shape), len(shape) - 1))
    n = draw(hs.one_of(hs.none(), hs.integers(1, 9)))
    return shape, place, dim, n, draw(hs.sampled_from(NORMS))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(fft_cases())
def test_random_shapes_and_layouts(case):
    shape, place, dim, n, norm = case
    a = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape) ** 0.5
    z = a + 1j * a[..., ::-1]
    x, c = st.from_numpy(a, **place), st.from_numpy(z, **place)
    kw = dict(n=n, dim=dim, norm=norm)
    nkw = dict(n=n, axis=dim, norm=norm)
    assert_matches_numpy(F.fft(c, **kw), np.fft.fft(z, **nkw), **TOL)
    assert_matches_numpy(F.rfft(x, **kw), np.fft.rfft(a, **nkw), **TOL)
    if n is not None or shape[dim] > 1:
        assert_matches_numpy(F.irfft(c, **kw), np.fft.irfft(z, **nkw), **TOL)
    assert_matches_numpy(F.fftn(c, norm=norm), np.fft.fftn(z, norm=norm), **TOL)


# -------------------------------------------------------------------------- memory


def test_peak_memory_along_a_split_dim():
    # a transpose holds one assembled block and the output (the four-step transforms its
    # assembled blocks in place): ~2x the blocks a worker holds, plus the transfer pieces in
    # flight (against the blocks themselves: see block_bytes)
    z = st.from_numpy(rng.standard_normal((3000, 60)) + 0j, shards=3)
    slack = ray_ref_slack()
    assert traced_peak(lambda: F.fft(z, dim=0)) <= 2.5 * block_bytes(z) + slack
    line = st.from_numpy(rng.standard_normal(1 << 16) + 0j, shards=3)
    assert traced_peak(lambda: F.fft(line)) <= 2.5 * block_bytes(line) + slack
