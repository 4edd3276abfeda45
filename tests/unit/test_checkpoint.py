"""Checkpoints (``st.save``/``st.load``) and state dicts: round trips, N -> M, the format,
atomicity, bad checkpoints, bounded memory, and a resumed Adam run."""

import gc
import os
import zlib

import msgpack
import numpy as np
import pytest

import sharded as st
from sharded.core.dataflow import Operand
from sharded.core.dispatch import wrap
from sharded.runtime.commands import Key
from sharded.runtime.worker.core import KERNELS
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, current_executor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def _local():
    return current_executor().kind == "local"


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = dtype.np
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    return (rng.standard_normal(shape) * 100).astype(dt)


def _same(t, a):
    got = t.detach().numpy()
    assert got.dtype == a.dtype and got.shape == a.shape
    np.testing.assert_array_equal(got, a)


def _live():
    gc.collect()
    return st.stats()["live_shards"]


# ---------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("dtype", st.dtypes.ALL, ids=[d.name for d in st.dtypes.ALL])
def test_every_dtype_round_trips_bit_for_bit(tmp_path, dtype):
    a = _values(dtype, (7, 4))
    if dtype.is_floating_point:
        a[0, :3] = [np.nan, np.inf, -0.0]
    st.save(st.from_numpy(a, shards=3), tmp_path / "c")
    y = st.load(tmp_path / "c")
    assert y.dtype == dtype and y.layout.grid == (3, 1)
    np.testing.assert_array_equal(y.numpy().view(np.uint8), a.view(np.uint8))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_every_layout_round_trips_keeping_its_chunks(tmp_path, place):
    a = _values(st.float64, (7, 4))
    x = st.from_numpy(a, **place)
    st.save(x, tmp_path / "c")
    y = st.load(tmp_path / "c")
    _same(y, a)
    assert y.layout.bounds == x.layout.bounds
    assert y.layout.is_replicated == x.layout.is_replicated


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (3, 0), (1,), (2, 0, 2)])
def test_empty_and_zero_d_tensors(tmp_path, shape):
    a = _values(st.int32, shape)
    st.save({"t": st.from_numpy(a)}, tmp_path / "c")
    for kw in ({}, {"shards": 2}, {"layout": st.Layout.replicated()}):
        y = st.load(tmp_path / "c", **kw)["t"]
        assert tuple(y.shape) == shape
        _same(y, a)


def test_views_save_their_own_values(tmp_path):
    x = st.from_numpy(_values(st.float32, (6, 8)), shards=3)
    v = x.t()[1:7:2]  # a strided view: shards are not contiguous blocks of their base
    st.save(v, tmp_path / "c")
    _same(st.load(tmp_path / "c"), x.numpy().T[1:7:2])


SAVE_AS = [dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout.block((2, 2)))]
LOAD_AS = [
    dict(shards=1),
    dict(shards=5),
    dict(shards=3, dim=1),
    dict(layout=st.Layout.block((3, 2))),
    dict(layout=st.Layout(chunks=(9, 0, 4))),
    dict(layout=st.Layout.replicated()),
    dict(device="cpu"),
]


@pytest.mark.parametrize("src", SAVE_AS, ids=["rows3", "cols2", "block"])
@pytest.mark.parametrize(
    "dst", LOAD_AS, ids=["1", "5", "cols3", "block32", "uneven", "repl", "cpu"]
)
def test_n_to_m_loads_any_layout(tmp_path, src, dst):
    a = _values(st.float64, (13, 6))
    st.save(st.from_numpy(a, **src), tmp_path / "c")
    y = st.load(tmp_path / "c", **dst)
    _same(y, a)
    want = st.zeros(13, 6, **(src if list(dst) == ["device"] else dst)).layout  # device: kept
    assert y.layout.bounds == want.bounds and y.layout.is_replicated == want.is_replicated


