"""soft_margin, hinge_embedding, multi_margin, multilabel_margin and
triplet_margin_with_distance losses, local_response_norm, pdist, channel_shuffle,
constant_pad_nd (functional, modules and top-level forms) against torch 2.13's values and
float64 gradients (tests/unit/data/nn_names_torch.npz, written by
scripts/torch_refs_nn_names.py); the alpha and 3-D dropouts by their defining properties;
unsafe_chunk/unsafe_split and resolve_neg."""

import warnings

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import cases, load, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
REF, SPECS = load("nn_names_torch.npz")
NAMES = sorted({s["fn"] for s in SPECS.values()})


@pytest.mark.parametrize("name", cases(NAMES, SPECS))
def test_values_and_gradients_match_torch(name):
    replay(name, ref=REF)


@pytest.mark.parametrize("name", cases(NAMES, SPECS))
def test_batch_split_inputs_match_torch(name):
    # every input with a batch dim of 2 or more split in 2 along it
    split = {}
    for k in REF.files:
        if k.startswith(f"{name}/in/") and k.rsplit("/", 1)[1] != "w":
            a = REF[k]
            if a.ndim and a.shape[0] > 1:
                split[k.rsplit("/", 1)[1]] = (2, 0)
    assert split
    replay(name, split, ref=REF)


