import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


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
            np.testing.assert_allclose(w.detach().numpy(), ref[step], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w.detach().numpy()[:, 0], [5, 0, 3], atol=0.05)
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
    np.testing.assert_allclose(model[0].weight.detach().numpy(), [[2.0, -1.0]], atol=1e-3)


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
    return [p.detach().numpy() for p in model.parameters()]


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


# ---------------------------------------------------------------- layers (torch 2.13 values)
XV = [-3.0, -1.5, -0.2, 0.0, 0.3, 1.0, 2.5, 6.0]
TORCH_ACT = {
    "gelu": (
        [-0.00404969409489031, -0.10021080190328704, -0.0841480581121794, 0.0,
         0.1853734266566858, 0.841344746068543, 2.4844758366855597, 5.999999994080474],
        [-0.01194564720418392, -0.1274691922299796, 0.34253175176580575, 0.5,
         0.7323277668271099, 1.0833154705876864, 1.037611085908145, 1.0000000354687093],
    ),
    "gelu_tanh": (
        [-0.0036373920817729943, -0.10042842301976707, -0.08414857021789374, 0.0,
         0.18537092354275922, 0.8411919906082768, 2.484915733910001, 5.9999999999156035],
        [-0.011584166630969648, -0.12771079315143308, 0.3425418508043005, 0.5,
         0.7322954516388018, 1.0829640838457826, 1.037951576212666, 1.0000000007709977],
    ),
    "silu": (
        [-0.14227761953270035, -0.2736382857095345, -0.09003320053750444, 0.0,
         0.1723327550434977, 0.7310585786300049, 2.3103545499468914, 5.985164261060192],
        [-0.08810410601516962, -0.041294154299142946, 0.40066268814515016, 0.5,
         0.6477800103188829, 0.9276705118714869, 1.0994011113415267, 1.0123264325915249],
    ),
}  # fmt: skip
MODS = {"gelu": st.nn.GELU(), "gelu_tanh": st.nn.GELU("tanh"), "silu": st.nn.SiLU()}


@pytest.mark.parametrize("name", sorted(TORCH_ACT))
def test_activation_values_and_grads_match_torch(name):
    x = st.tensor(XV, dtype=st.float64, shards=2, requires_grad=True)
    y = MODS[name](x)
    y.sum().backward()
    val, grad = TORCH_ACT[name]
    np.testing.assert_allclose(y.detach().numpy(), val, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12, atol=1e-14)
    with pytest.raises(st.ArgumentError, match="'exact'"):
        st.nn.GELU("exact")


def test_softmax_modules_identity_flatten():
    x = st.from_numpy(np.arange(24.0).reshape(2, 3, 4) / 7, shards=2)
    e = np.exp(x.numpy())
    np.testing.assert_allclose(st.nn.Softmax(dim=-1)(x).numpy(), e / e.sum(-1, keepdims=True))
    np.testing.assert_allclose(st.nn.Softmax()(x).numpy(), e / e.sum(0, keepdims=True))  # torch
    np.testing.assert_allclose(
        st.nn.LogSoftmax(dim=1)(x).numpy(), np.log(e / e.sum(1, keepdims=True)), rtol=1e-12
    )
    assert st.nn.Identity(3)(x) is x
    assert tuple(st.nn.Flatten()(x).shape) == (2, 12)
    assert tuple(st.nn.Flatten(0, 1)(x).shape) == (6, 4)


def test_layer_norm_matches_torch():
    xs = np.arange(24.0).reshape(2, 3, 4) ** 1.5 % 7
    x = st.from_numpy(xs, shards=2).requires_grad_()
    ln = st.nn.LayerNorm((3, 4), dtype=st.float64)
    st.nn.init.constant_(ln.bias, 0.1)
    with st.no_grad():
        ln.weight.copy_(st.linspace(0.5, 2, 12, dtype=st.float64).reshape(3, 4))
    out = ln(x)
    (out * st.arange(24.0, dtype=st.float64).reshape(2, 3, 4)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy()[0, 0], [-0.606113754645, -0.463307826044,
                               0.160610420977, 1.305725534588], atol=1e-11)  # fmt: skip
    np.testing.assert_allclose(x.grad.numpy()[1, 2], [3.069788125679, 5.423097814531,
                               7.769834272846, 10.113212253657], atol=1e-11)  # fmt: skip
    np.testing.assert_allclose(ln.weight.grad.numpy()[1], [-29.172956665438, -30.810421689932,
                               12.072478528108, 21.063114586275], atol=1e-10)  # fmt: skip
    with pytest.raises(st.ShapeError, match=r"normalized_shape \[4, 4\]"):
        st.nn.functional.layer_norm(x, (4, 4))
    assert list(st.nn.LayerNorm(3, elementwise_affine=False).parameters()) == []


