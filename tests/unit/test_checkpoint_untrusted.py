"""Checkpoints as untrusted input, and what a save leaves on disk: links and FIFOs among the
files, manifests whose sizes or devices no file or session backs, file and directory modes,
and no leftover directories."""

import gc
import os
import stat
import threading
import zlib

import msgpack
import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


@pytest.fixture
def saved(tmp_path):
    a = np.arange(120.0).reshape(30, 4)
    st.save({"x": st.from_numpy(a, shards=3)}, tmp_path / "c")
    return tmp_path / "c", a


def _edit_manifest(p, fn):
    m = msgpack.unpackb((p / "manifest.msgpack").read_bytes())
    fn(m)
    (p / "manifest.msgpack").write_bytes(msgpack.packb(m))


def _refused(p, match, **kw):
    """``st.load(p)`` raises a CheckpointError matching ``match``, loads nothing, and the
    session goes on working; returns the message."""
    gc.collect()
    before = st.stats()["live_shards"]
    with pytest.raises(st.CheckpointError, match=match) as info:
        st.load(p, **kw)
    gc.collect()
    assert st.stats()["live_shards"] <= before
    assert st.arange(4, shards=2).sum().item() == 6
    return str(info.value)


def _perm(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


def _leftovers(parent):
    return [n for n in os.listdir(parent) if ".tmp-" in n or ".old-" in n]


# ------------------------------------------------------------------ links and special files
@pytest.mark.parametrize("kw", [{}, {"shards": 2, "dim": 1}], ids=["same", "n_to_m"])
@pytest.mark.parametrize("same_bytes", [True, False], ids=["crc_matches", "crc_differs"])
def test_a_shard_file_linked_out_of_the_directory_is_not_read(saved, kw, same_bytes):
    p, a = saved
    f = p / "t0.s1.bin"
    raw = f.read_bytes()
    secret = raw if same_bytes else b"SECRET-" + bytes(len(raw) - 7)
    outside = p.parent / "outside.bin"
    outside.write_bytes(secret)
    f.unlink()
    f.symlink_to(outside)
    msg = _refused(p, r"t0.s1.bin is a symbolic link", **kw)
    assert f"{zlib.crc32(secret):#010x}" not in msg and "SECRET" not in msg
    assert "outside.bin" not in msg  # the link's target is not followed, not even named
    f.unlink()
    f.write_bytes(raw)
    np.testing.assert_array_equal(st.load(p, **kw)["x"].numpy(), a)


def test_a_manifest_linked_out_of_the_directory_is_not_read(saved, tmp_path):
    p, _ = saved
    st.save({"other": st.ones(2)}, tmp_path / "d")
    (p / "manifest.msgpack").unlink()
    (p / "manifest.msgpack").symlink_to(tmp_path / "d" / "manifest.msgpack")
    _refused(p, r"manifest.msgpack is a symbolic link")


def test_a_shard_file_in_a_linked_subdirectory_is_refused(saved, tmp_path):
    p, a = saved
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "t0.s1.bin").write_bytes((p / "t0.s1.bin").read_bytes())
    (p / "sub").symlink_to(tmp_path / "elsewhere")
    _edit_manifest(p, lambda m: m["tensors"][0]["shards"][1].update(file="sub/t0.s1.bin"))
    _refused(p, r"file name 'sub/t0.s1.bin' leaves the checkpoint directory")


def _load_within(p, seconds, unblock):
    """``st.load(p)``'s exception, or a failure if it takes longer than ``seconds`` (then
    ``unblock()`` frees whatever it waits on, so the session outlives the test)."""
    out = {}

    def run():
        try:
            st.load(p)
        except BaseException as e:  # handed to the test thread
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        unblock()
        t.join(60)
        pytest.fail(f"st.load({p}) still waited after {seconds} s")
    return out.get("error")


def test_a_fifo_shard_file_fails_at_once(saved):
    p, a = saved
    f = p / "t0.s1.bin"
    raw = f.read_bytes()
    f.unlink()
    os.mkfifo(f)

    def unblock():  # a writer lets a reader blocked in open() go on
        os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))

    err = _load_within(p, 20, unblock)
    assert isinstance(err, st.CheckpointError), err
    assert "t0.s1.bin is a FIFO, expected a regular file" in str(err)
    f.unlink()
    f.write_bytes(raw)
    np.testing.assert_array_equal(st.load(p)["x"].numpy(), a)


# ------------------------------------------------------------------ sizes and devices
def _one_shard(tmp_path, n=10):
    p = tmp_path / "one"
    st.save(st.arange(n, dtype=st.float64, shards=1), p)
    return p


