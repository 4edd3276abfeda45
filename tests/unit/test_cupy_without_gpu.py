"""With CuPy installed (``sharded[gpu]``) on a machine with no usable GPU, sharded imports,
``st.cuda.is_available()`` is False and a CUDA device is refused with a typed error; skipped
where CuPy is not installed (the dev extra does not bring it) or a GPU is usable."""

import pytest

import sharded as st
from sharded.backend import get_backend, special

cp = pytest.importorskip("cupy")


def _gpus() -> int:
    try:
        return cp.cuda.runtime.getDeviceCount()
    except Exception:  # no driver, or one too old for this CuPy: no usable GPU
        return 0


pytestmark = pytest.mark.skipif(_gpus() > 0, reason="a GPU is usable here")


def test_import_and_availability():
    assert st.cuda.is_available() is False
    assert st.cuda.device_count() == 0


def test_a_cuda_device_is_refused_with_a_typed_error():
    with pytest.raises(st.BackendUnavailable, match="cuda:0"):
        get_backend("cuda")
    with pytest.raises(st.BackendUnavailable, match="cuda"):
        st.zeros(2, device="cuda")


def test_the_gpu_special_functions_load_without_a_gpu():
    import cupyx.scipy.special

    assert special(cp) is cupyx.scipy.special
