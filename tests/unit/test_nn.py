import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy


def test_stable_cross_entropy():
    x = st.tensor([1000.0, 0.0], requires_grad=True)
    loss = st.nn.functional.cross_entropy(x, st.tensor([0.5, 0.5]))
    assert loss.item() == 500.0
    loss.backward()
    assert x.grad.tolist() == [0.5, -0.5]
    logits = st.from_numpy(np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]]), shards=2)
    target = st.tensor([0, 1])
    ref = -np.log(np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(1, keepdims=True))
    ce = st.nn.CrossEntropyLoss()(logits, target).item()
    assert ce == pytest.approx((ref[0, 0] + ref[1, 1]) / 2, rel=1e-12)
    assert st.nn.MSELoss(reduction="sum")(st.ones(3), st.zeros(3)).item() == 3.0


def _adam_reference(X, y, w, steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    m, v, out = np.zeros_like(w), np.zeros_like(w), []
    for t in range(1, steps + 1):
        g = 2 * X.T @ (X @ w - y) / len(y)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
        out.append(w.copy())
    return out


def test_curve_fitting_with_adam_matches_numpy_step_for_step():
    xs = np.linspace(-1, 2, 64)  # asymmetric: no weight sits at round-off level
    x = st.from_numpy(xs, shards=4)
    X = st.stack([x**2, x, st.ones_like(x)], dim=1)  # features, row-sharded like x
    y = (5 * x**2 + 3).unsqueeze(1)
    w = st.nn.Parameter(st.zeros(3, 1, dtype=st.float64, layout=st.Layout.replicated()))
    opt = st.optim.Adam([w], lr=0.1)
    steps = 500
    ref = _adam_reference(X.numpy(), y.numpy(), np.zeros((3, 1)), steps)
    for step in range(steps):
        opt.zero_grad()
        loss = ((X @ w - y) ** 2).mean()
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            np.testing.assert_allclose(w.numpy(), ref[step], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w.numpy()[:, 0], [5, 0, 3], atol=0.05)
    assert w.layout.is_replicated


class Net(st.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = st.nn.Parameter(st.tensor(0.0, dtype=st.float64))
        self.b = st.nn.Parameter(st.tensor(0.0, dtype=st.float64))

    def forward(self, x):
        return self.a * x + self.b


def test_net_with_two_parameters_fits_with_sgd():
    x = st.linspace(-1, 1, 40, dtype=st.float64, shards=3)
    y = 3 * x - 2
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["a", "b"]
    opt = st.optim.SGD(net.parameters(), lr=0.5, momentum=0.5)
    for _ in range(100):
        opt.zero_grad()
        st.nn.functional.mse_loss(net(x), y).backward()
        opt.step()
    assert net.a.item() == pytest.approx(3, abs=1e-4)
    assert net.b.item() == pytest.approx(-2, abs=1e-4)


def test_linear_sequential_fit():
    st.manual_seed(0)
    x = st.rand(200, 2, dtype=st.float64, shards=4)
    y = x @ st.tensor([[2.0], [-1.0]], dtype=st.float64) + 0.5
    model = st.nn.Sequential(st.nn.Linear(2, 1, dtype=st.float64))
    opt = st.optim.SGD(model.parameters(), lr=0.5, weight_decay=0.0)
    for _ in range(300):
        opt.zero_grad()
        loss = st.nn.MSELoss()(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-6
    np.testing.assert_allclose(model[0].weight.numpy(), [[2.0, -1.0]], atol=1e-3)


def _mlp_run(shards, steps=20):
    st.manual_seed(7)
    model = st.nn.Sequential(st.nn.Linear(5, 16), st.nn.Tanh(), st.nn.Linear(16, 3)).double()
    rng = np.random.default_rng(3)
    X = st.from_numpy(rng.standard_normal((120, 5)), shards=shards)
    labels = st.tensor(rng.integers(0, 3, 120), shards=shards)
    opt = st.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        st.nn.CrossEntropyLoss()(model(X), labels).backward()
        opt.step()
    return [p.numpy() for p in model.parameters()]


def test_data_parallel_mlp_equals_unsharded_run():
    one = _mlp_run(1)
    four = _mlp_run(4)
    for a, b in zip(one, four):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-12)


def test_module_api():
    m = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.ReLU(), st.nn.Sigmoid())
    assert len(list(m.parameters())) == 2 and len(m) == 3
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    m.double()
    assert all(p.dtype == st.float64 for p in m.parameters())
    out = m(st.ones(2, 3, dtype=st.float64))
    out.sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    assert "Linear(in_features=3, out_features=4, bias=True)" in repr(m)
    with pytest.raises(st.ArgumentError):
        st.optim.SGD([], lr=0.1)
    assert_matches_numpy(st.nn.functional.relu(st.tensor([-1.0, 2.0])), np.array([0.0, 2.0]))