def test_batch_norm_training_running_stats_and_eval_match_torch():
    B = st.from_numpy(np.arange(18.0).reshape(6, 3) ** 1.3 % 5, shards=3).requires_grad_()
    bn = st.nn.BatchNorm1d(3, momentum=0.2).double()
    o = bn(B)
    (o * st.arange(18.0, dtype=st.float64).reshape(6, 3)).sum().backward()
    bn(B * 2)
    np.testing.assert_allclose(o.detach().numpy()[1], [1.362569622578, -0.979724749898,
                               -0.015794297097], atol=1e-11)  # fmt: skip
    np.testing.assert_allclose(B.grad.numpy()[5], [3.434629696023, 6.275649093189,
                               4.987263391462], atol=1e-11)  # fmt: skip
    np.testing.assert_allclose(
        bn.running_mean.numpy(), [1.0201152804794298, 1.3426808724712167, 1.750161639407485]
    )
    np.testing.assert_allclose(
        bn.running_var.numpy(), [4.065285232050501, 2.778258255477639, 2.876239772039739]
    )
    assert bn.num_batches_tracked.item() == 2 and bn.num_batches_tracked.dtype == st.int64
    bn.eval()
    want = [1.562822145332, -0.167873943595, 0.797854035474]
    np.testing.assert_allclose(bn(B[:2]).detach().numpy()[1], want, atol=1e-11)
    assert bn.num_batches_tracked.item() == 2
    cum = st.nn.BatchNorm1d(3, momentum=None).double()
    cum(B)
    cum(B * 2)
    np.testing.assert_allclose(
        cum.running_var.numpy(), [8.920013625131514, 5.5683808736396845, 5.823541073020152]
    )
    b3 = st.nn.BatchNorm1d(3).double()
    x3 = st.from_numpy(np.arange(24.0).reshape(2, 3, 4) ** 1.2 % 3, shards=2)
    np.testing.assert_allclose(b3(x3).detach().numpy()[1, 0], [0.410796525606, -0.771101964655,
                               1.58874576018, 0.476886856603], atol=1e-11)  # fmt: skip
    np.testing.assert_allclose(
        b3.running_var.numpy(), [0.9836916772879737, 0.9643889648103134, 0.9975843879870292]
    )
    with pytest.raises(st.ArgumentError, match=r"BatchNorm1d\(3\).*\[6, 2\]"):
        bn(st.ones(6, 2))


def test_embedding_lookup_and_padding_grad_match_torch():
    E = st.nn.Embedding(5, 2, padding_idx=1).double()
    with st.no_grad():
        E.weight.copy_(st.arange(10.0, dtype=st.float64).reshape(5, 2))
    idx = st.tensor([[1, 3, 3], [0, 1, 4]], shards=2)
    out = E(idx)
    assert tuple(out.shape) == (2, 3, 2)
    assert out.tolist()[0][1] == [6.0, 7.0]
    (out * out).sum().backward()
    assert E.weight.grad.tolist() == [[0.0, 2.0], [0.0, 0.0], [0.0, 0.0], [24.0, 28.0],
                                      [16.0, 18.0]]  # fmt: skip
    assert st.nn.Embedding(4, 3, padding_idx=-1).weight[3].tolist() == [0.0] * 3
    with pytest.raises(st.ArgumentError, match="Padding_idx 7"):
        st.nn.Embedding(4, 3, padding_idx=7)
    frozen = st.nn.Embedding.from_pretrained(st.ones(3, 2))
    assert not frozen.weight.requires_grad


