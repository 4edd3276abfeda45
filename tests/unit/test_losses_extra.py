"""margin_ranking, triplet_margin, cosine_embedding, poisson_nll, gaussian_nll,
multilabel_soft_margin and ctc losses (functional and modules) against torch 2.13's values and
gradients (float64; tests/unit/data/nn_extra_torch.npz, written by
scripts/torch_refs_nn.py)."""

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import REF, cases, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
LOSSES = (
    "ctc_loss",
    "margin_ranking_loss",
    "triplet_margin_loss",
    "cosine_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "multilabel_soft_margin_loss",
)


@pytest.mark.parametrize("name", cases(LOSSES))
def test_loss_values_and_gradients_match_torch(name):
    replay(name)


@pytest.mark.parametrize("name", cases(LOSSES))
def test_losses_on_batch_split_inputs(name):
    # every input with a batch dim split along it (in 3 where it has 6 rows: uneven cuts
    # elsewhere), the class weights kept whole
    split = {}
    if name.startswith("ctc"):  # (T, N, C) log-probs: the batch is dim 1
        split = {"x": (3, 1)} if REF[f"{name}/in/x"].ndim == 3 else {}
        split.update({"y": (3, 0)} if REF[f"{name}/in/y"].ndim == 2 else {})
        replay(name, split)
        return
    for k in REF.files:
        if k.startswith(f"{name}/in/") and k.rsplit("/", 1)[1] != "w":
            a = REF[k]
            if a.ndim and a.shape[0] > 1:
                split[k.rsplit("/", 1)[1]] = (3 if a.shape[0] % 3 == 0 else 2, 0)
    replay(name, split)


def test_loss_modules_match_the_functions():
    a, b = st.tensor([[1.0, 2.0], [0.5, -1.0]]), st.tensor([[0.0, 1.0], [2.0, 2.0]])
    y = st.tensor([1.0, -1.0])
    x1, x2 = st.tensor([0.3, 1.0]), st.tensor([0.2, 2.0])
    pairs = [
        (st.nn.MarginRankingLoss(0.5, reduction="sum")(x1, x2, y),
         F.margin_ranking_loss(x1, x2, y, 0.5, reduction="sum")),
        (st.nn.TripletMarginLoss(margin=3.0, swap=True)(a, b, a * 2),
         F.triplet_margin_loss(a, b, a * 2, margin=3.0, swap=True)),
        (st.nn.CosineEmbeddingLoss(0.2)(a, b, y), F.cosine_embedding_loss(a, b, y, 0.2)),
        (st.nn.PoissonNLLLoss(log_input=False)(a.abs(), b.abs()),
         F.poisson_nll_loss(a.abs(), b.abs(), log_input=False)),
        (st.nn.GaussianNLLLoss(full=True)(a, b, b.abs()),
         F.gaussian_nll_loss(a, b, b.abs(), full=True)),
        (st.nn.MultiLabelSoftMarginLoss(st.tensor([1.0, 2.0]))(a, b.abs()),
         F.multilabel_soft_margin_loss(a, b.abs(), st.tensor([1.0, 2.0]))),
    ]  # fmt: skip
    for got, want in pairs:
        assert got.item() == pytest.approx(want.item(), rel=1e-6)


def test_legacy_size_average_and_reduce_pick_the_reduction():
    x1, x2, y = st.tensor([0.3, 1.0]), st.tensor([0.2, 2.0]), st.tensor([1.0, -1.0])
    with pytest.warns(UserWarning, match="size_average"):
        out = F.margin_ranking_loss(x1, x2, y, reduce=False)
    assert out.shape == (2,)
    with pytest.warns(UserWarning):
        total = F.multilabel_soft_margin_loss(st.zeros(2, 2), st.ones(2, 2), size_average=False)
    assert total.item() == pytest.approx(2 * np.log(2))


