"""F.linear_cross_entropy against torch 2.13's values and gradients (literals below), whole
and with the batch split, with torch's errors."""

import numpy as np
import pytest

import sharded as st

F = st.nn.functional

X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 0.75, 0.5], [0.2, 0.3, -0.4]]
W = [[1.0, 0.5, -0.5], [-0.25, 1.0, 0.75], [0.5, -1.0, 0.25], [0.1, 0.2, 0.3]]
B = [0.1, -0.2, 0.3, 0.0]
T = [0, 3, -100, 2]
CW = [1.0, 2.0, 0.5, 1.5]
# F.linear_cross_entropy(X, W, T, linear_bias=B, weight=CW, label_smoothing=0.1) and grads
LOSS = 2.5071603146551333
GX = [
    [-0.1778351311514796, -0.35852047875108556, 0.23382566612762468],
    [0.3222469270656211, -0.001548413605899704, -0.25933791441881854],
    [0.0, 0.0, 0.0],
    [0.012895005511430607, 0.1690720866739863, -0.043849248929457],
]
GW = [
    [0.3496529010851321, 0.3973495595563199, -0.7805919946005001],
    [0.022526669320230577, -0.014409665587156294, 0.0318991427533658],
    [0.22557137352609932, -0.2509815549621963, 0.47936441765946536],
    [-0.5977509439314621, -0.13195833900696724, 0.26932843418766894],
]
GB = [0.0971469135933937, 0.042068568745855475, 0.2114964456314179, -0.3507119279706671]
NONE = [3.213293195843263, 2.2152582635781055, 0.0, 1.7784381929224344]  # reduction="none"


def f64(v, **kw):
    return st.tensor(v, dtype=st.float64, **kw)


def test_linear_cross_entropy_matches_torch_with_gradients():
    for shards in (1, 2):
        x = f64(X, shards=shards, requires_grad=True)
        w, b = f64(W, requires_grad=True), f64(B, requires_grad=True)
        t = st.tensor(T, shards=shards)
        loss = F.linear_cross_entropy(
            x, w, t, linear_bias=b, weight=f64(CW), label_smoothing=0.1, options=None
        )
        np.testing.assert_allclose(loss.item(), LOSS, rtol=1e-12)
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), GX, atol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), GW, atol=1e-12)
        np.testing.assert_allclose(b.grad.numpy(), GB, atol=1e-12)
        none = F.linear_cross_entropy(x, w, t, reduction="none")
        np.testing.assert_allclose(none.detach().numpy(), NONE, rtol=1e-12)
    x, w = f64(X), f64(W)
    # K-dimensional loss (weight (C, d, in)), class probabilities, an unbatched input
    k = F.linear_cross_entropy(
        x, w.reshape(2, 2, 3), st.tensor([[0, 1], [1, 1], [0, 0], [1, 0]]),
        linear_bias=f64([[0.1, 0.2], [0.3, 0.4]]),
    )  # fmt: skip
    np.testing.assert_allclose(k.item(), 1.044522196158764, rtol=1e-12)
    p = (f64(np.arange(16.0).reshape(4, 4)) / 5).softmax(-1)
    np.testing.assert_allclose(
        F.linear_cross_entropy(x, w, p, reduction="sum").item(), 6.9649253320258175, rtol=1e-12
    )
    np.testing.assert_allclose(
        F.linear_cross_entropy(x[0], w, st.tensor(1)).item(), 1.838293195843263, rtol=1e-12
    )


def test_linear_cross_entropy_errors():
    x, w, t = f64(X), f64(W), st.tensor([0, 1, 2, 3])
    with pytest.raises(st.ShapeError, match="expected input with dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(x[None], w, t)
    with pytest.raises(st.ShapeError, match="linear_weight with dimensionality at least 2, got 1"):
        F.linear_cross_entropy(x, w[0], t)
    with pytest.raises(st.ShapeError, match=r"\(in_features\), got 3 and 2, respectively"):
        F.linear_cross_entropy(x, w[:, :2], t)
    with pytest.raises(st.ShapeError, match=r"expected linear_bias shape \(4,\), got \(3,\)"):
        F.linear_cross_entropy(x, w, t, linear_bias=st.zeros(3, dtype=st.float64))
    with pytest.raises(st.ShapeError, match=r"requires batched input, \(N, 3\)"):
        F.linear_cross_entropy(x[0], w.reshape(2, 2, 3), t[0])
    with pytest.raises(st.ArgumentError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(x, w, (x @ w.mT).softmax(-1), ignore_index=1)
