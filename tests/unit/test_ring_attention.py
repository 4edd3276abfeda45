"""Ring attention: query, key and value split along the sequence (dim -2) against the
unsplit computation and torch's values, forward and gradients, with and without causal
masking, with masks split or whole, GQA, queries cut unlike the keys; the keys/values never
gathered whole, and a worker's memory at the backward's peak."""

import gc

import numpy as np
import pytest

import sharded as st
from sharded.ops.nnops.prims import ring

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
RNG = np.random.default_rng(7)
WHOLE = dict(layout=st.Layout.replicated())  # the unsplit computation


def _attend(arrays, place, mask=None, mask_place=None, **kw):
    ts = [st.tensor(a, dtype=st.float64, requires_grad=True, **place) for a in arrays]
    m = None
    if mask is not None:
        dt = st.bool if mask.dtype == bool else st.float64
        m = st.tensor(mask, dtype=dt, **(mask_place or {}))
    out = F.scaled_dot_product_attention(*ts, attn_mask=m, **kw)
    g = np.cos(np.arange(np.prod(out.shape))).reshape(out.shape)
    (out * st.tensor(g, dtype=st.float64)).sum().backward()
    return out, [out.detach().numpy()] + [t.grad.numpy() for t in ts]


def _check(arrays, shards, mask=None, mask_place=None, **kw):
    split, whole = (
        _attend(arrays, p, mask, mask_place, **kw) for p in (dict(shards=shards, dim=-2), WHOLE)
    )
    assert split[0].grad_fn.params["ring"]  # the ring path ran
    assert not whole[0].grad_fn.params["ring"]
    assert split[0].layout.split_dims == (split[0].ndim - 2,)
    for a, b in zip(split[1], whole[1]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shards", [2, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_unsplit(shards, causal):
    q, k, v = (RNG.standard_normal((2, 3, 11, 4)) for _ in range(3))
    _check((q, k, v), shards, is_causal=causal)
    # cross attention: more keys than queries (causal: the last key blocks are above the
    # diagonal for every query, skipped, their gradients zero) and fewer
    for s in (17, 5):
        k, v = RNG.standard_normal((2, 3, s, 4)), RNG.standard_normal((2, 3, s, 6))
        _check((q, k, v), shards, is_causal=causal, scale=0.3)


@pytest.mark.parametrize("causal", [False, True])
def test_query_rows_in_turns(monkeypatch, causal):
    """A block's query rows taken a few at a time (causal: the keys past each turn's last
    row skipped), and the backward's keys a few at a time, as long sequences are."""
    monkeypatch.setattr(ring, "ROWS", 2)
    monkeypatch.setattr(ring, "COLS", 3)
    q, k, v = (RNG.standard_normal((2, 13, 3)) for _ in range(3))
    keep = RNG.random((13, 13)) > 0.3
    for shards in (2, 3):
        _check((q, k, v), shards, is_causal=causal)
        if not causal:
            _check((q, k, v), shards, mask=keep, mask_place=dict(shards=shards, dim=-2))


@pytest.mark.parametrize("causal", [False, True])
def test_queries_cut_unlike_keys(causal):
    """Queries in 3 shards, keys and values in 2: a block's gradient sums pass through two
    query shards in one ring step and end on the block's owner."""
    q, k, v = (RNG.standard_normal((2, 2, 9, 3)) for _ in range(3))
    g = RNG.standard_normal((2, 2, 9, 3))
    got = []
    # (query shards 0 and 2 on one worker: block 1's sums go from one to the other there)
    qcut = dict(layout=st.Layout(-2, 3, workers=[0, 1, 0]))
    for qp, kp in ((qcut, dict(shards=2, dim=-2)), (WHOLE, WHOLE)):
        gc.collect()
        before = sum(w["live_bytes"] for w in st.stats()["workers"])
        ts = [st.tensor(q, requires_grad=True, **qp)]
        ts += [st.tensor(a, requires_grad=True, **kp) for a in (k, v)]
        out = F.scaled_dot_product_attention(*ts, is_causal=causal)
        (out * st.tensor(g)).sum().backward()
        got.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
        assert bool(out.grad_fn.params["ring"]) == (qp is not WHOLE)
        del out
        gc.collect()
        st.synchronize()
        if qp is not WHOLE:  # nothing but the inputs and their gradients stays behind
            live = sum(w["live_bytes"] for w in st.stats()["workers"]) - before
            assert live == 6 * q.nbytes
        ts = None
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shards", [2, 3])
def test_masks_split_or_whole(shards):
    q, k, v = (RNG.standard_normal((2, 2, 9, 3)) for _ in range(3))
    keep = RNG.random((2, 1, 9, 9)) > 0.4
    keep[0, 0, 4] = False  # a query that sees no key: zeros, as torch
    bias = RNG.standard_normal((9, 9))
    for mask in (keep, bias):
        for mp in (WHOLE, {}, dict(shards=shards, dim=-2), dict(shards=shards, dim=-1)):
            _check((q, k, v), shards, mask=mask, mask_place=mp)


def test_gqa():
    q = RNG.standard_normal((2, 4, 8, 3))
    k, v = RNG.standard_normal((2, 2, 8, 3)), RNG.standard_normal((2, 1, 8, 5))
    for shards in (2, 3):
        _check((q, k, v), shards, enable_gqa=True, is_causal=True)


def test_torch_values():
    """Causal, queries and keys in 2 and 3 shards, against torch 2.13's float64 values."""
    q = np.arange(8.0).reshape(1, 4, 2) / 8
    k = np.array([[[1.0, 0], [0, 1], [1, 1], [-1, 0.5]]])
    v = np.array([[[1.0, 2], [3, 4], [5, 6], [7, 8]]])
    g = np.array([[[1.0, -1], [2, 0], [0, 3], [1, 1]]])
    want = [
        [[1.0, 2.0], [2.044165424036, 3.044165424036], [3.3046623751, 4.3046623751]]
        + [[3.814372031738, 4.814372031738]],
        [[0.0, 0.0], [-0.705727509532, 0.705727509532], [0.193526511572, 1.340115977072]]
        + [[-0.676929850453, 0.659953300266]],
        [[-1.521741357365, -1.890013708432], [-0.133780055553, -0.105329710332]]
        + [[1.294948380423, 1.574674880854], [0.360573032495, 0.42066853791]],
        [[2.182042484619, 0.048545362681], [1.291277720244, 1.145443825508]]
        + [[0.419965665749, 1.699296682424], [0.106714129388, 0.106714129388]],
    ]
    for shards in (2, 3):
        ts = [st.tensor(a, shards=shards, dim=1, requires_grad=True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ts, is_causal=True)
        (out * st.tensor(g)).sum().backward()
        got = [out.detach().numpy()] + [t.grad.numpy() for t in ts]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a[0], b, rtol=0, atol=1e-11)


def test_keys_never_gathered(monkeypatch):
    """Each worker receives the other workers' key/value shards one piece at a time, as
    they are (no block assembled from several shards, as a gathered or replicated copy of
    the keys would be): the bytes moved are exactly the ring's, and nothing but the inputs
    and the output stays behind."""
    ex = st.runtime.current().executor
    pieces, kernels = [], []
    export, submit = ex.export, ex.submit

    def spy_export(requests):
        pieces.extend(p[2] for reqs in requests.values() for p in reqs)
        return export(requests)

    def spy_submit(w, kernel, *a, **kw):
        kernels.append(kernel)
        return submit(w, kernel, *a, **kw)

    q, k, v = (RNG.standard_normal((1, 2, 12, 4)) for _ in range(3))
    ts = [st.tensor(a, dtype=st.float64, shards=3, dim=-2) for a in (q, k, v)]
    shard = 2 * 4 * 4 * 8  # one (1, 2, 4, 4) float64 shard
    before = st.stats()["bytes_moved"]
    monkeypatch.setattr(ex, "export", spy_export)
    monkeypatch.setattr(ex, "submit", spy_submit)
    out = F.scaled_dot_product_attention(*ts)
    monkeypatch.undo()
    # a shard visits in pieces along the sequence: 4 rows, one a step
    assert pieces and max(pieces) <= shard // ring.PIECES == shard // 4
    assert "assemble" not in kernels
    # 3 workers, each reads the 2 other k and v shards
    assert st.stats()["bytes_moved"] - before == 3 * 2 * 2 * shard
    live = [w["live_bytes"] for w in st.stats()["workers"]]
    # q, k, v and the output's shard on each of the 3 workers that hold shards
    assert sorted(live, reverse=True)[:3] == [4 * shard] * 3 and sum(live) == 12 * shard
    assert out.layout.split_dims == (2,)


def test_backward_memory(monkeypatch):
    """Forward and backward hold under twice a worker's inputs (query, key, value and the
    output's gradient) on the busiest worker, the blocks it received counted (on Ray they
    come mapped from the object store, which the trace alone does not see): a block visits
    in pieces, so a worker holds one piece of another's keys and values and one piece's
    traveling key/value gradient sums at a time, and the steps take the blocks the previous
    ones freed. (In process the workers share one tracer: the bound is then 3 times all
    workers' inputs together. On Ray whole blocks visiting held 2.15 times a worker's inputs,
    in 4 pieces 1.64 times; the old reduce-back form held 3.4 times all inputs in process.)"""
    shape = (2, 4, 1024, 32)  # a (2, 4, 512, 32) float64 shard: 1 MiB, the pool's least
    monkeypatch.setattr(ring, "ROWS", 32)  # score tiles of 0.5 MiB: small next to the shards
    ts = [st.tensor(RNG.standard_normal(shape), shards=2, dim=-2, requires_grad=True)
          for _ in range(3)]  # fmt: skip
    g = st.tensor(RNG.standard_normal(shape), shards=2, dim=-2)

    def step():
        for t in ts:
            t.grad = None
        F.scaled_dot_product_attention(*ts).backward(g)
        st.synchronize()

    step()  # the kernels and the pools warm; the peak then counts every block in use
    for t in ts:
        t.grad = None
    st.trace_memory(received=True)  # (which empties the pools first)
    try:
        step()
        peak = max(w["traced_peak_bytes"] for w in st.stats()["workers"])
    finally:
        st.trace_memory(False)
    inputs = 4 * np.prod(shape) * 8  # q, k, v and g, all workers
    if st.info()["executor"] == "ray":  # a worker holds half of them
        assert peak < 2 * (inputs / 2)
    else:
        assert peak < 3 * inputs


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("causal", [False, True])
def test_batch_split_takes_the_fused_kernels(monkeypatch, dim, causal):
    """Inputs split along a batch dim run the fused kernels on each worker's own shards
    (in row chunks), forward and backward, and agree with the unsplit computation."""
    monkeypatch.setattr(ring, "SCORES", 1)  # chunks of the fewest rows: 16
    q = RNG.standard_normal((3, 2, 37, 5))
    k, v = RNG.standard_normal((3, 2, 29, 5)), RNG.standard_normal((3, 2, 29, 4))
    split, whole = (
        _attend((q, k, v), p, is_causal=causal) for p in (dict(shards=2, dim=dim), WHOLE)
    )
    assert split[0].grad_fn.params["ring"] == "local"
    assert split[0].layout.split_dims == (dim,)
    for a, b in zip(split[1], whole[1]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_falls_back_off_the_ring():
    """A float mask that needs its gradient, or create_graph, takes the composed path and
    gives the same gradients."""
    q, k, v = (RNG.standard_normal((1, 6, 3)) for _ in range(3))
    bias = RNG.standard_normal((6, 6))
    grads = []
    for place in (dict(shards=2, dim=1), {}):
        ts = [st.tensor(a, requires_grad=True, **place) for a in (q, k, v)]
        b = st.tensor(bias, requires_grad=True)
        out = F.scaled_dot_product_attention(*ts, attn_mask=b)
        out.sum().backward()
        grads.append([t.grad.numpy() for t in ts + [b]])
    for a, c in zip(*grads):
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-12)


def test_two_dims_and_create_graph():
    """(L, E) inputs without batch dims; a backward with create_graph (the composed form)
    gives the same second derivatives as the unsplit computation."""
    q, k, v = (RNG.standard_normal((7, 3)) for _ in range(3))
    _check((q, k, v), 3, is_causal=True)
    hess = []
    for place in (dict(shards=2, dim=0), WHOLE):
        ts = [st.tensor(a, dtype=st.float64, requires_grad=True, **place) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ts)
        (gq,) = st.autograd.grad((out * out).sum(), [ts[0]], create_graph=True)
        (gq * gq).sum().backward()
        hess.append([t.grad.numpy() for t in ts])
    for a, c in zip(*hess):
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-12)