def test_n_to_m_with_wide_rows_reads_row_by_row(tmp_path):
    # rows of 16 KiB with 12 KiB holes: each row's wanted range is read on its own
    a = _values(st.float64, (9, 2048))
    st.save(st.from_numpy(a, shards=2), tmp_path / "c")
    _same(st.load(tmp_path / "c", shards=4, dim=1), a)
    _same(st.load(tmp_path / "c", layout=st.Layout.block((2, 3))), a)


def test_structures_come_back_as_saved(tmp_path):
    x = st.arange(5, shards=2)
    obj = {
        "model": {"w": x, "b": st.ones(2)},
        "list": [1, 2.5, "s", None, True, b"\x00raw", (x, [])],
        7: ("int key",),
        (1, "t"): {},
        "step": 3,
        "big": 2**63 + 5,
    }
    st.save(obj, tmp_path / "c")
    got = st.load(tmp_path / "c")
    assert set(got) == set(obj)
    assert got["list"][:6] == obj["list"][:6] and isinstance(got["list"][6], tuple)
    assert got[7] == ("int key",) and got[(1, "t")] == {} and got["step"] == 3
    assert got["big"] == 2**63 + 5
    assert got["model"]["w"] is got["list"][6][0]  # one tensor saved once, loaded once
    _same(got["model"]["w"], x.numpy())
    assert sorted(os.listdir(tmp_path / "c")) == [
        "manifest.msgpack",
        "t0.s0.bin",
        "t0.s1.bin",
        "t1.s0.bin",
        "t1.s1.bin",
    ]
    st.save(3.5, tmp_path / "plain")
    assert st.load(tmp_path / "plain") == 3.5


def test_requires_grad_is_kept(tmp_path):
    w = st.ones(3, requires_grad=True)
    st.save({"w": w, "i": st.arange(3)}, tmp_path / "c")
    got = st.load(tmp_path / "c")
    assert got["w"].requires_grad and got["w"].is_leaf and not got["i"].requires_grad


@pytest.mark.parametrize(
    "obj, match",
    [
        ({"a": object()}, r"object at obj\['a'\]"),
        ([1, {2}], r"set at obj\[1\]"),
        ({"a": 2**64}, "64 bits"),
        ({st.ones(1): 1}, "dict key"),
    ],
)
def test_unsaveable_values_fail_before_anything_is_written(tmp_path, obj, match):
    with pytest.raises(st.ArgumentError, match=match):
        st.save(obj, tmp_path / "c")
    assert os.listdir(tmp_path) == []
    loop = [1]
    loop.append(loop)
    with pytest.raises(st.ArgumentError, match="contains itself"):
        st.save(loop, tmp_path / "c")


# ---------------------------------------------------------------------------- the format
def test_format_is_a_manifest_and_raw_little_endian_shards(tmp_path):
    a = _values(st.int16, (5, 3))
    x = st.from_numpy(a, shards=2)
    st.save({"x": x}, tmp_path / "c")
    with open(tmp_path / "c" / "manifest.msgpack", "rb") as f:
        m = msgpack.unpackb(f.read())
    assert m["format"] == "sharded.checkpoint" and m["version"] == 1
    (t,) = m["tensors"]
    assert (
        t["shape"] == [5, 3]
        and t["dtype"] == "int16"
        and t["layout"]["bounds"]
        == [
            [0, 3, 5],
            [0, 3],
        ]
    )
    for s, (lo, hi) in zip(t["shards"], [(0, 3), (3, 5)]):
        raw = (tmp_path / "c" / s["file"]).read_bytes()
        assert s["offset"] == 0 and s["nbytes"] == len(raw) == (hi - lo) * 3 * 2
        assert s["crc32"] == zlib.crc32(raw)
        np.testing.assert_array_equal(np.frombuffer(raw, "<i2").reshape(hi - lo, 3), a[lo:hi])
    assert m["root"] == ["dict", [["x", ["tensor", 0]]]]


def test_replicated_tensors_are_written_once(tmp_path):
    st.save(st.ones(4, layout=st.Layout.replicated()), tmp_path / "c")
    assert sorted(os.listdir(tmp_path / "c")) == ["manifest.msgpack", "t0.s0.bin"]