def test_dropout_train_eval_and_same_mask_for_any_sharding():
    st.manual_seed(3)
    a = st.nn.Dropout(0.3)(st.ones(4000, shards=1)).numpy()
    st.manual_seed(3)
    b = st.nn.Dropout(0.3)(st.ones(4000, shards=4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.03
    x = st.ones(10, requires_grad=True)
    d = st.nn.Dropout(0.5)
    y = d(x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    assert d.eval()(x) is x
    assert st.nn.functional.dropout(x, 1.0).tolist() == [0.0] * 10
    with pytest.raises(st.ArgumentError, match="but got 1.5"):
        st.nn.Dropout(1.5)


# ------------------------------------------------------------ Module API, containers, init
class Block(st.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = st.nn.ModuleList([st.nn.Linear(3, 3), st.nn.Linear(3, 2)])
        self.heads = st.nn.ModuleDict({"bn": st.nn.BatchNorm1d(2), "act": st.nn.GELU()})
        self.register_buffer("scale", st.ones(()))
        self.register_buffer("cache", st.zeros(2), persistent=False)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.heads["act"](self.heads["bn"](x)) * self.scale


def test_module_buffers_state_dict_and_conversion():
    m = Block()
    assert [n for n, _ in m.named_parameters()] == [
        "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
        "heads.bn.weight", "heads.bn.bias",
    ]  # fmt: skip
    assert [n for n, _ in m.named_buffers()] == [
        "scale", "cache", "heads.bn.running_mean", "heads.bn.running_var",
        "heads.bn.num_batches_tracked",
    ]  # fmt: skip
    # torch's order: a module's own parameters, then its persistent buffers, then children
    assert list(m.state_dict()) == [
        "scale", "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
        "heads.bn.weight", "heads.bn.bias", "heads.bn.running_mean", "heads.bn.running_var",
        "heads.bn.num_batches_tracked",
    ]  # fmt: skip
    m.double()
    assert all(t.dtype == st.float64 for t in m.parameters())
    assert m.heads["bn"].running_mean.dtype == st.float64
    assert m.heads["bn"].num_batches_tracked.dtype == st.int64
    with pytest.raises(st.DTypeError, match="int32"):
        m.to(st.int32)
    with pytest.raises(st.BackendUnavailable, match="unknown device 'xla'"):
        m.to("xla")  # torch: a string is a device ("Expected one of cpu, cuda, ...")
    assert m.to("float64") is m and m.scale.dtype == st.float64
    x = st.from_numpy(np.random.default_rng(0).standard_normal((8, 3)), shards=2)
    m(x).sum().backward()
    other = Block().double()
    other.load_state_dict(m.state_dict())
    assert other.heads["bn"].num_batches_tracked.item() == 1
    np.testing.assert_array_equal(
        other.heads["bn"].running_var.numpy(), m.heads["bn"].running_var.numpy()
    )
    m.eval()
    other.eval()
    assert not other.training and not other.heads["bn"].training
    np.testing.assert_allclose(other(x).detach().numpy(), m(x).detach().numpy())
    assert m.train().training and m.layers[1].training
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    with pytest.raises(st.DTypeError, match="buffer 'x'"):
        m.register_buffer("x", 3.0)


def test_module_list_and_dict_operations():
    ml = st.nn.ModuleList([st.nn.ReLU(), st.nn.Tanh()])
    ml.append(st.nn.Identity())
    ml.insert(0, st.nn.SiLU())
    assert [type(x).__name__ for x in ml] == ["SiLU", "ReLU", "Tanh", "Identity"]
    assert isinstance(ml[-1], st.nn.Identity) and len(ml[1:3]) == 2
    del ml[0]
    assert [type(x).__name__ for x in ml] == ["ReLU", "Tanh", "Identity"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ml[5]
    md = st.nn.ModuleDict({"a": st.nn.Linear(2, 2)})
    md["b"] = st.nn.Linear(2, 1)
    assert "b" in md and list(md) == ["a", "b"] and len(list(md.parameters())) == 4
    md.pop("a")
    assert list(md.keys()) == ["b"]


def test_init_functions_use_torchs_fans_and_gains():
    st.manual_seed(0)
    w = st.empty(200, 300, shards=2)
    for fn, args, std in [
        (st.nn.init.xavier_uniform_, (), (2 / 500) ** 0.5),
        (st.nn.init.xavier_normal_, (2.0,), 2 * (2 / 500) ** 0.5),
        (st.nn.init.kaiming_uniform_, (), (2 / 300) ** 0.5),
        (st.nn.init.kaiming_normal_, (0, "fan_out", "relu"), (2 / 200) ** 0.5),
        (st.nn.init.normal_, (1.0, 0.5), 0.5),
    ]:
        assert fn(w, *args) is w
        v = w.numpy()
        assert v.std() == pytest.approx(std, rel=0.02), fn.__name__
        if "uniform" in fn.__name__:
            assert np.abs(v).max() <= std * 3**0.5
    st.nn.init.uniform_(w, 2.0, 3.0)
    assert 2.0 <= w.min().item() and w.max().item() < 3.0
    assert st.nn.init.zeros_(w).sum().item() == 0 and st.nn.init.ones_(w).sum().item() == 60000
    st.manual_seed(4)
    a = st.nn.init.kaiming_uniform_(st.empty(6, 5, shards=1)).numpy()
    st.manual_seed(4)
    np.testing.assert_array_equal(a, st.nn.init.kaiming_uniform_(st.empty(6, 5, shards=3)).numpy())
    assert st.nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(1.3867504905630728)
    with pytest.raises(st.ShapeError, match="fewer than 2 dimensions"):
        st.nn.init.xavier_uniform_(st.empty(3))
    with pytest.raises(st.ArgumentError, match="Mode fan_avg"):
        st.nn.init.kaiming_normal_(w, mode="fan_avg")
    p = st.nn.Parameter(st.ones(3, 3))
    st.nn.init.normal_(p)  # a leaf requiring grad: filled under no_grad
    assert p.requires_grad and p.is_leaf


def test_clip_grad_norm_matches_torch():
    w = st.nn.Parameter(st.tensor([3.0, 4.0]))
    v = st.nn.Parameter(st.tensor([[12.0]]))
    w.grad, v.grad = st.tensor([3.0, 4.0]), st.tensor([[12.0]])
    total = st.nn.utils.clip_grad_norm_([w, v], 2.0)
    assert total.item() == 13.0
    np.testing.assert_allclose(w.grad.numpy(), [0.4615384340286255, 0.615384578704834])
    np.testing.assert_allclose(v.grad.numpy(), [[1.846153736114502]])
    w.grad, v.grad = st.tensor([3.0, -4.0]), st.tensor([[1.0]])
    assert st.nn.utils.clip_grad_norm_([w, v], 2.0, norm_type="inf").item() == 4.0
    np.testing.assert_allclose(w.grad.numpy(), [1.4999996423721313, -1.9999995231628418])
    w.grad = st.tensor([3.0, -4.0], shards=2)
    assert st.nn.utils.clip_grad_norm_(w, 100.0, norm_type=1).item() == 7.0
    assert w.grad.tolist() == [3.0, -4.0]
    w.grad = st.tensor([float("nan"), 1.0])
    with pytest.raises(st.errors.AutogradError, match="non-finite"):
        st.nn.utils.clip_grad_norm_(w, 1.0, error_if_nonfinite=True)


def test_embedding_refuses_a_weight_that_is_not_2d_like_torch():
    # torch: RuntimeError "'weight' must be 2-D" for a 0-, 1- or 3-d weight
    idx = st.tensor([0, 1], shards=2)
    for w in (st.tensor([1.0, 2.0, 3.0]), st.tensor(1.0), st.ones(3, 2, 2)):
        with pytest.raises(st.ShapeError, match="'weight' must be 2-D"):
            st.nn.functional.embedding(idx, w)


def test_embedding_keeps_the_layout_of_its_indices():
    """A replicated table (a layer's default) is read where each block of indices lies: a
    sequence-split batch stays split along the sequence, and gradients match the rows'."""
    E = st.nn.Embedding(7, 3, padding_idx=2).double()
    w = E.weight.detach().numpy()
    idx = np.array([[0, 2, 5, 6], [1, 2, 2, 3]])
    for dim in (0, 1):
        x = st.tensor(idx, shards=2, dim=dim)
        out = E(x)
        assert out.layout.grid == ((2, 1, 1) if dim == 0 else (1, 2, 1))
        np.testing.assert_array_equal(out.detach().numpy(), w[idx])
        E.weight.grad = None
        (out * out).sum().backward()
        want = np.zeros_like(w)
        np.add.at(want, idx.ravel(), 2 * w[idx].reshape(-1, 3))
        want[2] = 0.0  # padding_idx gets no gradient
        np.testing.assert_allclose(E.weight.grad.numpy(), want)
