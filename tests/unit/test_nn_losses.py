"""nn.functional losses, one_hot/pad/similarities, containers and init added by the torch
audit; expected values are torch 2.13's (float64), written as literals."""

import warnings

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional

X = [[1.0, 2.0, 0.5], [0.1, -1.0, 2.0], [0.3, 0.3, -0.4], [2.0, 0.0, 1.0]]
T = [0, 2, -100, 1]
W = [1.0, 2.0, 0.5]
ZERO = [0.0, 0.0, 0.0]
CE_CASES = [  # keywords, loss, gradient of the loss
    ({}, 1.3512530780471463,
     [[-0.256258700792617, 0.20951057307058746, 0.04674812772202949],
      [0.04156915827672936, 0.013837170763991895, -0.055406329040721215], ZERO,
      [0.2217469852582739, -0.30332314227653984, 0.08157615701826587]]),
    ({"weight": W}, 1.8201351302260753,
     [[-0.21965031496510026, 0.17958049120336067, 0.040069823761739565],
      [0.017815353547169725, 0.005930216041710812, -0.023745569588880522], ZERO,
      [0.3801376890141839, -0.5199825296169255, 0.1398448406027415]]),
    ({"label_smoothing": 0.2}, 1.3823641891582574,
     [[-0.21181425634817252, 0.1872883508483652, 0.02452590549980726],
      [0.019346936054507137, -0.008385051458230328, -0.010961884596276762], ZERO,
      [0.19952476303605166, -0.2588786978320954, 0.05935393479604364]]),
    ({"weight": W, "label_smoothing": 0.2}, 1.7958825293140992,
     [[-0.179352944511556, 0.14747126948156797, 0.03188167502998803],
      [0.003518495445462607, -0.03058363110907106, 0.027065135663608474], ZERO,
      [0.32941192921538287, -0.4480792235774198, 0.11866729436203687]]),
]  # fmt: skip


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("kw,loss,grad", CE_CASES)
def test_cross_entropy_weight_ignore_index_label_smoothing_match_torch(kw, loss, grad, dim):
    x = st.from_numpy(np.array(X), shards=2, dim=dim).requires_grad_()
    kw = {k: st.tensor(v, dtype=st.float64) if k == "weight" else v for k, v in kw.items()}
    out = F.cross_entropy(x, st.tensor(T, shards=3), **kw)
    assert out.item() == pytest.approx(loss, rel=1e-12)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-10, atol=1e-14)


def test_cross_entropy_ignore_index_naming_a_class_and_reduction_none():
    x = st.tensor(X, dtype=st.float64, requires_grad=True)
    # ignore_index=2 drops row 1 (its target is class 2) even though 2 is a valid class
    out = F.cross_entropy(x, st.tensor([0, 2, 0, 1]), ignore_index=2)
    assert out.item() == pytest.approx(1.5956328894269174, rel=1e-12)
    out.backward()
    assert x.grad[1].tolist() == [0.0, 0.0, 0.0]
    w = st.tensor(W, dtype=st.float64)
    none = st.nn.CrossEntropyLoss(w, reduction="none", label_smoothing=0.1)(x, st.tensor(T))
    np.testing.assert_allclose(
        none.detach().numpy(),
        [1.4304415971764106, 0.36634454183383086, 0.0, 4.531244765185063],
        1e-12,
    )
    lp = st.log_softmax(x.detach(), 1)
    assert F.nll_loss(lp, st.tensor(T), weight=w).item() == pytest.approx(1.8201351302260753)
    assert st.nn.NLLLoss(reduction="sum")(lp, st.tensor(T)).item() == pytest.approx(
        4.053759234141439
    )