# ---------------------------------------------------------------------------- atomicity
def _no_temporaries(parent):
    return [n for n in os.listdir(parent) if ".tmp-" in n or ".old-" in n] == []


def test_saving_over_a_checkpoint_replaces_it_whole(tmp_path):
    p = tmp_path / "c"
    st.save({"a": st.ones(4, shards=3), "b": st.ones(2)}, p)
    st.save({"a": st.zeros(4, shards=1)}, p)
    assert sorted(os.listdir(p)) == ["manifest.msgpack", "t0.s0.bin"]
    got = st.load(p)
    assert list(got) == ["a"] and got["a"].tolist() == [0.0] * 4
    assert _no_temporaries(tmp_path)


def test_a_save_failing_in_a_worker_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    if not _local():
        pytest.skip("patches a kernel in this process")
    p = tmp_path / "c"
    st.save({"a": st.arange(6, shards=3)}, p)
    real, calls = KERNELS["ckpt_write"], []

    def failing(xp, a, **kw):
        calls.append(kw["file"])
        if len(calls) == 3:  # two shard files are on disk by now
            raise OSError(28, "No space left on device")
        return real(xp, a, **kw)

    failing.kernel_name = "ckpt_write"
    monkeypatch.setitem(KERNELS, "ckpt_write", failing)
    with pytest.raises(st.OpFailed, match="No space left"):
        st.save({"a": st.zeros(6, shards=3), "b": st.ones(3)}, p)
    assert len(calls) >= 3
    monkeypatch.undo()
    assert st.load(p)["a"].tolist() == [0, 1, 2, 3, 4, 5]
    assert _no_temporaries(tmp_path)
    assert st.ones(2).sum().item() == 2.0


def _poisoned():
    """A tensor whose shard 1 failed to compute (its error already reported)."""
    ex = current_executor()
    x = st.arange(6.0, shards=3)
    keys = [ex.new_key() for _ in range(3)]
    for s, (w, _, _) in enumerate(x.layout.shards()):
        kern = "copy" if s != 1 else "reshape"
        params = {} if s != 1 else {"shape": (7,)}
        ex.submit(w, kern, (Key(x._keys[s], None),), (keys[s],), params, ("boom", s))
    t = wrap(Operand(x.layout, x.dtype, keys), st.runtime.current())
    with pytest.raises(st.OpFailed, match="boom"):
        st.synchronize()
    return t


def test_a_save_failing_midway_leaves_the_old_checkpoint(tmp_path):
    p = tmp_path / "c"
    st.save({"a": st.arange(6, shards=3)}, p)
    bad = _poisoned()
    with pytest.raises(st.OpFailed, match="boom"):
        st.save({"a": st.zeros(6, shards=3), "b": bad}, p)
    assert st.load(p)["a"].tolist() == [0, 1, 2, 3, 4, 5]
    assert _no_temporaries(tmp_path)


@pytest.mark.parametrize("what", ["file", "dir"])
def test_save_refuses_to_replace_what_is_not_a_checkpoint(tmp_path, what):
    p = tmp_path / "c"
    if what == "file":
        p.write_text("keep me")
    else:
        p.mkdir()
        (p / "notes.txt").write_text("keep me")
    with pytest.raises(st.CheckpointError, match="is not a checkpoint"):
        st.save(st.ones(2), p)
    assert (p if what == "file" else p / "notes.txt").read_text() == "keep me"
    assert _no_temporaries(tmp_path)


def test_a_path_no_worker_sees_fails_naming_node_and_path(tmp_path):
    p = tmp_path / "missing" / "c"
    with pytest.raises(st.CheckpointError, match=r"worker 0 on node .* cannot use .*missing/c"):
        st.save(st.ones(2), p)
    with pytest.raises(st.CheckpointError, match=r"no checkpoint at .*missing/c"):
        st.load(p)


