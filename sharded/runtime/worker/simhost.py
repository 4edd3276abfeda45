"""A host process of the simulated executor (:mod:`sharded.runtime.driver.simulated`): many
:class:`~.core.Worker`\\ s, each with its own :class:`~sharded.runtime.net.mailbox.Mailbox`,
and the wire relays (:mod:`sharded.runtime.net.fanout`) the driver places here, as threads
of one OS process.

Run as ``python -m sharded.runtime.worker.simhost``; it talks to the driver over its stdin
and stdout, one JSON line each way per step, so that the session key never travels over a
socket:

1. the driver sends ``{"key": hex, "workers": [w, ...], "relays": [[i, first, span], ...]}``
   (``span`` None: relay ``i`` serves workers; else relays, each ``span`` workers from
   ``first``);
2. the host answers ``{"workers": {w: [host, port]}, "relays": {i: [host, port]}}``;
3. the driver sends ``{"peers": {w: [host, port]}, "children": {i: {number: [host,
   port]}}}`` (every worker's mailbox, for the trees' partials; each relay's children);
4. the host answers ``"ready"`` and serves until its stdin closes (the driver closed the
   session, or died): it then exits at once, so no host outlives its driver.

A worker runs the batches of one connection (its relay's, or the driver's) in order, on
that connection's thread; the mailbox threads of a host share its interpreter (and its
GIL), which is what lets a 2-core machine host a thousand workers.

Examples
--------
>>> w = SimWorker(0)
>>> w.wire_run(0, 5.0, b"a pickle")[0]["cause"]
'a wire batch must be records, not pickled bytes'
"""

from __future__ import annotations

import json
import os
import sys
import threading

from ..net.fanout import RELAY_BASE, FanOut
from ..net.mailbox import Mailbox
from .core import Worker
from .socket_batch import SocketBatches

STACK_BYTES = 512 << 10  # a mailbox thread's stack: thousands of threads per host


class SimWorker(SocketBatches, Worker):
    """A :class:`Worker` whose batches come over its mailbox only (the simulated
    executor has no Ray): one at a time, in the order of their connection."""

    def __init__(self, index: int):
        super().__init__(index, "cpu")
        self._exec = threading.Lock()

    def wire_run(self, after, timeout, cmds):
        """The mailbox's runner: run a batch that came over a socket (``after`` is the
        Ray executor's count of Ray batches: none here)."""
        return self._refused(cmds) or self._run_socket(cmds)


def _addr(a) -> list:
    return [a[0], a[1]]


def serve(inp, out) -> None:
    """Run the host's side of the protocol above on the text streams ``inp`` and ``out``;
    returns when ``inp`` ends."""
    cfg = json.loads(inp.readline())
    key, host = bytes.fromhex(cfg["key"]), cfg.get("host", "127.0.0.1")
    workers, boxes = {}, {}
    for w in cfg["workers"]:
        workers[w] = SimWorker(w)
        box = boxes[w] = Mailbox(host, w)
        workers[w].mailbox = box
        box.runner = workers[w].wire_run
    relays = {i: (Mailbox(host, RELAY_BASE + i), first, span) for i, first, span in cfg["relays"]}
    where = {
        "workers": {w: _addr(b.address) for w, b in boxes.items()},
        "relays": {i: _addr(r[0].address) for i, r in relays.items()},
    }
    out.write(json.dumps(where) + "\n")
    out.flush()
    plan = json.loads(inp.readline())
    peers = {int(w): tuple(a) for w, a in plan["peers"].items()}
    for box in boxes.values():
        box.set_peers(peers, key)
    fans = []
    for i, (box, first, span) in relays.items():
        kids = {int(k): tuple(a) for k, a in plan["children"][str(i)].items()}
        fan = FanOut(RELAY_BASE + i, key, kids, first, span)
        box.set_peers({}, key)
        box.runner = fan.run
        fans.append(fan)
    out.write('"ready"\n')
    out.flush()
    while inp.read(1 << 16):  # until the driver's end of the pipe closes
        pass


def main() -> None:
    threading.stack_size(STACK_BYTES)
    try:
        serve(sys.stdin, sys.stdout)
    finally:
        os._exit(0)  # (the mailboxes' threads may be blocked: no orderly join)


if __name__ == "__main__":
    main()
