"""``st.autocast``: torch's CPU autocast lists (products and convolutions in bfloat16, losses
and ``prod`` in float32, the rest in their arguments' dtypes), gradients through the casts,
nesting, the decorator form, per-thread state and torch's refusals. The literals are torch
2.13's answers (CPU) for the same inputs."""

import threading
import warnings

import numpy as np
import pytest

import sharded as st
from sharded.errors import ArgumentError

pytestmark = pytest.mark.ray_mirror

F = st.nn.functional
X = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7
W = np.arange(8.0, dtype=np.float32).reshape(2, 4) / 5
PLACES = [{}, dict(shards=2, dim=0)]


def close(t, want, tol=0.0):
    np.testing.assert_allclose(
        t.detach().float().numpy(), np.asarray(want, np.float32), rtol=tol, atol=tol
    )


@pytest.mark.parametrize("place", PLACES, ids=["whole", "split"])
def test_linear_runs_in_bfloat16_and_the_loss_in_float32(place):
    x = st.tensor(X, **place)
    w = st.tensor(W, requires_grad=True)
    b = st.tensor([0.1, -0.2], requires_grad=True)
    with st.autocast("cpu"):
        y = F.linear(x, w, b)
        loss = F.cross_entropy(y, st.tensor([1, 0, 1]))
        mse = F.mse_loss(y, st.zeros(3, 2))
    assert y.dtype == st.bfloat16 and loss.dtype == st.float32 and mse.dtype == st.float32
    # one rounding of the float32 product plus bias (torch's), not one per step
    close(y, [[0.5, 0.8828125], [1.1875, 3.40625], [1.875, 5.90625]])
    assert loss.item() == pytest.approx(0.9531745910644531, rel=1e-6)
    assert mse.item() == pytest.approx(8.74024486541748, rel=1e-6)
    loss.backward()
    assert w.grad.dtype == st.float32 and b.grad.dtype == st.float32
    g = [-0.1650390625, -0.1884765625, -0.2109375, -0.234375]
    close(w.grad, [g, [-v for v in g]])
    close(b.grad, [-0.16015625, 0.16015625])


def test_products_convolution_and_attention_match_torch():
    x = st.tensor((np.arange(32.0, dtype=np.float32).reshape(1, 2, 4, 4) / 9).astype(np.float32))
    x = x.sin()
    w = (st.arange(18.0).reshape(1, 2, 3, 3) / 7).cos()
    q = (st.arange(24.0).reshape(1, 2, 3, 4) / 5).sin()
    with st.autocast("cpu"):
        c = F.conv2d(x, w, st.tensor([0.3]), padding=1)
        a = F.scaled_dot_product_attention(q, q.cos(), q * 2)
        bm = st.baddbmm(st.ones(1, 3, 3), q[0], q[0].transpose(-1, -2), beta=0.5, alpha=2)
        p = st.prod(x[0, 0, 0] + 1)
        h = F.huber_loss(c, st.zeros(c.shape))
    assert (c.dtype, a.dtype, bm.dtype) == (st.bfloat16,) * 3
    assert (p.dtype, h.dtype) == (st.float32, st.float32)
    conv = [-0.91015625, -0.796875, -0.1796875, 0.4765625, 0.9765625, 2.40625, 3.3125, 3.0]
    conv += [3.328125, 5.75, 6.4375, 4.90625, 3.53125, 5.53125, 5.75, 4.0625]
    close(c.flatten(), conv)
    attn = [1.0859375, 1.2890625, 1.4453125, 1.546875, 0.921875, 1.15625, 1.3515625, 1.4921875]
    attn += [0.8984375, 1.140625, 1.3359375, 1.484375, -0.020263671875, -0.341796875]
    attn += [-0.6484375, -0.9296875, -0.2138671875, -0.5234375, -0.8125, -1.0625]
    attn += [-0.35546875, -0.65234375, -0.92578125, -1.15625]
    # torch's CPU kernel rounds the probabilities to bfloat16 before multiplying by v;
    # sharded multiplies in float32 and rounds once: 5 of 24 a bfloat16 step (2^-8) apart
    close(a.flatten(), attn, tol=2.0**-8)
    bmm = [1.5234375, 2.671875, 2.515625, 2.671875, 6.625, 6.875, 2.515625, 6.875, 7.34375]
    bmm += [2.203125, -0.314453125, -2.34375, -0.314453125, 1.78125, 3.09375, -2.34375]
    bmm += [3.09375, 6.9375]
    close(bm.flatten(), bmm)
    assert p.item() == pytest.approx(1.799302577972412, rel=1e-6)
    assert h.item() == pytest.approx(2.740866184234619, rel=2e-3)


