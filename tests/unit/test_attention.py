"""F.scaled_dot_product_attention against torch's values (tests/unit/data/sdpa_torch.npz,
written by scripts/torch_refs_attention.py): outputs and the gradients of query, key, value
(and of a float mask), in one block and in many, on split placements."""

from pathlib import Path

import numpy as np
import pytest

import sharded as st
from sharded.nn import _attention

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
REF = np.load(Path(__file__).parent / "data" / "sdpa_torch.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})
KW = {
    "causal_tall": dict(is_causal=True),
    "causal_wide": dict(is_causal=True),
    "gqa": dict(enable_gqa=True),
    "broadcast": dict(scale=0.3),
}
TOL = dict(rtol=1e-9, atol=1e-12)


@pytest.fixture(params=[512, 2, 3], ids=["one_block", "block2", "block3"])
def block(request, monkeypatch):
    monkeypatch.setattr(_attention, "BLOCK", request.param)
    return request.param


def _run(case, **placement):
    leaf = {n: st.tensor(REF[f"{case}/{n}"], requires_grad=True, **placement) for n in "qkv"}
    kw = dict(KW.get(case, {}))
    mask = None
    if f"{case}/mask" in REF.files:
        m = REF[f"{case}/mask"]
        mask = st.tensor(m, requires_grad=m.dtype != bool)
        kw["attn_mask"] = mask
    out = F.scaled_dot_product_attention(leaf["q"], leaf["k"], leaf["v"], **kw)
    np.testing.assert_allclose(out.detach().numpy(), REF[f"{case}/out"], **TOL)
    out.backward(st.tensor(REF[f"{case}/g"]))
    for n in "qkv":
        np.testing.assert_allclose(leaf[n].grad.numpy(), REF[f"{case}/d{n}"], **TOL)
    if f"{case}/dmask" in REF.files:
        np.testing.assert_allclose(mask.grad.numpy(), REF[f"{case}/dmask"], **TOL)
    return out


@pytest.mark.parametrize("case", CASES)
def test_matches_torch(case, block):
    _run(case)


@pytest.mark.parametrize("case", ["plain", "causal_tall", "bool_mask", "gqa"])
@pytest.mark.parametrize("dim", [0, -2], ids=["batch_split", "seq_split"])
def test_split_placements(case, dim, monkeypatch):
    monkeypatch.setattr(_attention, "BLOCK", 3)  # blocks that straddle the shards' cuts
    shape = REF[f"{case}/q"].shape
    # the sequence split cuts L of the query and S of key and value into 2 shards each
    out = _run(case, shards=2, dim=dim % len(shape))
    assert out.layout.split_dims == (dim % len(shape),)  # the output keeps the queries' cuts


def test_one_node_for_the_whole_attention(block):
    q = st.tensor(REF["plain/q"], requires_grad=True)
    out = F.scaled_dot_product_attention(q, st.tensor(REF["plain/k"]), st.tensor(REF["plain/v"]))
    assert out.grad_fn.name() == "ScaledDotProductAttentionBackward0"
    with st.no_grad():
        assert F.scaled_dot_product_attention(q, q, q).grad_fn is None


def test_dropout():
    q = st.tensor(REF["plain/q"], requires_grad=True)
    k, v = st.tensor(REF["plain/k"]), st.tensor(REF["plain/v"])
    zero = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert np.all(zero.detach().numpy() == 0)
    st.manual_seed(0)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    out.sum().backward()
    assert q.grad is not None and out.shape == (2, 3, 7, 5)
    # dropout 0 through the same path is the blocked result
    np.testing.assert_allclose(
        _attention._materialized(q, k, v, None, 0.0, False, 0.5).detach().numpy(),
        REF["plain/out"],
        **TOL,
    )


def test_bad_calls():
    q, k, v = st.ones(2, 3, 4), st.ones(2, 5, 4), st.ones(2, 5, 6)
    with pytest.raises(st.errors.ShapeError, match=r"embedding size 4 differs.*\[2, 5, 3\]"):
        F.scaled_dot_product_attention(q, st.ones(2, 5, 3), v)
    with pytest.raises(st.errors.ShapeError, match="key has 5 positions and value 6"):
        F.scaled_dot_product_attention(q, k, st.ones(2, 6, 6))
    with pytest.raises(st.errors.ShapeError, match="at least 2"):
        F.scaled_dot_product_attention(st.ones(4), k, v)
    with pytest.raises(st.errors.DTypeError, match="same floating dtype"):
        F.scaled_dot_product_attention(q.double(), k, v)
    with pytest.raises(st.errors.ArgumentError, match="should not be set when is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=st.ones(3, 5), is_causal=True)
    with pytest.raises(st.errors.ArgumentError, match="between 0 and 1, but got 1.5"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    with pytest.raises(st.errors.ShapeError, match=r"attn_mask of shape \[4, 5\]"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=st.ones(4, 5))
    with pytest.raises(st.errors.DTypeError, match="bool or floating, got sharded.int64"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=st.ones(3, 5, dtype=st.int64))
    with pytest.raises(st.errors.ShapeError, match=r"batch dims .* do not broadcast"):
        F.scaled_dot_product_attention(q, st.ones(3, 5, 4), st.ones(3, 5, 6))
    with pytest.raises(st.errors.ShapeError, match=r"key \(2\) and value \(2\) must divide.*\(3\)"):
        F.scaled_dot_product_attention(
            st.ones(1, 3, 2, 4), st.ones(1, 2, 5, 4), st.ones(1, 2, 5, 4), enable_gqa=True
        )


def test_no_keys_gives_zeros():
    q = st.ones(2, 3, 4, requires_grad=True)
    out = F.scaled_dot_product_attention(q, st.ones(2, 0, 4), st.ones(2, 0, 5))
    assert out.shape == (2, 3, 5) and not out.detach().numpy().any()
    out.sum().backward()
    assert not q.grad.numpy().any()


def test_scores_never_wider_than_a_block(monkeypatch):
    """Forward and backward see at most BLOCK keys' scores at a time."""
    monkeypatch.setattr(_attention, "BLOCK", 2)
    widths, scores = [], _attention._scores

    def spy(*args):
        s = scores(*args)
        widths.append(s.shape[-1])
        return s

    monkeypatch.setattr(_attention, "_scores", spy)
    whole = st.Layout.replicated()  # (inputs split along a batch dim take the fused kernels)
    q, k, v = (st.tensor(REF[f"plain/{n}"], requires_grad=True, layout=whole) for n in "qkv")
    F.scaled_dot_product_attention(q, k, v).sum().backward()
    assert max(widths) == 2 and sum(widths) == 2 * k.shape[-2]  # S=9: 5 blocks, twice


def test_second_derivatives(monkeypatch):
    """Through create_graph: the gradient of (the first gradients . w) against central
    differences of the first gradients (the rule rebuilds the log-sum-exp differentiably)."""
    monkeypatch.setattr(_attention, "BLOCK", 2)
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in [(1, 2, 2), (1, 3, 2), (1, 3, 2)]]
    w = [rng.standard_normal(a.shape) for a in arrays]

    def phi(arrays, create_graph=False):
        ts = [st.tensor(a, requires_grad=True) for a in arrays]
        out = F.scaled_dot_product_attention(*ts, is_causal=True)
        gs = st.autograd.grad((out * out).sum(), ts, create_graph=create_graph)
        return sum((g * st.tensor(c)).sum() for g, c in zip(gs, w)), ts

    s, ts = phi(arrays, True)
    s.backward()
    eps = 1e-6
    for i, t in enumerate(ts):
        num = np.zeros_like(arrays[i])
        for idx in np.ndindex(num.shape):
            hi = [a.copy() for a in arrays]
            lo = [a.copy() for a in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            num[idx] = (phi(hi)[0].item() - phi(lo)[0].item()) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-6, atol=1e-7)