def test_cross_entropy_bad_targets_raise_torchs_error_classes():
    x = st.tensor(X)
    # a class out of range is checked by the workers: it raises at the next read, as an
    # OpFailed that is also torch's IndexError; x stays usable
    loss = F.cross_entropy(x, st.tensor([0, 3, 1, 1], shards=2))
    with pytest.raises(IndexError, match="Target 3 is out of bounds") as e:
        loss.item()
    assert isinstance(e.value, st.OpFailed)
    assert x.shape == (4, 3) and np.isfinite(x.numpy()).all()
    with pytest.raises(RuntimeError, match="Long"):
        F.cross_entropy(x, st.tensor([0, 1, 1, 1], dtype=st.int32))
    with pytest.raises(ValueError):
        F.cross_entropy(x, st.tensor([0, 1, 1]))
    with pytest.raises(IndexError):
        F.nll_loss(x, st.tensor([0, -1, 1, 1])).item()
    assert np.isnan(F.cross_entropy(st.zeros(0, 3), st.tensor([], dtype=st.int64)).item())


def test_pointwise_losses_match_torch():
    a = st.tensor([0.5, -2.0, 3.0, 0.1], dtype=st.float64, shards=3)
    b = st.tensor([0.0, 0.5, 1.0, 0.3], dtype=st.float64)
    assert F.l1_loss(a, b).item() == pytest.approx(1.3)
    assert st.nn.L1Loss(reduction="sum")(a, b).item() == pytest.approx(5.2)
    np.testing.assert_allclose(
        F.huber_loss(a, b, delta=0.7, reduction="none").numpy(), [0.125, 1.505, 1.155, 0.02]
    )
    np.testing.assert_allclose(
        st.nn.SmoothL1Loss(reduction="none", beta=0.5)(a, b).numpy(), [0.25, 2.25, 1.75, 0.04]
    )
    p = st.tensor([0.2, 0.9, 0.5, 0.0], dtype=st.float64)
    y = st.tensor([0.0, 1.0, 1.0, 1.0], dtype=st.float64)
    bce = [0.22314355131420976, 0.10536051565782628, 0.6931471805599453, 100.0]  # log clamp
    np.testing.assert_allclose(st.nn.BCELoss(reduction="none")(p, y).numpy(), bce, 1e-12)
    pw = st.tensor([2.0], dtype=st.float64)
    bcel = [5.006715348489118, 40.000000004122306, 1.8715245937679474e-13, 0.6265233750364457]
    got = st.nn.BCEWithLogitsLoss(reduction="none", pos_weight=pw)(a * 10, y)
    np.testing.assert_allclose(got.numpy(), bcel, 1e-9)
    with pytest.raises(ValueError):
        F.binary_cross_entropy(p, y[:2])
    a2, b2 = a.reshape(2, 2), b.reshape(2, 2)
    assert F.kl_div(a2, b2, reduction="batchmean").item() == pytest.approx(-1.3688827157888768)
    kl = st.nn.KLDivLoss(reduction="none", log_target=True)(a2, b2)
    want = [[-0.5, 4.121803176750321], [-5.43656365691809, 0.26997176151520064]]
    np.testing.assert_allclose(kl.numpy(), want, 1e-12)
    with pytest.warns(UserWarning, match="target size"):  # torch broadcasts, with a warning
        assert F.mse_loss(st.ones(2, 3), st.zeros(1, 3)).item() == 1.0


