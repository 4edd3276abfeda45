"""Published tensors on a real Ray head (``ray start --head`` on this machine), with every client
a separate Python process: publish in one and read in another after the first exited,
concurrent readers while a writer republishes, a SIGKILLed client leaves no shards, namespaces
never see each other's names, and ``sharded service status|stop``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
from cluster import ray_cluster as rc  # noqa: E402
from tests.support.ports import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 2.0
CLIENT_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def head():
    tmp = tempfile.mkdtemp(prefix="shp", dir="/tmp")  # short: Ray's socket paths have a limit
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env["SHARDED_LEASE_S"] = str(LEASE_S)
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    node = rc.start_head(
        port=free_port(),
        num_cpus=8,  # advertised: each namespace's 2 workers reserve one CPU each
        num_gpus=0,
        object_store_memory=100 << 20,
        temp_dir=tmp,
        client_port=free_port(),
        log_dir=tmp,
        env=env,
        timeout=60,
        token_file=f"{tmp}/token",  # token authentication on, as by default
    )
    try:
        yield node.address, node.driver_env(env)  # the clients connect with the head's token
    finally:
        node.stop()
        shutil.rmtree(tmp, ignore_errors=True)


PRELUDE = """
import json, sys, time, gc
import numpy as np
import sharded as st
st.init(address={address!r}, namespace={ns!r}, num_workers=2)
def out(**kw):
    print("RESULT " + json.dumps(kw), flush=True)
def live():
    return sum(w["live_shards"] for w in st.stats()["workers"])
def live_settled(n, bound=30):
    # the registry frees a dropped version's shards with calls it does not wait for: give
    # them (at most ``bound`` s) to land
    deadline = time.monotonic() + bound
    while live() != n and time.monotonic() < deadline:
        time.sleep(0.2)
    return live()