def test_a_worker_that_cannot_see_the_path_stops_the_save_before_any_write(tmp_path, monkeypatch):
    if not _local():
        pytest.skip("patches a kernel in this process")
    real, calls = KERNELS["ckpt_probe"], []

    def blind(xp, **kw):  # worker 1 lives on a node without this filesystem
        calls.append(kw["mode"])
        if kw["mode"] == "tmp" and calls.count("tmp") == 2:
            kw = dict(kw, tmp=kw["tmp"] + "-elsewhere")
        return real(xp, **kw)

    blind.kernel_name = "ckpt_probe"
    monkeypatch.setitem(KERNELS, "ckpt_probe", blind)
    with pytest.raises(st.CheckpointError, match=r"st.save: worker 1 on node .*cannot use"):
        st.save(st.ones(6, shards=3), tmp_path / "c")
    assert os.listdir(tmp_path) == []


def test_workers_seeing_different_manifests_fail_the_load(tmp_path, monkeypatch):
    if not _local():
        pytest.skip("patches a kernel in this process")
    st.save(st.ones(3), tmp_path / "c")
    st.save(st.ones(4), tmp_path / "d")
    real, calls = KERNELS["ckpt_probe"], []

    def stale(xp, **kw):  # worker 2 sees another copy of the directory
        calls.append(1)
        if len(calls) == 3:
            kw = dict(kw, path=str(tmp_path / "d"))
        return real(xp, **kw)

    stale.kernel_name = "ckpt_probe"
    monkeypatch.setitem(KERNELS, "ckpt_probe", stale)
    with pytest.raises(st.CheckpointError, match=r"worker 2 on node .* sees a different"):
        st.load(tmp_path / "c")


# ---------------------------------------------------------------------------- bad checkpoints
@pytest.fixture
def saved(tmp_path):
    a = _values(st.float64, (30, 4))
    st.save({"x": st.from_numpy(a, shards=3), "n": 1}, tmp_path / "c")
    return tmp_path / "c", a


def _edit_manifest(p, fn):
    m = msgpack.unpackb((p / "manifest.msgpack").read_bytes())
    fn(m)
    (p / "manifest.msgpack").write_bytes(msgpack.packb(m))


def _fails_cleanly(p, match, **kw):
    before = _live()
    with pytest.raises(st.CheckpointError, match=match):
        st.load(p, **kw)
    assert _live() <= before  # nothing half-loaded
    assert st.arange(4, shards=2).sum().item() == 6  # the session still works


@pytest.mark.parametrize("kw", [{}, {"shards": 2, "dim": 1}], ids=["same", "n_to_m"])
def test_missing_truncated_and_corrupt_shard_files(saved, kw):
    p, a = saved
    f = p / "t0.s1.bin"
    raw = f.read_bytes()
    f.write_bytes(raw[:-8])
    _fails_cleanly(
        p, rf"t0.s1.bin is truncated: expected {len(raw)} bytes, found {len(raw) - 8}", **kw
    )
    f.write_bytes(raw[:20] + bytes([raw[20] ^ 1]) + raw[21:])
    crc = zlib.crc32(raw)
    _fails_cleanly(p, rf"checksum mismatch in .*t0.s1.bin: expected crc32 {crc:#010x}", **kw)
    f.unlink()
    _fails_cleanly(p, rf"t0.s1.bin is missing \(expected {len(raw)} bytes\)", **kw)
    f.write_bytes(raw)
    _same(st.load(p, **kw)["x"], a)


