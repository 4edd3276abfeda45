"""Device handling on a machine without GPU workers (the GPU suite is tests/gpu)."""

import pytest

import sharded as st
from sharded.devices import matches, normalize


def test_cpu_tensors_and_noop_moves():
    x = st.ones(4, shards=2)
    assert x.device == "cpu" and not x.is_cuda
    assert x.to("cpu") is x and x.cpu() is x
    assert x.to("cpu", st.float64).dtype == st.float64
    assert all(p["device"] == "cpu" for p in x.placement())


def test_asking_for_a_gpu_names_device_and_reason():
    with pytest.raises(st.BackendUnavailable, match="'cuda'.*no GPU worker"):
        st.zeros(3, device="cuda")
    with pytest.raises(st.BackendUnavailable, match="cuda:1"):
        st.ones(3).to("cuda:1")
    with pytest.raises(st.BackendUnavailable):
        st.ones(3).cuda()
    with pytest.raises(st.BackendUnavailable, match="unknown device"):
        st.zeros(3, device="tpu")


def test_unknown_strings_in_to_are_device_errors():
    # torch reads a string argument of .to() as a device: "Expected one of cpu, cuda, ...
    # device type at start of device string: foo" (RuntimeError), not a dtype error
    x = st.ones(3, shards=2)
    for bad in ("xla", "foo", "CPU", "cuda:x"):
        with pytest.raises(st.BackendUnavailable, match=f"unknown device '{bad}'"):
            x.to(bad)
        with pytest.raises(st.BackendUnavailable, match=f"'{bad}'"):
            x.to(device=bad)
    with pytest.raises(st.BackendUnavailable, match="'xla'"):
        x.to("xla", st.float64)
    assert x.dtype == st.float32 and x.tolist() == [1.0, 1.0, 1.0]
    # dtype names stay accepted (an extension: torch wants st.float64 itself)
    assert x.to("float64").dtype == st.float64 and x.to("cpu", "int32").dtype == st.int32


def test_device_matching_rules():
    assert normalize("cuda") == "cuda" and normalize("cuda:2") == "cuda:2"
    assert matches("cuda:1", "cuda") and not matches("cpu", "cuda")
    assert matches("cuda:1", "cuda:1") and not matches("cuda:0", "cuda:1")


def test_gpu_workers_without_cupy_or_gpu_fail_clearly():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed here; covered by tests/gpu")
    except ImportError:
        pass
    st.shutdown()
    try:
        with pytest.raises(st.BackendUnavailable, match="CuPy"):
            st.init(executor="local", devices=["cuda:0", "cpu"])
    finally:
        st.shutdown()
        st.init(executor="local", num_workers=3, min_shard_bytes=0)


def test_device_objects_as_torch():
    d = st.device("cpu")
    assert repr(d) == "device(type='cpu')" and str(d) == "cpu" and d.type == "cpu"
    assert d.index is None and d == "cpu"
    c = st.device("cuda", 1)
    assert repr(c) == "device(type='cuda', index=1)" and str(c) == "cuda:1" and c.index == 1
    assert st.device("cuda:1") == c and st.device(0) == "cuda:0" and st.device(d) is d
    with pytest.raises(RuntimeError):
        st.device("foo")
    x = st.ones(3, shards=2)
    assert repr(x.device) == "device(type='cpu')" and str(x.device) == "cpu"
    assert x.device.type == "cpu" and x.is_cpu and not x.is_cuda
    assert st.zeros(2, device=st.device("cpu")).device == st.device("cpu")
    assert x.to(st.device("cpu")) is x
    assert st.full((2,), 1.5, device=d).tolist() == [1.5, 1.5]


def test_to_keywords_as_torch():
    x = st.tensor([1.5, -2.5], shards=2)
    assert x.to("cpu", non_blocking=True) is x
    y = x.to(st.float32, copy=True)
    assert y is not x and y.tolist() == x.tolist()
    assert x.to(device="cpu", dtype=st.float64).dtype == st.float64
    assert x.type("torch.DoubleTensor").dtype == st.float64
    assert x.type("torch.LongTensor").tolist() == [1, -2]
    with pytest.raises(ValueError):
        x.type("torch.NoSuchTensor")
    with pytest.raises(st.BackendUnavailable):
        x.cuda()
    assert x.tolist() == [1.5, -2.5]


def test_cuda_namespace_without_a_gpu_as_torch():
    assert st.get_default_device() == st.device("cpu")
    assert not st.cuda.is_available() and st.cuda.device_count() == 0
    assert not st.cuda.is_initialized()
    st.manual_seed(4)
    a = st.rand(3).tolist()
    st.manual_seed(4)
    st.cuda.manual_seed(9)  # torch: the CPU stream is untouched
    st.cuda.manual_seed_all(9)
    st.cuda.empty_cache()
    assert st.rand(3).tolist() == a


@pytest.mark.parametrize("shards", [1, 2])
def test_to_positional_flags_as_torch(shards):
    # torch: to(device, dtype, non_blocking, copy); the bools are flags, never a dtype
    x = st.tensor([1.5, -2.5, 3.0], shards=shards)
    y = x.to("cpu", st.float64, True, True)
    assert y.dtype == st.float64 and y.tolist() == [1.5, -2.5, 3.0]
    assert x.to("cpu", st.float32, False, True) is not x
    assert x.to("cpu", st.float32, True, False) is x
    assert x.to(st.float32, False, True) is not x
    assert x.to(x, False, True) is not x