def test_other_ops_keep_their_dtypes():
    x, w = st.tensor(X), st.tensor(W)
    i = st.arange(6).reshape(2, 3)
    with st.autocast("cpu"):
        y = x @ w.t()
        assert y.dtype == st.bfloat16
        assert st.relu(y).dtype == st.bfloat16 and y.sum().dtype == st.bfloat16
        assert (y + st.ones(3, 2)).dtype == st.float32  # bfloat16 + float32 promotes
        assert (x.double() @ w.double().t()).dtype == st.float64  # float64 is never cast
        assert (i @ i.t()).dtype == st.int64
        assert st.bmm(x[None], x.t()[None]).dtype == st.bfloat16
    assert (x @ w.t()).dtype == st.float32  # after the block


def test_nesting_the_decorator_and_the_state():
    a = st.ones(2, 2)
    assert not st.is_autocast_enabled("cpu") and not st.is_autocast_enabled()
    assert st.get_autocast_dtype("cpu") == st.bfloat16
    assert st.get_autocast_dtype("cuda") == st.float16

    @st.autocast("cpu", enabled=False)
    def full(t):
        return t @ t

    @st.amp.autocast("cpu", dtype=st.float16)
    def half(t):
        return t @ t

    with st.autocast("cpu"):
        assert st.is_autocast_enabled("cpu") and not st.is_autocast_enabled()
        with st.autocast("cpu", enabled=False):
            assert not st.is_autocast_enabled("cpu")
            assert (a @ a).dtype == st.float32
        assert (a @ a).dtype == st.bfloat16
        assert full(a).dtype == st.float32
        assert half(a).dtype == st.float16
        assert st.get_autocast_dtype("cpu") == st.bfloat16
    assert not st.is_autocast_enabled("cpu")
    assert half(a).dtype == st.float16 and (a @ a).dtype == st.float32


def test_each_thread_has_its_own_state():
    a, seen = st.ones(2, 2), {}
    with st.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.update(dtype=(a @ a).dtype))
        t.start()
        t.join(30)
        assert (a @ a).dtype == st.bfloat16
    assert seen["dtype"] == st.float32


def test_a_training_step_under_autocast_updates_float32_parameters():
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(4, 8), st.nn.ReLU(), st.nn.Linear(8, 1))
    opt = st.optim.SGD(model.parameters(), lr=0.1)
    x, y = st.tensor(X, shards=2), st.ones(3, 1)
    before = model[0].weight.detach().clone()
    with st.autocast("cpu"):
        out = model(x)
        loss = F.mse_loss(out, y)
    assert out.dtype == st.bfloat16 and loss.dtype == st.float32
    loss.backward()
    opt.step()
    assert model[0].weight.dtype == st.float32 and model[0].weight.grad.dtype == st.float32
    assert not np.array_equal(model[0].weight.detach().numpy(), before.numpy())


def test_refusals_as_torch():
    with pytest.raises(ArgumentError, match="unsupported autocast device_type 'tpu'"):
        st.autocast("tpu")
    with pytest.raises(TypeError, match="of type `str`"):
        st.autocast(3)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with st.autocast("cpu", dtype=st.float32):
            assert not st.is_autocast_enabled("cpu")
            assert (st.ones(2, 2) @ st.ones(2, 2)).dtype == st.float32
    assert any("Disabling autocast" in str(r.message) for r in rec)