def test_modules_match_the_functions():
    x = st.tensor([[0.3, -1.0, 2.0], [0.5, 0.1, -0.2]])
    s = st.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])
    y, w = st.tensor([2, 0]), st.tensor([1.0, 2.0, 0.5])
    labels = st.tensor([[2, 0, -1], [1, -1, 0]])
    l1 = lambda u, v: (u - v).abs().sum(-1)  # noqa: E731
    pairs = [
        (st.nn.SoftMarginLoss(reduction="sum")(x, s), F.soft_margin_loss(x, s, reduction="sum")),
        (st.nn.HingeEmbeddingLoss(0.5)(x, s), F.hinge_embedding_loss(x, s, 0.5)),
        (st.nn.MultiMarginLoss(p=2, margin=0.7, weight=w)(x, y),
         F.multi_margin_loss(x, y, 2, 0.7, w)),
        (st.nn.MultiLabelMarginLoss()(x, labels), F.multilabel_margin_loss(x, labels)),
        (st.nn.TripletMarginWithDistanceLoss(distance_function=l1, swap=True)(x, x * 2, -x),
         F.triplet_margin_with_distance_loss(x, x * 2, -x, distance_function=l1, swap=True)),
    ]  # fmt: skip
    for got, want in pairs:
        assert got.item() == pytest.approx(want.item(), rel=1e-6)
    z = st.arange(24.0).reshape(2, 6, 2)
    assert st.nn.ChannelShuffle(3)(z).tolist() == st.channel_shuffle(z, 3).tolist()
    lrn = st.nn.LocalResponseNorm(3, alpha=0.2, beta=0.5, k=2.0)
    assert lrn(z).tolist() == F.local_response_norm(z, 3, 0.2, 0.5, 2.0).tolist()
    assert repr(lrn) == "LocalResponseNorm(3, alpha=0.2, beta=0.5, k=2.0)"
    assert repr(st.nn.ChannelShuffle(3)) == "ChannelShuffle(groups=3)"
    assert repr(st.nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"


def test_margin_losses_of_a_0d_score():
    # torch 2.13: a 0-d input is one score of one class (the target's own: loss 0)
    F = st.nn.functional
    assert F.multi_margin_loss(st.tensor(0.3), st.tensor(0), margin=-3.14).item() == 0.0
    assert F.multilabel_margin_loss(st.tensor(0.7), st.tensor(0)).item() == 0.0
    assert F.multilabel_margin_loss(st.tensor(0.7), st.tensor(-1)).item() == 0.0
    x = st.tensor(0.3, dtype=st.float64, requires_grad=True)
    F.multi_margin_loss(x, st.tensor(0)).backward()
    assert x.grad.item() == 0.0


def test_legacy_size_average_and_reduce_pick_the_reduction():
    x, s = st.tensor([0.3, -1.0]), st.tensor([1.0, -1.0])
    with pytest.warns(UserWarning, match="size_average"):
        out = F.hinge_embedding_loss(x, s, reduce=False)
    assert out.shape == (2,)
    with pytest.warns(UserWarning, match="size_average"):
        m = st.nn.SoftMarginLoss(size_average=False)
    assert m.reduction == "sum"
    # torch: soft_margin_loss([0.3, -1], [1, -1], reduction='sum')
    assert m(x, s).item() == pytest.approx(0.8676169319867499, rel=1e-6)


def test_bad_inputs_raise_typed_errors():
    x, s, y = st.zeros(3, 4), st.ones(3, 4), st.tensor([0, 1, 2])
    for f in (F.soft_margin_loss, F.hinge_embedding_loss, F.multilabel_margin_loss):
        with pytest.raises(st.errors.ArgumentError, match="bad is not a valid value"):
            f(x, s.long() if f is F.multilabel_margin_loss else s, reduction="bad")
    with pytest.raises(st.errors.ArgumentError, match="bad is not a valid value"):
        F.multi_margin_loss(x, y, reduction="bad")
    with pytest.raises(st.errors.ArgumentError, match="bad is not a valid value"):
        F.triplet_margin_with_distance_loss(x, x, x, reduction="bad")
    with pytest.raises(st.errors.ArgumentError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(st.errors.ArgumentError, match="only p == 1 and p == 2"):
        st.nn.MultiMarginLoss(p=3)
    with pytest.raises(st.errors.ShapeError, match=r"Expected target size \[3\], but got \[2\]"):
        F.multi_margin_loss(x, st.tensor([0, 1]))
    with pytest.raises(st.errors.DTypeError, match="expected scalar type Long"):
        F.multi_margin_loss(x, st.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(st.errors.ShapeError, match=r"inconsistent weight size, expected 4"):
        F.multi_margin_loss(x, y, weight=st.ones(3))
    with pytest.raises(st.errors.ShapeError, match=r"matrix with optional 0-dim batch size"):
        F.multi_margin_loss(st.zeros(2, 3, 4), st.tensor([0, 1]))
    with pytest.raises(IndexError, match="multi_margin_loss target 7 is out of bounds"):
        F.multi_margin_loss(x, st.tensor([0, 1, 7])).item()
    with pytest.raises(st.errors.ShapeError, match=r"inconsistent target size: \[3\]"):
        F.multilabel_margin_loss(x, y)
    with pytest.raises(st.errors.DTypeError, match="expected scalar type Long"):
        F.multilabel_margin_loss(x, s)
    with pytest.raises(IndexError, match="multilabel_margin_loss target 5 is out of bounds"):
        F.multilabel_margin_loss(x, st.full((3, 4), 5)).item()
    with pytest.raises(st.errors.ArgumentError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0)
    with pytest.raises(st.errors.ArgumentError, match="expected margin to be greater than 0"):
        st.nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(st.errors.ShapeError, match="anchor 2D, positive 2D, and negative 1D"):
        F.triplet_margin_with_distance_loss(x, x, x[0])
    with pytest.raises(st.errors.ShapeError, match=r"3D or higher .* \(got 2 dimensions\)"):
        F.local_response_norm(x, 2)
    with pytest.raises(st.errors.ShapeError, match="pdist only supports 2D tensors, got: 3D"):
        st.pdist(st.zeros(2, 3, 4))
    with pytest.raises(st.errors.ArgumentError, match="non-negative p"):
        F.pdist(x, -1)
    with pytest.raises(st.errors.DTypeError, match="floating-point"):
        st.pdist(y.reshape(3, 1))
    with pytest.raises(st.errors.ShapeError, match=r"> 2 dims, .* sizes \[3, 4\]"):
        st.channel_shuffle(x, 2)
    with pytest.raises(st.errors.ArgumentError, match="Got 6 channels and 4 groups"):
        F.channel_shuffle(st.zeros(2, 6, 3), 4)
    with pytest.raises(st.errors.ArgumentError, match="must be positive. Value of groups:0"):
        st.nn.ChannelShuffle(0)(st.zeros(2, 6, 3))
    for f in (F.alpha_dropout, F.feature_alpha_dropout, F.dropout3d):
        with pytest.raises(st.errors.ArgumentError, match="between 0 and 1, but got 1.5"):
            f(st.zeros(2, 2, 2, 2), 1.5, True)
    with pytest.raises(st.errors.ArgumentError, match="between 0 and 1"):
        st.nn.AlphaDropout(-0.1)
    with pytest.raises(st.errors.ShapeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(st.zeros(3), 0.5, True)
    with pytest.raises(st.errors.ShapeError, match="dropout3d: expected a 4-D"):
        F.dropout3d(st.zeros(3, 2), 0.5, True)
    with pytest.raises(st.errors.ArgumentError, match="must be even but instead it equals 3"):
        st.constant_pad_nd(x, [1, 2, 3])
    with pytest.raises(st.errors.ArgumentError, match="Pad length is 6 while the input has 2"):
        st.constant_pad_nd(x, [1, 2, 3, 4, 5, 6])
    with pytest.raises(st.errors.ArgumentError, match="negative size"):
        st.constant_pad_nd(x, [-3, -2])


@pytest.mark.parametrize("shards", [1, 2])
def test_alpha_dropout_keeps_moments_and_scales_gradients(shards):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4000, 5))
    x = st.from_numpy(a, shards=shards).requires_grad_()
    assert F.alpha_dropout(x, 0.3) is x  # training defaults to False, as in torch
    assert st.alpha_dropout(x, 0.3, False) is x
    st.manual_seed(3)
    out = F.alpha_dropout(x, 0.3, True)
    o = out.detach().numpy()
    assert abs(o.mean()) < 0.05 and abs(o.std() - 1) < 0.05
    alpha = 1.7580993408473766
    scale = 1 / np.sqrt((alpha**2 * 0.3 + 1) * 0.7)
    kept = np.isclose(o, a * scale + alpha * scale * 0.3)
    dropped = np.isclose(o, -alpha * scale + alpha * scale * 0.3)
    assert (kept | dropped).all() and 0.25 < dropped.mean() < 0.35
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, scale, 0.0))
    st.manual_seed(3)  # counter-based: the same mask for any sharding
    whole = st.alpha_dropout(st.from_numpy(a), 0.3, True).numpy()
    np.testing.assert_array_equal(whole, o)
    assert F.alpha_dropout(x, 1.0, True).detach().numpy().tolist() == np.zeros_like(a).tolist()