def _declare(n):
    """A manifest edit: tensor 0 is ``n`` float64s in its one file (whatever that holds)."""

    def edit(m):
        t = m["tensors"][0]
        t["shape"], t["layout"]["bounds"] = [n], [[0, n]]
        t["shards"][0].update(shape=[n], nbytes=8 * n)

    return edit


def test_a_shape_no_file_backs_fails_before_allocating(tmp_path):
    p = _one_shard(tmp_path)
    _edit_manifest(p, _declare(10**12))  # 8 TB: more than the workers hold
    where = r"manifest.msgpack: tensor 0: .*"
    _refused(p, where + r"needs 8000000000000 bytes .* more than the session's workers can hold")
    _refused(p, where + r"more than the session's workers can hold", shards=4)
    _edit_manifest(p, _declare(10**8))  # 800 MB: it fits, and the file holds 80 bytes
    _refused(p, r"t0.s0.bin is truncated: expected 800000000 bytes, found 80")
    _refused(p, r"t0.s0.bin is truncated", shards=4)


def test_a_truncated_shard_file_fails_before_its_block_is_allocated(tmp_path):
    p = _one_shard(tmp_path)
    n = 8 << 20  # a 64 MiB block declared, 80 bytes on disk
    _edit_manifest(p, _declare(n))
    st.synchronize()
    st.trace_memory(True)
    try:
        _refused(p, rf"t0.s0.bin is truncated: expected {8 * n} bytes, found 80")
        peaks = [w["traced_peak_bytes"] for w in st.stats()["workers"]]
    finally:
        st.trace_memory(False)
    assert max(peaks) < 16 << 20, peaks


def test_a_device_this_session_lacks_is_a_checkpoint_error(saved):
    p, a = saved
    _edit_manifest(p, lambda m: m["tensors"][0].update(device="cuda:7"))
    _refused(p, r"manifest.msgpack: tensor 0 was saved on device 'cuda:7'.*pass device=")
    np.testing.assert_array_equal(st.load(p, device="cpu")["x"].numpy(), a)


# ------------------------------------------------------------------ what a save leaves
def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


@pytest.mark.parametrize(
    "kw, files, dirs",
    [({}, 0o600, 0o700), ({"mode": 0o640}, 0o640, 0o750), ({"mode": 0o444}, 0o444, 0o555)],
    ids=["default", "group", "read_only"],
)
def test_file_and_directory_modes(tmp_path, kw, files, dirs):
    p = tmp_path / "c"
    st.save({"a": st.ones(6, shards=3), "b": st.ones(2)}, p, **kw)
    um = _umask()
    assert _perm(p) == dirs & ~um
    names = os.listdir(p)
    assert "manifest.msgpack" in names and "t1.s0.bin" in names
    assert {n: _perm(p / n) for n in names} == {n: files & ~um for n in names}
    assert st.load(p)["a"].tolist() == [1.0] * 6


@pytest.mark.parametrize("mode", [0o1600, 0o200, -1, True, "0o600", 384.0])
def test_a_bad_mode_is_refused_before_anything_is_written(tmp_path, mode):
    with pytest.raises(st.ArgumentError, match=r"mode=.*expected permission bits"):
        st.save(st.ones(2), tmp_path / "c", mode=mode)
    assert os.listdir(tmp_path) == []


def test_overwriting_leaves_no_old_or_temporary_directories(tmp_path):
    p = tmp_path / "c"
    st.save({"a": st.ones(4, shards=2)}, p, mode=0o444)  # a read-only checkpoint
    st.save({"a": st.zeros(4, shards=3)}, p)
    assert _leftovers(tmp_path) == []
    os.chmod(p, 0o500)  # made read-only since
    st.save({"a": st.arange(4.0, shards=1)}, p)
    assert _leftovers(tmp_path) == [] and os.listdir(tmp_path) == ["c"]
    assert sorted(os.listdir(p)) == ["manifest.msgpack", "t0.s0.bin"]
    assert st.load(p)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_save_refuses_to_replace_a_link(tmp_path):
    real = tmp_path / "real"
    st.save({"a": st.ones(3)}, real)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(st.CheckpointError, match=r"link is a symbolic link; refusing to replace"):
        st.save({"a": st.zeros(3)}, tmp_path / "link")
    assert _leftovers(tmp_path) == [] and sorted(os.listdir(tmp_path)) == ["link", "real"]
    assert st.load(tmp_path / "link")["a"].tolist() == [1.0] * 3  # loading through it is fine