def test_bad_loss_inputs_raise_typed_errors():
    a = st.zeros(2, 3)
    with pytest.raises(st.errors.ShapeError, match="same dimension"):
        F.margin_ranking_loss(st.zeros(2), st.zeros(2, 1), st.ones(2))
    with pytest.raises(st.errors.ArgumentError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_loss(a, a, a, margin=0)
    with pytest.raises(st.errors.ShapeError, match="anchor 2D, positive 1D"):
        F.triplet_margin_loss(a, st.zeros(3), a)
    with pytest.raises(st.errors.ArgumentError, match="expected margin"):
        st.nn.TripletMarginLoss(margin=-1.0)
    with pytest.raises(st.errors.ShapeError, match="multi-target not supported"):
        F.cosine_embedding_loss(a, a, st.ones(2, 3))
    with pytest.raises(st.errors.ShapeError, match="1D target tensor expects 2D input"):
        F.cosine_embedding_loss(st.zeros(3), st.zeros(3), st.ones(2))
    with pytest.raises(st.errors.ArgumentError, match="negative"):
        F.gaussian_nll_loss(a, a, st.full((2, 3), -1.0))
    with pytest.raises(st.errors.ArgumentError, match="negative"):
        F.gaussian_nll_loss(a, a, -1.0)
    with pytest.raises(st.errors.ShapeError, match=r"var is of incorrect size: \[3\]"):
        F.gaussian_nll_loss(a, a, st.ones(3))
    with pytest.raises(st.errors.ArgumentError, match="'avg' is not"):
        F.poisson_nll_loss(a, a, reduction="'avg'")
    with pytest.raises(st.errors.ArgumentError, match="bogus is not"):
        F.gaussian_nll_loss(a, a, st.ones(2, 3), reduction="bogus")


def test_ctc_module_and_errors():
    x = st.from_numpy(REF["ctc/in/x"]).log_softmax(-1)
    y = st.from_numpy(REF["ctc/in/y"])
    loss = st.nn.CTCLoss(reduction="mean")(x, y, st.tensor([7, 6, 5]), st.tensor([4, 2, 3]))
    assert loss.item() == pytest.approx(float(REF["ctc/out0"]), rel=1e-12)
    with pytest.raises(st.errors.ArgumentError, match="blank must be in label range"):
        F.ctc_loss(x, y, [7, 6, 5], [4, 2, 3], blank=5)
    with pytest.raises(st.errors.ArgumentError, match="at most 7, but got value 8"):
        F.ctc_loss(x, y, [8, 6, 5], [4, 2, 3])
    with pytest.raises(st.errors.ShapeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(x, y, [7, 6], [4, 2, 3])
    with pytest.raises(st.errors.ShapeError, match="size at least 5 at dimension 1"):
        F.ctc_loss(x, y, [7, 6, 5], [5, 2, 3])
    with pytest.raises(st.errors.ShapeError, match="size at least 9 at dimension 0"):
        F.ctc_loss(x, st.tensor([1, 2, 3]), [7, 6, 5], [4, 2, 3])
    with pytest.raises(st.errors.DTypeError, match="integers"):
        F.ctc_loss(x, y.double(), [7, 6, 5], [4, 2, 3])


def test_ctc_gradient_of_unnormalized_log_probs_is_torchs():
    # torch 2.13 returns exp(lp) - exp(lcab + nll - lp) for any log_probs (the logits'
    # gradient when lp is a log_softmax); steps past an input length get 0
    lp = st.tensor(
        [[[-0.5, -1.0, -2.0]], [[-1.5, -0.25, -1.0]], [[-1.0, -2.0, -0.5]]],
        dtype=st.float64,
        requires_grad=True,
    )
    loss = F.ctc_loss(lp, st.tensor([[1, 2]]), [3], [2], reduction="sum")
    loss.backward()
    assert loss.item() == pytest.approx(0.4432637468431422, rel=1e-14)
    want = [
        [[0.16021831747695542, -0.1858082165928796, 0.1353352832366127]],
        [[0.1455727044275314, 0.061786321461630433, 0.16245135850211542]],
        [[0.29032198545054394, 0.1353352832366127, -0.3159118845664681]],
    ]
    np.testing.assert_allclose(lp.grad.numpy(), want, rtol=1e-12, atol=1e-15)
    lp.grad = None
    loss = F.ctc_loss(lp, st.tensor([[1, 2]]), [2], [1])
    loss.backward()
    assert loss.item() == pytest.approx(0.1732155249637666, rel=1e-14)
    want = [
        [[0.04482902830456226, -0.0704189274204865, 0.1353352832366127]],
        [[0.1255210526161009, -0.12359010939626625, 0.36787944117144233]],
        [[0.0, 0.0, 0.0]],
    ]
    np.testing.assert_allclose(lp.grad.numpy(), want, rtol=1e-12, atol=1e-15)