@pytest.mark.parametrize("shards", [1, 2])
def test_feature_dropouts_draw_once_per_channel(shards):
    x = st.from_numpy(np.ones((4, 30, 2, 3, 2)), shards=shards)
    st.manual_seed(1)
    fa = st.feature_alpha_dropout(x, 0.5, True).numpy().reshape(4, 30, -1)
    assert (fa == fa[..., :1]).all() and len(np.unique(fa)) == 2
    d3 = F.dropout3d(x, 0.5, True).numpy().reshape(4, 30, -1)
    assert (d3 == d3[..., :1]).all() and set(np.unique(d3)) == {0.0, 2.0}
    assert st.nn.Dropout3d().eval()(x) is x and st.nn.FeatureAlphaDropout().eval()(x) is x
    unbatched = F.dropout3d(st.ones(30, 2, 2, 2), 0.5, True).numpy().reshape(30, -1)
    assert (unbatched == unbatched[:, :1]).all()
    y = st.ones(2, 3, 2, 2)
    assert (
        F.dropout3d(y, 1.0, True, inplace=True) is y
        and y.tolist() == np.zeros((2, 3, 2, 2)).tolist()
    )


def test_unsafe_split_chunk_and_resolve_neg():
    x = st.from_numpy(np.arange(12.0).reshape(4, 3), shards=2)
    pairs = [
        (st.unsafe_chunk(x, 3, 1), st.chunk(x, 3, 1)),
        (st.unsafe_split(x, [1, 3]), st.split(x, [1, 3])),
        (x.unsafe_split(3), x.split(3)),
        (x.unsafe_chunk(2), x.chunk(2)),
    ]
    for got, want in pairs:
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert st.resolve_neg(x) is x and x.resolve_neg() is x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert st.resolve_conj(x) is x
