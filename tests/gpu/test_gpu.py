"""Every op family on GPU shards (and mixed CPU+GPU tensors), compared with NumPy."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

A = np.random.default_rng(0).standard_normal((7, 6))
B = np.random.default_rng(1).standard_normal((7, 6))


def test_creation_and_placement_on_gpu():
    x = st.from_numpy(A, device="cuda", shards=2)
    assert x.device == "cuda:0" and x.is_cuda
    assert all(p["device"] == "cuda:0" for p in x.placement())
    assert_matches_numpy(x, A)
    st.manual_seed(3)
    g = st.rand(5, 4, device="cuda", shards=2).numpy()
    st.manual_seed(3)
    np.testing.assert_array_equal(g, st.rand(5, 4, device="cpu").numpy())


def test_elementwise_reductions_on_gpu():
    x = st.from_numpy(A, device="cuda", shards=2)
    y = st.from_numpy(B, device="cuda", shards=2, dim=1)
    assert_matches_numpy(st.exp(x) * y - x / 3, np.exp(A) * B - A / 3)
    assert_matches_numpy(x.sum(0), A.sum(0))
    assert_matches_numpy(x.max(1).indices, A.argmax(1))
    assert_matches_numpy(st.softmax(x, 1), np.exp(A) / np.exp(A).sum(1, keepdims=True))
    assert_matches_numpy(x[x > 0], A[A > 0])
    assert_matches_numpy(x.t()[1:, ::2], A.T[1:, ::2])


def test_mixed_cpu_gpu_tensor():
    x = st.from_numpy(A, layout=st.Layout(shards=3, workers=(0, 2, 1)))
    assert x.device == "mixed(cpu, cuda:0)"
    assert [p["device"] for p in x.placement()] == ["cuda:0", "cpu", "cuda:0"]
    assert_matches_numpy(x * 2 + st.from_numpy(B, shards=2), A * 2 + B)
    assert x.sum().item() == pytest.approx(A.sum())


def test_moving_between_devices_and_float16():
    x = st.from_numpy(A, shards=2)
    g = x.to("cuda")
    assert g.device == "cuda:0" and x.device == "cpu"
    assert_matches_numpy(g, A)
    assert g.cpu().device == "cpu" and g.cuda() is g
    h = x.to("cuda", st.float16)
    assert h.dtype == st.float16
    assert_matches_numpy(h * 2, (A.astype(np.float16) * 2), rtol=1e-3, atol=1e-3)


def test_matmul_and_autograd_on_gpu():
    x = st.from_numpy(A, device="cuda", shards=2, requires_grad=True)
    w = st.from_numpy(
        B[:6].T.copy(), device="cuda", layout=st.Layout.replicated(), requires_grad=True
    )
    out = (x @ w).tanh().sum()
    out.backward()
    t = np.tanh(A @ B[:6].T)
    assert out.item() == pytest.approx(t.sum())
    assert_matches_numpy(w.grad, A.T @ (1 - t**2), rtol=1e-10)
    assert w.grad.device == "cuda:0"


def test_matrix_vector_products_on_gpu():
    # a vector is read as it is (1-D blocks: a gemv, a 0-d dot on two vectors) and gathered
    # whole to each worker holding rows of the matrix; a CPU worker among GPU ones too
    v = np.random.default_rng(2).standard_normal(6)
    a = st.from_numpy(A, device="cuda", shards=2)
    for place in (dict(shards=2), dict(shards=1), dict(layout=st.Layout.replicated())):
        x = st.from_numpy(v, device="cuda", **place)
        assert_matches_numpy(a @ x, A @ v, rtol=1e-10)
        assert_matches_numpy(x @ a.mT, v @ A.T, rtol=1e-10)
        assert_matches_numpy(a.mT @ st.from_numpy(B[:, 0], device="cuda", **place), A.T @ B[:, 0])
        assert (x @ x).item() == pytest.approx(v @ v)
    w = st.from_numpy(A, device="cuda", shards=2, requires_grad=True)
    u = st.from_numpy(v, device="cuda", shards=2, requires_grad=True)
    (w @ u).sum().backward()
    assert_matches_numpy(w.grad, np.outer(np.ones(7), v), rtol=1e-10)
    assert_matches_numpy(u.grad, A.sum(0), rtol=1e-10)
    m = st.from_numpy(A, layout=st.Layout(shards=3, workers=(0, 2, 1)))
    assert_matches_numpy(m @ st.from_numpy(v, device="cuda", shards=2), A @ v, rtol=1e-10)


def test_gpu_missing_device_is_a_typed_error():
    with pytest.raises(st.BackendUnavailable, match="cuda:7"):
        st.zeros(3, device="cuda:7")
