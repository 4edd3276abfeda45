"""``st.stft``/``st.istft`` against torch 2.13 (tests/unit/data/stft_torch.npz, written by
scripts/torch_refs_stft.py): results, dtypes, gradients of the signal, spectrum and window in
float64, whole and batch-split inputs, the round trip, and torch's errors as typed errors."""

import json
from pathlib import Path

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "stft_torch.npz")
STFT = sorted({k.split("/")[1] for k in REF.files if k.startswith("stft/")})
ISTFT = sorted({k.split("/")[1] for k in REF.files if k.startswith("istft/")})
TOL = dict(rtol=1e-10, atol=1e-10)
TOL32 = dict(rtol=2e-5, atol=2e-5)
PLACES = [dict(shards=1), dict(shards=2)]  # whole, and split along the batch dim


def _stft_args(name, place, grad=False):
    x = REF[f"stft/{name}/x"]
    xs = st.tensor(x, requires_grad=grad, **(place if x.ndim == 2 else {}))
    w = REF.get(f"stft/{name}/window")
    ws = None if w is None else st.tensor(w, requires_grad=grad)
    kw = json.loads(str(REF[f"stft/{name}/kwargs"]))
    return xs, ws, {"return_complex": True, **kw}


@pytest.mark.parametrize("place", PLACES, ids=["whole", "split"])
@pytest.mark.parametrize("name", STFT)
def test_stft_matches_torch(name, place):
    x, w, kw = _stft_args(name, place)
    out = st.stft(x, window=w, **kw)
    want = REF[f"stft/{name}/out"]
    assert_matches_numpy(out, want, dtype=want.dtype, **(TOL32 if name == "float32" else TOL))
    if x.ndim == 2:
        assert out.layout.shards() and len(out.layout.shards()) == place["shards"]
    same = x.stft(window=w, **kw)  # the tensor method
    assert_matches_numpy(same, want, **(TOL32 if name == "float32" else TOL))


@pytest.mark.parametrize("place", PLACES, ids=["whole", "split"])
@pytest.mark.parametrize("name", [n for n in STFT if f"stft/{n}/g" in REF.files])
def test_stft_gradients_match_torch(name, place):
    x, w, kw = _stft_args(name, place, grad=True)
    out = st.stft(x, window=w, **kw)
    pairs = st.view_as_real(out) if out.dtype.is_complex else out
    (pairs * st.tensor(REF[f"stft/{name}/g"])).sum().backward()
    assert_matches_numpy(x.grad, REF[f"stft/{name}/grad_x"], **TOL)
    if w is not None:
        assert_matches_numpy(w.grad, REF[f"stft/{name}/grad_window"], **TOL)


@pytest.mark.parametrize("place", PLACES, ids=["whole", "split"])
@pytest.mark.parametrize("name", ISTFT)
def test_istft_matches_torch(name, place):
    case = str(REF[f"istft/{name}/case"])
    spec = REF[f"stft/{case}/out"]
    grad = spec.dtype == np.complex128
    s = st.tensor(spec, requires_grad=grad, **(place if spec.ndim == 3 else {}))
    w = REF.get(f"stft/{case}/window")
    ws = None if w is None else st.tensor(w, requires_grad=grad)
    kw = json.loads(str(REF[f"istft/{name}/kwargs"]))
    if name == "hann_length_long":  # past the frames: zeros, with torch's warning
        with pytest.warns(UserWarning, match="padded with zeros"):
            out = st.istft(s, window=ws, **kw)
    else:
        out = s.istft(window=ws, **kw)
    want = REF[f"istft/{name}/out"]
    assert_matches_numpy(out, want, dtype=want.dtype, **(TOL32 if name == "float32" else TOL))
    if not grad:
        return
    seen = st.view_as_real(out) if out.dtype.is_complex else out
    (seen * st.tensor(REF[f"istft/{name}/g"])).sum().backward()
    assert_matches_numpy(s.grad, REF[f"istft/{name}/grad_s"], **TOL)
    if ws is not None:
        assert_matches_numpy(ws.grad, REF[f"istft/{name}/grad_window"], **TOL)


