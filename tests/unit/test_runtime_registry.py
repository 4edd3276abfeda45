"""The registry of published tensors and the clients' key spaces, as a plain class."""

from __future__ import annotations

import pytest

from sharded.errors import ArgumentError, PublishedNotFound
from sharded.runtime.commands import DropRange, Free
from sharded.runtime.service.catalog import KEY_BITS, Registry, key_range, owner_of


def _rec(client, *keys, workers=(0, 1)):
    return dict(
        shape=(4,),
        dtype="float32",
        bounds=((0, 2, 4),),
        workers=workers,
        replicated=False,
        keys=tuple((client << KEY_BITS) + k for k in keys),
        nbytes=16,
    )


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def test_key_ranges_are_disjoint_and_owned():
    assert key_range(0) == (0, 1 << KEY_BITS)
    lo1, hi1 = key_range(1)
    lo2, _ = key_range(2)
    assert hi1 == lo2 and owner_of(lo1 + 5) == 1 and owner_of(hi1 - 1) == 1 and owner_of(7) == 0


def test_commit_acquire_replace_release():
    reg = Registry(num_workers=2)
    a, b = reg.register(), reg.register()
    assert (a, b) == (1, 2)
    assert reg.commit(a, "w", _rec(a, 1, 2)) == {}
    v1 = reg.acquire(b, "w")
    assert v1["version"] == 1 and v1["keys"] == _rec(a, 1, 2)["keys"] and v1["publisher"] == a
    # replacing while b holds version 1: nothing is freed yet
    assert reg.commit(a, "w", _rec(a, 3, 4)) == {}
    assert reg.acquire(b, "w")["version"] == 2
    assert [(e["version"], e["holders"]) for e in reg.entries()] == [(1, [b]), (2, [b])]
    # dropping version 1 frees its shards, one free per worker
    k1, k2 = _rec(a, 1, 2)["keys"]
    assert reg.release(b, 1) == {0: [Free((k1,))], 1: [Free((k2,))]}
    assert reg.release(b, 1) == {}  # releasing twice is harmless
    assert reg.names() == ["w"]


def test_unpublish_frees_when_no_client_holds_it():
    reg = Registry(num_workers=2)
    a = reg.register()
    reg.commit(a, "x", _rec(a, 1, 2))
    reg.acquire(a, "x")
    reg.acquire(a, "x")  # two tensors of one version: two holds
    assert reg.unpublish("x") == {}
    assert reg.names() == [] and len(reg.entries()) == 1
    assert reg.release(a, 1) == {}
    assert len(reg.release(a, 1)) == 2
    assert reg.entries() == []
    with pytest.raises(PublishedNotFound, match="no tensor is published under 'x'"):
        reg.unpublish("x")
    with pytest.raises(PublishedNotFound, match="'y'"):
        reg.acquire(a, "y")
    with pytest.raises(KeyError):
        reg.acquire(a, "y")
    with pytest.raises(ArgumentError, match="non-empty str, got 3"):
        reg.commit(a, 3, _rec(a, 1, 2))


def test_unregister_drops_range_but_keeps_published_keys():
    reg = Registry(num_workers=2)
    a, b = reg.register(), reg.register()
    reg.commit(a, "p", _rec(a, 5, 6))
    reg.acquire(a, "p")
    acts = reg.unregister(a)
    lo, hi = key_range(a)
    k5, k6 = _rec(a, 5, 6)["keys"]
    assert acts == {0: [DropRange(lo, hi, (k5,))], 1: [DropRange(lo, hi, (k6,))]}
    assert reg.entries()[0]["holders"] == []  # a's hold went with it
    assert reg.heartbeat(a) is False and reg.heartbeat(b) is True
    assert reg.clients() == [b]


def test_expired_lease_unregisters_and_frees_held_old_version():
    clock = Clock()
    reg = Registry(num_workers=1, lease_s=5, clock=clock)
    a, b = reg.register(), reg.register()
    reg.commit(a, "w", _rec(a, 1, workers=(0,)))
    reg.acquire(b, "w")
    reg.commit(a, "w", _rec(a, 2, workers=(0,)))  # version 1 lives on: b holds it
    clock.t = 3
    reg.heartbeat(a)
    clock.t = 6  # b silent since 0: dead; a renewed at 3: alive
    dead, acts = reg.expire()
    lo, hi = key_range(b)
    (k1,) = _rec(a, 1)["keys"][:1]
    assert dead == [b]
    assert acts == {0: [Free((k1,)), DropRange(lo, hi, ())]}
    assert [e["version"] for e in reg.entries()] == [2]
    assert reg.clients() == [a]


def test_configure_first_proposal_wins():
    reg = Registry()
    assert reg.get_config() is None
    assert reg.configure({"names": ["w0", "w1"], "total_workers": 2})["names"] == ["w0", "w1"]
    assert reg.configure({"names": ["x"], "total_workers": 1})["names"] == ["w0", "w1"]
    assert reg.num_workers == 2