"""


def _code(address, ns, body):
    return PRELUDE.format(address=address, ns=ns) + textwrap.dedent(body)


def _start(head, ns, body):
    address, env = head
    return subprocess.Popen(
        [sys.executable, "-c", _code(address, ns, body)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(p, timeout=CLIENT_TIMEOUT_S) -> dict:
    try:
        so, se = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate()
        raise AssertionError(f"client timed out\n{so}\n{se[-3000:]}") from None
    assert p.returncode == 0, f"client failed ({p.returncode})\n{so}\n{se[-3000:]}"
    res = {}
    for line in so.splitlines():
        if line.startswith("RESULT "):
            res.update(json.loads(line[7:]))
    return res


def _client(head, ns, body) -> dict:
    return _finish(_start(head, ns, body))


def _cli(head, *args):
    address, env = head
    return subprocess.run(
        [sys.executable, "-m", "sharded.cli", "service", *args, "--address", address],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
    )


def test_publish_outlives_client_and_status(head):
    _client(
        head,
        "lab",
        """
        x = st.arange(10.0, shards=2) * 2
        junk = st.ones(1000, shards=2)  # unpublished: freed when this client exits
        st.publish("w", x)
        x.add_(100)  # copy on write: the snapshot keeps the old values
        out(names=st.list_published(), x=x.tolist()[:2])
        """,
    )
    res = _client(
        head,
        "lab",
        """
        y = st.get("w")
        try:
            y.add_(1)
        except st.PublishedReadOnly as e:
            ro = type(e).__name__
        ents = [(e["name"], e["shape"], e["dtype"], e["nbytes"]) for e in st.published_entries()]
        from sharded.runtime.driver import session  # shared workers: trees keep the Ray path
        mail = session.current().executor._mail
        out(names=st.list_published(), y=y.tolist(), ro=ro, live=live_settled(2), entries=ents,
            mail=mail, total=float(y.sum().item()))
        """,
    )
    assert res["mail"] is False and res["total"] == 90.0
    assert res["names"] == ["w"]
    assert res["y"] == [float(2 * i) for i in range(10)]
    assert res["ro"] == "PublishedReadOnly"
    assert res["live"] == 2  # the published version's two shards, nothing of the first client
    assert res["entries"] == [["w", [10], "float32", 40]]
    st = _cli(head, "status", "--namespace", "lab")
    assert st.returncode == 0, st.stderr
    assert "sharded-worker-0" in st.stdout and "sharded-worker-1" in st.stdout
    assert "w " in st.stdout and "(10,)" in st.stdout and "float32" in st.stdout
    stop = _cli(head, "stop", "--namespace", "lab")
    assert stop.returncode == 0 and "sharded-registry" in stop.stdout, stop.stderr
    gone = _cli(head, "status", "--namespace", "lab")
    assert gone.returncode == 1 and "no sharded service" in gone.stdout


def test_sigkill_leaves_no_shards_and_namespaces_are_apart(head):
    victim = _start(
        head,
        "kill",
        """
        assert st.list_published() == [], st.list_published()  # "lab"'s names are not here
        try:
            st.get("w")
        except st.PublishedNotFound:
            pass
        kept = st.arange(4.0, shards=2)
        st.publish("kept", kept)
        junk = [st.rand(10_000, shards=2) for _ in range(5)]  # unpublished
        got = st.get("kept")  # a hold: released when the lease runs out
        st.synchronize()
        out(live=live())
        print("READY", flush=True)
        time.sleep(600)
        """,
    )
    line, deadline = "", time.monotonic() + CLIENT_TIMEOUT_S
    while "READY" not in line and time.monotonic() < deadline and victim.poll() is None:
        line = victim.stdout.readline()
    assert "READY" in line, victim.stderr.read()[-3000:] if victim.poll() is not None else ""
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    res = _client(
        head,
        "kill",
        f"""
        n = live_settled(2, {LEASE_S * 5 + 10})  # the reaper runs every lease/4
        out(live=n, names=st.list_published(), kept=st.get("kept").tolist(),
            holders=[e["holders"] for e in st.published_entries()])
        """,
    )
    assert res["live"] == 2  # only the published version outlived the killed client
    assert res["names"] == ["kept"] and res["kept"] == [0.0, 1.0, 2.0, 3.0]
    assert res["holders"] == [[]]  # the dead client's hold is gone (ours was dropped)
    other = _client(head, "kill-other", "out(names=st.list_published())")
    assert other["names"] == []
    for ns in ("kill", "kill-other"):
        assert _cli(head, "stop", "--namespace", ns).returncode == 0


def test_readers_see_whole_versions_while_a_writer_republishes(head, tmp_path):
    # The three clients start together, and one may take many seconds longer to start than
    # another on a loaded machine: the writer goes on publishing (at least 40 versions, at
    # most 120 s) until each reader has read a version, so that every reader sees the writer
    # at work and not just its last version.
    flags = [tmp_path / f"reader-{i}" for i in range(2)]
    writer = _start(
        head,
        "conc",
        f"""
        import os
        v, deadline = 0, time.monotonic() + 120
        while v < 40 or (
            not all(os.path.exists(f) for f in {[str(f) for f in flags]!r})
            and time.monotonic() < deadline
        ):
            st.publish("c", st.full((3000,), float(v), shards=2))
            time.sleep(0.05)
            v += 1
        st.publish("c", st.full((3000,), -1.0, shards=2))  # the last version: readers stop
        out(done=True)
        """,
    )
    reader = """
    seen, mixed, t0 = set(), 0, time.monotonic()
    while time.monotonic() - t0 < 150:
        try:
            y = st.get("c")
        except st.PublishedNotFound:
            time.sleep(0.05)
            continue
        a = y.numpy()
        del y
        if a.min() != a.max():
            mixed += 1
        seen.add(float(a[0]))
        if a[0] == -1.0:
            break
        open({flag!r}, "w").close()  # the writer may stop
    out(seen=sorted(seen), mixed=mixed)
    """
    readers = [_start(head, "conc", reader.format(flag=str(f))) for f in flags]
    assert _finish(writer, timeout=240)["done"]
    results = [_finish(r, timeout=240) for r in readers]
    for res in results:
        assert res["mixed"] == 0  # never a shard of one version next to one of another
        assert res["seen"][0] == -1.0 and len(res["seen"]) >= 2
    after = _client(head, "conc", "gc.collect(); out(live=live_settled(2))")
    assert after["live"] == 2  # only the current version: old ones freed once dropped
    assert _cli(head, "stop", "--namespace", "conc").returncode == 0