def test_a_corrupt_or_truncated_manifest(saved):
    p, _ = saved
    m = p / "manifest.msgpack"
    good = m.read_bytes()
    m.write_bytes(good[: len(good) // 2])
    _fails_cleanly(p, "manifest.msgpack is not a valid manifest")
    m.write_bytes(b"\x93garbage" + good)
    _fails_cleanly(p, "manifest.msgpack is not a")
    m.unlink()
    _fails_cleanly(p, "no checkpoint at .*manifest.msgpack does not exist")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m.update(version=7), "unknown format version 7 .*reads version 1"),
        (lambda m: m.update(format="other"), "expected format 'sharded.checkpoint', found 'other'"),
        (
            lambda m: m["tensors"][0]["shards"][0].update(file="/etc/passwd"),
            "file name '/etc/passwd' leaves the checkpoint",
        ),
        (
            lambda m: m["tensors"][0]["shards"][1].update(file="../c/t0.s1.bin"),
            r"file name '../c/t0.s1.bin' leaves the checkpoint",
        ),
        (lambda m: m["tensors"][0].update(dtype="complex32"), "unknown dtype 'complex32'"),
        (
            lambda m: m["tensors"][0]["shards"][2].update(nbytes=8),
            "8 bytes for a float64 block of shape .*expected 320",
        ),
        (
            lambda m: m["tensors"][0]["layout"].update(bounds=[[0, 10, 20, 31], [0, 4]]),
            r"bounds \(0, 10, 20, 31\) of dim 0 are not increasing cuts of 0..30",
        ),
        (lambda m: m["tensors"][0]["shards"].pop(), "expected 3 shards .*found 2"),
        (lambda m: m.update(root=["tensor", 4]), "names tensor 4, expected one of 0..0"),
    ],
)
def test_bad_manifest_entries(saved, edit, match):
    p, _ = saved
    _edit_manifest(p, edit)
    _fails_cleanly(p, match)


# ---------------------------------------------------------------------------- memory, progress
def _peaks(fn):
    """Each worker's peak of new allocations while ``fn`` runs."""
    st.trace_memory(True)
    try:
        out = fn()
        st.synchronize()
        return out, [w["traced_peak_bytes"] for w in st.stats()["workers"]]
    finally:
        st.trace_memory(False)


def test_load_and_save_stream_through_bounded_pieces(tmp_path):
    ex = current_executor()
    st.manual_seed(0)
    x = st.rand(256, 2048, dtype=st.float64, shards=4)  # 1 MiB a shard
    piece = 64 << 10
    old = ex.transfer_bytes
    ex.transfer_bytes = piece
    try:
        # what a command on every worker costs while tracing (on Ray about 1 MiB of its own)
        n = ex.num_workers
        _, base = _peaks(lambda: st.ones(n, shards=n).sum().item())
        # a strided view: written through piece-sized copies
        _, save_peaks = _peaks(lambda: st.save(x.t(), tmp_path / "c"))
        # 4 column blocks -> 3 row blocks: ranges of every file, through one piece buffer
        y, load_peaks = _peaks(lambda: st.load(tmp_path / "c", shards=3, dim=0))
    finally:
        ex.transfer_bytes = old
    slack = 256 << 10  # replies, the manifest, Python objects
    for w, peak in enumerate(save_peaks):
        assert peak <= base[w] + piece + slack, (w, peak, base[w])
    per_worker = {}
    for w, _, shp in y.layout.shards():
        per_worker[w] = per_worker.get(w, 0) + int(np.prod(shp)) * 8
    for w, peak in enumerate(load_peaks):
        own = sum(per_worker.values()) if _local() else per_worker.get(w, 0)  # one process
        assert peak <= base[w] + own + piece + slack, (w, peak, base[w], own)
    _same(y, x.numpy().T)


def test_progress_bar_on_request(tmp_path, capsys):
    st.save(st.ones(1000), tmp_path / "c", progress=True)
    st.load(tmp_path / "c", progress=True)
    err = capsys.readouterr().err
    assert "save c" in err and "load c" in err and "100%" in err
    st.save(st.ones(10), tmp_path / "d")
    st.load(tmp_path / "d")
    assert capsys.readouterr().err == ""  # small and not a terminal: no bar


# ---------------------------------------------------------------------------- state dicts
def _mlp(seed):
    st.manual_seed(seed)
    return st.nn.Sequential(st.nn.Linear(5, 8), st.nn.ReLU(), st.nn.Linear(8, 1))