def test_one_hot_pad_and_similarities_match_torch():
    oh = F.one_hot(st.tensor([[1, 0], [3, 2]], shards=2))
    assert oh.dtype == st.int64 and oh.shape == (2, 2, 4)
    assert F.one_hot(st.tensor([0, 2]), num_classes=4).tolist() == [[1, 0, 0, 0], [0, 0, 1, 0]]
    for bad in (st.tensor([0, 3]), st.tensor([0, -1])):
        with pytest.raises(IndexError):  # checked by the workers: raised at the read
            F.one_hot(bad, 2).tolist()
    with pytest.raises(RuntimeError):
        F.one_hot(st.tensor([0.0, 1.0]))
    x = st.arange(6.0, dtype=st.float64).reshape(1, 2, 3)
    assert F.pad(x, (2, 1), mode="reflect").tolist() == [
        [[2.0, 1.0, 0.0, 1.0, 2.0, 1.0], [5.0, 4.0, 3.0, 4.0, 5.0, 4.0]]
    ]
    assert F.pad(x, (2, 1), mode="replicate").tolist() == [
        [[0.0, 0.0, 0.0, 1.0, 2.0, 2.0], [3.0, 3.0, 3.0, 4.0, 5.0, 5.0]]
    ]
    assert F.pad(x, (2, 1), mode="circular").tolist() == [
        [[1.0, 2.0, 0.0, 1.0, 2.0, 0.0], [4.0, 5.0, 3.0, 4.0, 5.0, 3.0]]
    ]
    assert F.pad(x, (-1, 2, 1, 0), value=7).tolist() == [
        [[7.0, 7.0, 7.0, 7.0], [1.0, 2.0, 7.0, 7.0], [4.0, 5.0, 7.0, 7.0]]
    ]
    with pytest.raises(NotImplementedError):  # torch pads only past a batch/channel prefix
        F.pad(x[0], (1, 1, 1, 1), mode="reflect")
    with pytest.raises(RuntimeError):
        F.pad(x, (3, 0), mode="reflect")
    u = st.tensor([[1.0, 2.0], [0.0, 0.0]], dtype=st.float64, shards=2)
    v = st.tensor([[2.0, 1.0], [1.0, 1.0]], dtype=st.float64)
    np.testing.assert_allclose(F.cosine_similarity(u, v).numpy(), [0.8, 0.0])
    d = F.pairwise_distance(st.tensor([[1.0, 2.0]], dtype=st.float64), 2 * u[:1])
    assert d.tolist() == pytest.approx([2.236066635859048], rel=1e-12)
    n = F.normalize(st.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=st.float64), p=1, dim=1)
    np.testing.assert_allclose(n.numpy(), [[3 / 7, 4 / 7], [0.0, 0.0]])


CIRCULAR = [  # torch crops first, then wraps what is left; the gradient of sum(y * (1..))
    ((-1, 2), [2, 3, 4, 5, 6, 2, 3], [0, 7, 9, 3, 4, 5]),
    ((2, -1), [4, 5, 1, 2, 3, 4, 5], [3, 4, 5, 7, 9, 0]),
    ((3, -2), [2, 3, 4, 1, 2, 3, 4], [4, 6, 8, 10, 0, 0]),
    ((-2, -1), [3, 4, 5], [0, 0, 1, 2, 3, 0]),
    ((-5, 1), [6, 6], [0, 0, 0, 0, 0, 3]),
]


@pytest.mark.parametrize("shards", [1, 2])
@pytest.mark.parametrize("pads, want, grad", CIRCULAR, ids=str)
def test_circular_pad_with_negative_amounts_as_torch(shards, pads, want, grad):
    x = st.tensor([float(v) for v in range(1, 7)], dtype=st.float64, shards=shards)
    x = x.reshape(1, 1, 6).clone().requires_grad_()
    y = F.pad(x, pads, mode="circular")
    assert y.tolist() == [[want]]
    (y * st.arange(1.0, y.numel() + 1, dtype=st.float64)).sum().backward()
    assert x.grad.tolist() == [[grad]]


def test_pad_to_an_empty_or_negative_size_as_torch():
    x = st.ones(1, 2, 6, shards=2)
    assert F.pad(x, (-3, -3), mode="circular").shape == (1, 2, 0)
    with pytest.raises(st.ShapeError, match="resulting in an empty dimension"):
        F.pad(x, (-4, -4), mode="circular")
    for mode in ("reflect", "replicate"):  # torch: "input (W: 6) is too small"
        with pytest.raises(st.ShapeError, match="too small"):
            F.pad(x, (-3, -3), mode=mode)


