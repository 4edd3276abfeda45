"""Free TCP ports for the daemons a test starts (Ray heads, Slurm)."""

import random
import socket

_GIVEN: set = set()


def free_port() -> int:
    """A port free on every interface (a GCS binds all of them), never the same twice in one
    run. Drawn from 20000-32000: above Ray's default worker ports (10002-19999) and below the
    kernel's ephemeral range (32768 and up), where every Ray process on this machine binds its
    port-0 sockets, so none of them can take the port between this check and the daemon
    binding it."""
    for _ in range(200):
        port = random.randint(20000, 32000)
        if port in _GIVEN:
            continue
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
        _GIVEN.add(port)
        return port
    raise RuntimeError("no free port in 20000-32000")