def test_module_state_dict_round_trip(tmp_path):
    a, b = _mlp(1), _mlp(2)
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert not sd["0.weight"].requires_grad and a[0].weight.requires_grad
    st.save(sd, tmp_path / "c")
    res = b.load_state_dict(st.load(tmp_path / "c", shards=2))
    assert res.missing_keys == [] and res.unexpected_keys == []
    for p, q in zip(a.parameters(), b.parameters()):
        _same(q, p.detach().numpy())
        assert q.layout.is_replicated and q.requires_grad  # copied in place: stays a param


def test_load_state_dict_strictness_follows_torch():
    m = st.nn.Linear(3, 2)
    w = st.zeros(2, 3)
    with pytest.raises(
        st.StateDictError, match=r'for Linear:\n\tMissing key\(s\) in state_dict: "bias". '
    ):
        m.load_state_dict({"weight": w})
    with pytest.raises(st.StateDictError, match=r'Unexpected key\(s\) in state_dict: "x". '):
        m.load_state_dict({"weight": w, "bias": st.zeros(2), "x": st.zeros(1)})
    before = m.weight.detach().numpy()
    with pytest.raises(
        st.StateDictError,
        match=r"size mismatch for weight: copying a param with "
        r"shape sharded.Size\(\[3, 3\]\) from checkpoint, the shape in current "
        r"model is sharded.Size\(\[2, 3\]\)",
    ):
        m.load_state_dict({"weight": st.zeros(3, 3), "bias": st.zeros(2)}, strict=False)
    _same(m.weight, before)  # nothing copied
    res = m.load_state_dict({"weight": w, "x": st.zeros(1)}, strict=False)
    assert res == (["bias"], ["x"])
    assert m.weight.detach().numpy().sum() == 0


def test_optimizer_state_dict_has_torchs_structure():
    m = _mlp(1)
    opt = st.optim.Adam(
        [{"params": [m[0].weight, m[0].bias]}, {"params": [m[2].weight, m[2].bias], "lr": 0.5}]
    )
    st.nn.functional.mse_loss(m(st.ones(4, 5)), st.zeros(4, 1)).backward()
    opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    assert (
        sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"] and sd["state"][0]["step"] == 1
    )
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    with pytest.raises(st.ArgumentError, match="different number of parameter groups"):
        st.optim.Adam(m.parameters()).load_state_dict(sd)
    bad = st.optim.Adam([{"params": [m[0].weight]}, {"params": [m[2].weight, m[2].bias]}])
    with pytest.raises(st.ArgumentError, match="doesn't match the size of optimizer's group"):
        bad.load_state_dict(sd)


@pytest.mark.parametrize("load_kw", [{}, {"shards": 2}], ids=["same", "resharded"])
@pytest.mark.parametrize("opt_cls", ["Adam", "SGD"])
def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path, load_kw, opt_cls):
    st.manual_seed(3)
    X, Y = st.randn(64, 5, shards=3), st.randn(64, 1, shards=3)
    kw = {"lr": 0.05} if opt_cls == "Adam" else {"lr": 0.05, "momentum": 0.9}

    def make(seed):
        m = _mlp(seed)
        return m, getattr(st.optim, opt_cls)(m.parameters(), **kw)

    def step(m, opt):
        opt.zero_grad()
        loss = st.nn.functional.mse_loss(m(X), Y)
        loss.backward()
        opt.step()
        return loss.item()

    m, opt = make(1)
    full = [step(m, opt) for _ in range(6)]
    final = [p.detach().numpy() for p in m.parameters()]
    m, opt = make(1)
    first = [step(m, opt) for _ in range(3)]
    st.save({"model": m.state_dict(), "opt": opt.state_dict(), "step": 3}, tmp_path / "c")
    del m, opt
    m, opt = make(2)  # another initialisation: everything has to come from the checkpoint
    ck = st.load(tmp_path / "c", **load_kw)
    m.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    assert ck["step"] == 3
    rest = [step(m, opt) for _ in range(3)]
    assert first + rest == full
    for want, p in zip(final, m.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), want)
        assert p.layout.is_replicated
