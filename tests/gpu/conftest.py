"""GPU tests: the in-process executor with several GPU workers and a CPU worker (the GPU
machines have CuPy but not Ray). Skipped, with the reason, where CuPy or a GPU is missing."""

import pytest

import sharded as st


def _gpu_reason():
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver
        return f"no usable CUDA driver ({e})"
    return None if n else "no GPU is visible"


REASON = _gpu_reason()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/gpu" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.gpu)
            if REASON:
                item.add_marker(pytest.mark.skip(reason=f"GPU test skipped: {REASON}"))


@pytest.fixture(scope="package", autouse=True)
def gpu_session():
    """Workers 0 and 1 on the first GPU, worker 2 on the CPU."""
    if REASON:
        yield
        return
    st.shutdown()
    st.init(executor="local", devices=["cuda:0", "cuda:0", "cpu"])
    yield
    st.shutdown()
