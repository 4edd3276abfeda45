"""nn.RNN / LSTM / GRU, their cells and packed sequences against torch: each case of
tests/unit/data/rnn_torch.npz (written by scripts/torch_refs_rnn.py) names a layer and a
call as JSON; the torch layer's state_dict loads into the sharded one, whose outputs and
gradients (of the input, the initial state and every parameter) must match torch's in
float64, with the batch in one piece and split across workers."""

import json
from pathlib import Path

import numpy as np
import pytest

import sharded as st
from sharded.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "rnn_torch.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})
TOL = dict(rtol=1e-9, atol=1e-12)


def _loaded(case):
    spec, call = json.loads(str(REF[f"{case}/spec"]))
    mod = getattr(st.nn, spec["cls"])(*spec["args"], **spec["kwargs"]).double()
    prefix = f"{case}/state/"
    state = {k[len(prefix) :]: REF[k] for k in REF.files if k.startswith(prefix)}
    assert set(state) == set(mod.state_dict())  # torch's parameter names
    mod.load_state_dict({k: st.tensor(v) for k, v in state.items()})
    return mod, spec, call


def _case_inputs(case, spec, call, split):
    bf = spec["kwargs"].get("batch_first", False)
    batched = not call.get("unbatched")
    x_dim = 0 if bf else 1
    h_dim = 0 if "steps" in call else 1
    leaves = {}
    for k, dim in (("x", x_dim), ("h0", h_dim), ("c0", h_dim)):
        key = f"{case}/in/{k}"
        if key in REF.files:
            where = dict(shards=2, dim=dim) if split and batched else {}
            leaves[k] = st.tensor(REF[key], requires_grad=True, **where)
    return leaves


def _outputs(mod, spec, call, leaves, lengths):
    lstm = spec["cls"].startswith("LSTM")
    hx = None
    if "h0" in leaves:
        hx = (leaves["h0"], leaves["c0"]) if lstm else leaves["h0"]
    x = leaves["x"]
    if "steps" in call:
        outs = []
        for t in range(call["steps"]):
            hx = mod(x[t], hx)
            outs.append(hx[0] if lstm else hx)
        return [st.stack(outs), *(hx if lstm else [hx])[1:]]
    inp = x
    if lengths is not None:
        inp = pack_padded_sequence(x, lengths, mod.batch_first, enforce_sorted=False)
    out, state = mod(inp, hx)
    if lengths is not None:
        padded, back = pad_packed_sequence(out, mod.batch_first)
        assert back.tolist() == list(lengths)
        outs = [out.data, padded]
    else:
        outs = [out]
    return outs + (list(state) if lstm else [state])


@pytest.mark.parametrize("split", [False, True], ids=["whole", "batch_split"])
@pytest.mark.parametrize("case", CASES)
def test_matches_torch(case, split):
    mod, spec, call = _loaded(case)
    leaves = _case_inputs(case, spec, call, split)
    lengths = REF[f"{case}/in/lengths"].tolist() if f"{case}/in/lengths" in REF.files else None
    outs = _outputs(mod, spec, call, leaves, lengths)
    n = len([k for k in REF.files if k.startswith(f"{case}/out/")])
    assert len(outs) == n
    loss = None
    for j, o in enumerate(outs):
        np.testing.assert_allclose(
            o.detach().numpy(), REF[f"{case}/out/{j}"], err_msg=str(j), **TOL
        )
        term = (o * st.tensor(REF[f"{case}/g/{j}"])).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    for k, t in leaves.items():
        np.testing.assert_allclose(t.grad.numpy(), REF[f"{case}/grad_in/{k}"], err_msg=k, **TOL)
    for k, p in mod.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), REF[f"{case}/grad/{k}"], err_msg=k, **TOL)


def test_pack_pad_roundtrip_and_sorted():
    x = st.tensor(np.arange(12.0).reshape(3, 4), shards=2)  # (B, T), batch_first
    p = pack_padded_sequence(x, [4, 2, 1], batch_first=True)
    assert p.sorted_indices is None and p.batch_sizes.tolist() == [3, 2, 1, 1]
    assert p.data.tolist() == [0.0, 4.0, 8.0, 1.0, 5.0, 2.0, 3.0]
    y, lengths = pad_packed_sequence(p, batch_first=True, total_length=5)
    want = np.array([[0, 1, 2, 3, 0], [4, 5, 0, 0, 0], [8, 0, 0, 0, 0]], float)
    np.testing.assert_array_equal(y.numpy(), want)
    assert lengths.tolist() == [4, 2, 1]
    seqs = [st.ones(2, 3), st.ones(4, 3)]
    assert st.nn.utils.rnn.pad_sequence(seqs).shape == (4, 2, 3)
    q = st.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    assert q.batch_sizes.tolist() == [2, 2, 1, 1] and q.sorted_indices.tolist() == [1, 0]


def test_dropout_between_layers():
    st.manual_seed(0)
    lstm = st.nn.LSTM(3, 4, num_layers=2, dropout=0.5).double()
    x = st.randn(5, 2, 3, dtype=st.float64)
    a = lstm(x)[0].detach().numpy()
    lstm.eval()
    b, c = lstm(x)[0].detach().numpy(), lstm(x)[0].detach().numpy()
    np.testing.assert_array_equal(b, c)  # eval: no dropout
    assert not np.allclose(a, b)


def test_bad_calls():
    E = st.errors
    with pytest.raises(E.ArgumentError, match="Unknown nonlinearity 'sigmoid'"):
        st.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(E.ArgumentError, match=r"dropout should be a number in range \[0, 1\]"):
        st.nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(E.ArgumentError, match="proj_size has to be smaller than hidden_size"):
        st.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(E.ArgumentError, match="proj_size argument is only supported for LSTM"):
        st.nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(E.ArgumentError, match="hidden_size must be an integer greater than zero"):
        st.nn.RNN(3, 0)
    rnn = st.nn.RNN(3, 4, num_layers=2)
    with pytest.raises(E.ShapeError, match="Expected 3, got 5"):
        rnn(st.ones(6, 2, 5))
    with pytest.raises(E.ShapeError, match=r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"):
        rnn(st.ones(6, 2, 3), st.zeros(1, 2, 4))
    with pytest.raises(E.ShapeError, match="Expected input to be 2D or 3D, got 4D"):
        rnn(st.ones(6, 2, 3, 1))
    with pytest.raises(E.ArgumentError, match=r"must be sorted in decreasing order.*\[1, 3\]"):
        pack_padded_sequence(st.ones(3, 2), [1, 3])
    with pytest.raises(E.ArgumentError, match=r"greater than 0.*\[3, 0\]"):
        pack_padded_sequence(st.ones(3, 2), [3, 0])
    with pytest.raises(E.ArgumentError, match="total_length=2 and max sequence length being 3"):
        pad_packed_sequence(pack_padded_sequence(st.ones(3, 2), [3, 1]), total_length=2)
    with pytest.raises(E.ShapeError, match="Expected input to be 1D or 2D, got 3D"):
        st.nn.GRUCell(3, 4)(st.ones(1, 2, 3))
    with pytest.raises(E.ShapeError, match=r"Expected hidden size \(2, 4\), got \[2, 5\]"):
        st.nn.LSTMCell(3, 4)(st.ones(2, 3), (st.zeros(2, 5), st.zeros(2, 4)))
