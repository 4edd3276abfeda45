"""torch's window functions (``st.hann_window``... and ``st.signal.windows``) against torch
2.13 (tests/unit/data/windows_torch.npz, written by scripts/torch_refs_stft.py): values and
dtypes for every length class (0, 1, even, odd), periodic and symmetric, float32 and float64,
whole and split, and torch's errors as typed errors."""

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "windows_torch.npz")
TOP = [k for k in REF.files if not k.startswith("signal.")]
SIGNAL = [k for k in REF.files if k.startswith("signal.")]
SIGNAL_NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine"]
SIGNAL_NAMES += ["general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _tol(dt):
    return dict(rtol=1e-6, atol=1e-6) if dt == "float32" else dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted({k.split("/")[0] for k in TOP}))
def test_torch_windows(name):
    for key in [k for k in TOP if k.split("/")[0] == name]:
        *args, dt = json.loads(key.split("/", 1)[1])
        for shards in (1, 2):
            got = getattr(st, name)(*args, dtype=getattr(st, dt), shards=shards)
            assert_matches_numpy(got, REF[key], dtype=dt, **_tol(dt))


@pytest.mark.parametrize("name", SIGNAL_NAMES)
def test_signal_windows(name):
    for key in [k for k in SIGNAL if k.split("/")[0] == f"signal.{name}"]:
        n, kw = json.loads(key.split("/", 1)[1])
        kw["dtype"] = getattr(st, kw["dtype"])
        for shards in (1, 2):
            got = getattr(st.signal.windows, name)(n, shards=shards, **kw)
            assert_matches_numpy(got, REF[key], dtype=kw["dtype"], **_tol(kw["dtype"].name))


def test_signatures_and_defaults():
    assert st.signal.windows.__all__ == SIGNAL_NAMES
    assert list(inspect.signature(st.hann_window).parameters)[:2] == ["window_length", "periodic"]
    assert list(inspect.signature(st.hamming_window).parameters)[:4] == [
        "window_length",
        "periodic",
        "alpha",
        "beta",
    ]
    assert inspect.signature(st.kaiser_window).parameters["beta"].default == 12.0
    assert inspect.signature(st.signal.windows.hann).parameters["sym"].default is True
    w = st.hann_window(8)  # periodic by default, in the default dtype
    assert w.dtype == st.get_default_dtype()
    assert_matches_numpy(w, st.hann_window(9, periodic=False).numpy()[:8])
    x = st.signal.windows.hann(5, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0] * 5
    assert st.hann_window(4, requires_grad=True).requires_grad


def test_errors():
    with pytest.raises(st.ShapeError, match="non-negative window_length, got window_length=-1"):
        st.hann_window(-1)
    with pytest.raises(st.DTypeError, match="expects floating point dtypes, got: int64"):
        st.blackman_window(3, dtype=st.int64)
    with pytest.raises(st.ArgumentTypeError, match="'window_length' must be int, not float"):
        st.kaiser_window(3.0)
    with pytest.raises(st.ArgumentTypeError, match="must be int, not bool"):
        st.bartlett_window(True)
    W = st.signal.windows
    with pytest.raises(st.ShapeError, match="non-negative window length, got M=-1"):
        W.hann(-1)
    with pytest.raises(st.ArgumentError, match="float32 or float64 dtypes, got: float16"):
        W.hann(3, dtype=st.float16)
    with pytest.raises(st.ArgumentError, match="Coefficients cannot be empty"):
        W.general_cosine(3, a=[])
    with pytest.raises(st.ArgumentTypeError, match="Coefficients must be a list/tuple"):
        W.general_cosine(3, a=3)
    with pytest.raises(st.ArgumentError, match="Center must be None for symmetric windows"):
        W.exponential(3, center=1.0)
    with pytest.raises(st.ArgumentError, match="Tau must be positive, got: 0"):
        W.exponential(3, tau=0)
    with pytest.raises(st.ArgumentError, match="Standard deviation must be positive"):
        W.gaussian(3, std=0)
    with pytest.raises(st.ArgumentError, match="beta must be non-negative, got: -1"):
        W.kaiser(3, beta=-1)
    with pytest.raises(ValueError):  # torch raises ValueError for these: ours are ValueErrors
        W.kaiser(3, beta=-1)