@pytest.mark.parametrize("shards", [1, 2])
def test_cosine_similarity_of_broadcast_inputs_as_torch(shards):
    # torch takes the norms of the broadcast operands (b's size-1 dim -2 counts twice)
    a = st.arange(1.0, 7.0, dtype=st.float64).reshape(1, 2, 3).clone().requires_grad_()
    b = st.tensor([[[1.0, 0, 2]], [[-1, 3, 1]]], dtype=st.float64, shards=shards)
    b.requires_grad_()
    r = F.cosine_similarity(a, b, dim=-2)
    want = [[0.8574929257125441, 0.0, 0.9486832980505137]]
    want += [[-0.8574929257125441, 0.9191450300180581, 0.9486832980505137]]
    np.testing.assert_allclose(r.detach().numpy(), want, rtol=1e-12)
    r.sum().backward()
    ga = [[[0.0, 0.06791712044468408, 0.08432740427115679]]]
    ga[0] += [[0.0, -0.02716684817787368, -0.04216370213557835]]
    np.testing.assert_allclose(a.grad.numpy(), ga, rtol=1e-12)
    assert b.grad[0, 0, 1].item() == pytest.approx(129986736.7239363)  # x2 / eps
    np.testing.assert_allclose(b.grad.numpy()[1], [[0.0, 0.0, 0.0]], atol=1e-15)
    # a norm under eps: its value is clamped, its gradient still flows (torch: no_grad clamp)
    t = st.tensor([[3e-9, 4e-9]], dtype=st.float64, requires_grad=True)
    F.cosine_similarity(t, st.tensor([[1.0, 1.0]], dtype=st.float64)).backward()
    np.testing.assert_allclose(t.grad.numpy(), [[41012193.308819756, 31112698.37220808]])


def test_sequential_container_api_matches_torch():
    m = st.nn.Sequential(st.nn.Linear(2, 3), st.nn.ReLU(), st.nn.Linear(3, 1))
    tail = m[1:]
    assert type(tail) is st.nn.Sequential and [n for n, _ in tail.named_children()] == ["1", "2"]
    assert m.append(st.nn.Tanh()) is m and type(m[-1]) is st.nn.Tanh and len(m) == 4
    m.insert(1, st.nn.GELU())
    del m[0]
    assert [type(c).__name__ for c in m] == ["GELU", "ReLU", "Linear", "Tanh"]
    assert [n for n, _ in m.named_children()] == ["0", "1", "2", "3"]
    assert m.get_submodule("2").out_features == 1 and m.get_parameter("2.bias").shape == (1,)
    with pytest.raises(IndexError):
        m[7]
    assert "bias=True, track_running_stats" in repr(st.nn.BatchNorm1d(2))
    assert repr(st.nn.LayerNorm(3, bias=False)).endswith("bias=False)")
    assert st.nn.BatchNorm1d(2, bias=False).bias is None
    with pytest.raises(KeyError):
        st.nn.Module().register_buffer("a.b", st.ones(1))


def test_init_trunc_normal_eye_orthogonal():
    st.manual_seed(0)
    w = st.nn.init.trunc_normal_(st.empty(2000), mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert -1.0 <= w.min().item() and w.max().item() <= 2.0
    assert abs(w.mean().item() - 0.58) < 0.05  # torch's truncated mean: 0.58
    assert st.nn.init.eye_(st.empty(2, 3)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    q = st.nn.init.orthogonal_(st.empty(4, 2, dtype=st.float64), gain=2.0)
    np.testing.assert_allclose((q.t() @ q).numpy(), 4 * np.eye(2), atol=1e-12)
    assert st.nn.init._calculate_fan_in_and_fan_out(st.empty(4, 3, 5, 2)) == (30, 40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert st.nn.init.kaiming_uniform_(st.empty(0, 3)).shape == (0, 3)


def test_cross_entropy_and_one_hot_read_nothing_so_a_training_step_jits():
    # the class checks run in the workers: a jitted step with cross_entropy replays
    m = st.nn.Linear(4, 3, dtype=st.float64)
    opt = st.optim.SGD(m.parameters(), lr=0.1)

    @st.jit
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y) + F.one_hot(y, 3).sum() * 0
        loss.backward()
        opt.step()
        return loss

    x = st.tensor(np.linspace(-1, 1, 32).reshape(8, 4), shards=2)
    y = st.tensor([0, 1, 2, 1, 0, 2, 2, 1], shards=2)
    losses = [step(x, y).item() for _ in range(4)]
    assert step.stats["replays"] >= 1 and losses[-1] < losses[0]