@pytest.mark.parametrize("hop", [1, 3, 4, 7])
def test_round_trip(hop):
    a = np.random.default_rng(1).standard_normal((4, 33))
    x = st.tensor(a, shards=2)
    w = st.hann_window(16, dtype=st.float64)
    s = st.stft(x, 16, hop, window=w, return_complex=True)
    assert s.shape == (4, 9, 1 + 33 // hop) and s.dtype == st.complex128
    back = st.istft(s, 16, hop, window=w, length=33)
    assert_matches_numpy(back, a, **TOL)
    assert len(back.layout.shards()) == 2  # the batch stays split


def test_dtypes():
    x = st.ones(20, dtype=st.float32)
    assert st.stft(x, 8, return_complex=True).dtype == st.complex64
    w64 = st.hann_window(8, dtype=st.float64)
    assert st.stft(x, 8, window=w64, return_complex=True).dtype == st.complex128  # promoted
    pairs = st.stft(x, 8, return_complex=False)
    assert pairs.dtype == st.float32 and pairs.shape == (5, 11, 2)
    z = st.stft(x.to(st.complex64), 8)  # complex input: two-sided complex by default
    assert z.dtype == st.complex64 and z.shape == (8, 11)
    cw = st.stft(x, 8, window=w64.to(st.complex128))  # a complex window too
    assert cw.dtype == st.complex128 and cw.shape == (8, 11)
    assert st.istft(z, 8, return_complex=True).dtype == st.complex64
    assert st.istft(st.stft(x, 8, return_complex=True), 8).dtype == st.float32


def test_stft_errors():
    x = st.arange(10.0)
    with pytest.raises(st.ArgumentError, match="requires the return_complex parameter"):
        st.stft(x, 4)
    with pytest.raises(st.ArgumentError, match=r"padding \(20, 20\).*length 10"):
        st.stft(x, 40, return_complex=True)  # the reflect pad is longer than the signal
    with pytest.raises(st.ArgumentError, match="expected 0 < n_fft < 10, but got n_fft=12"):
        st.stft(x, 12, center=False, return_complex=True)
    with pytest.raises(st.ArgumentError, match="wrapping around more than once"):
        st.stft(x, 22, pad_mode="circular", return_complex=True)
    with pytest.raises(st.UnsupportedArgument, match="'foo'"):
        st.stft(x, 4, pad_mode="foo", return_complex=True)
    with pytest.raises(st.ArgumentError, match="hop_length > 0, but got hop_length=0"):
        st.stft(x, 3, return_complex=True)  # n_fft // 4 == 0
    with pytest.raises(st.ArgumentError, match="win_length <= n_fft, but got win_length=5"):
        st.stft(x, 4, win_length=5, return_complex=True)
    with pytest.raises(st.ShapeError, match=r"win_length=4, but got window with size \[3\]"):
        st.stft(x, 4, window=st.ones(3), return_complex=True)
    with pytest.raises(st.ShapeError, match=r"got window with size \[2, 2\]"):
        st.stft(x, 4, window=st.ones(2, 2), return_complex=True)
    with pytest.raises(st.ArgumentTypeError, match="'n_fft' must be int, not float"):
        st.stft(x, 4.0, return_complex=True)
    with pytest.raises(st.DTypeError, match="floating point or complex values, got int64"):
        st.stft(st.arange(10), 4, return_complex=True)
    with pytest.raises(st.ShapeError, match=r"1D or 2D tensor, got shape \(1, 2, 5\)"):
        st.stft(x.reshape(1, 2, 5), 4, return_complex=True)
    with pytest.raises(st.ArgumentError, match="Cannot have onesided output"):
        st.stft(x.to(st.complex64), 4, onesided=True)
    with pytest.raises(st.ArgumentError, match="align_to_window should only be set"):
        st.stft(x, 4, return_complex=True, align_to_window=True)


def test_istft_errors():
    w = st.hann_window(8, dtype=st.float64)
    s = st.stft(st.arange(20.0, dtype=st.float64), 8, 2, window=w, return_complex=True)
    with pytest.raises(st.DTypeError, match="complex-valued input.*float64"):
        st.istft(st.view_as_real(s), 8, 2, window=w)
    with pytest.raises(st.ArgumentError, match="Cannot have onesided output"):
        st.istft(s, 8, 2, window=w, return_complex=True)
    with pytest.raises(st.ShapeError, match=r"match n_fft \(8\) when onesided=False, but got 5"):
        st.istft(s, 8, 2, window=w, onesided=False)
    with pytest.raises(st.ShapeError, match=r"n_fft / 2 \+ 1 \(6\) when onesided=True, but got 5"):
        st.istft(s, 10, 2)
    with pytest.raises(st.ArgumentError, match="0 < hop_length <= win_length, got hop_length=9"):
        st.istft(s, 8, 9, window=w)
    with pytest.raises(st.ArgumentError, match="0 < win_length <= n_fft, got win_length=9"):
        st.istft(s, 8, 2, win_length=9)
    with pytest.raises(st.ShapeError, match="Invalid window shape"):
        st.istft(s, 8, 2, window=st.ones(7))
    with pytest.raises(st.ArgumentError, match="window overlap add min: 0"):
        st.istft(s, 8, 2, window=w, center=False)  # hann's first sample is 0
    with pytest.raises(st.ArgumentError, match="window overlap add min"):
        st.istft(s, 8, 8, window=w)  # hop = n_fft: hann's zeros are not covered
    with pytest.raises(st.ShapeError, match="cannot be empty"):
        st.istft(s[:, :0], 8, 2, window=w)
    with pytest.raises(st.ShapeError, match=r"\(B\?, N, T\) tensor, got shape \(5,\)"):
        st.istft(s[:, 0], 8, 2, window=w)
    with pytest.raises(st.DTypeError, match="Complex windows are incompatible"):
        st.istft(s, 8, 2, window=w.to(st.complex128))
    with pytest.raises(st.ArgumentTypeError, match="'n_fft' must be int, not float"):
        st.istft(s, 8.0, 2, window=w)
