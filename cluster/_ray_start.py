"""``ray start`` with a private temp dir and one more option: ``--ray-client-server-host=HOST``.

Every node the helpers start runs ``python -m cluster._ray_start start ...``:

* ``--ray-client-server-host=HOST`` (head only).  Ray 2.60 binds the Ray Client server (port
  10001) to the node's address (plus loopback) and offers no option to keep it on loopback
  only, as ``--dashboard-host`` does for the dashboard.  This strips the option and makes the
  node start its client server on ``HOST`` instead (the one call it goes through,
  ``ray._private.services.start_ray_client_server``, runs in this process: ``ray start
  --block`` starts the node's daemons itself).
* ``--temp-dir=DIR``: DIR is made private first (mode 0700, this user's; an unsafe one is
  refused, see :func:`cluster.host.private_dir`) and Ray gets ``DIR/ray`` as its temp dir.
  Ray makes every directory of its tree world-writable (``chmod 0777`` of the temp dir, the
  session, its sockets and logs, by every Ray process, workers included: it is meant for a
  /tmp/ray that several users share); one level down, inside a directory nobody else may
  enter, that tree is out of other users' reach.

Anything else is Ray's ``ray start`` unchanged.
"""

from __future__ import annotations

import os
import sys

from ray._private import services
from ray.scripts.scripts import main as ray_main

from cluster.errors import ClusterError
from cluster.host import private_dir

OPTION = "--ray-client-server-host="
RAY_SUBDIR = "ray"  # Ray's own temp dir, inside the private one


def _bind_client_server(host: str) -> None:
    """Make the node started by this process run its Ray Client server on ``host``."""
    start = services.start_ray_client_server

    def start_on_host(address, _node_ip, port, *args, **kwargs):
        return start(address, host, port, *args, **kwargs)

    services.start_ray_client_server = start_on_host


def private_temp_dir(argv: list[str]) -> list[str]:
    """``argv`` with its ``--temp-dir DIR`` (either spelling, the last one wins) made private
    and replaced by ``--temp-dir=DIR/ray``.

    Raises
    ------
    UnsafePath
        DIR is not this user's, or others may use it (see :func:`cluster.host.private_dir`).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> private_temp_dir(["start", "--temp-dir", d]) == ["start", f"--temp-dir={d}/ray"]
    True
    """
    out, temp_dir, args = [], None, iter(argv)
    for arg in args:
        if arg == "--temp-dir":
            temp_dir = next(args, "")
        elif arg.startswith("--temp-dir="):
            temp_dir = arg.split("=", 1)[1]
        else:
            out.append(arg)
    if not temp_dir:
        return out
    return [*out, f"--temp-dir={os.path.join(private_dir(temp_dir), RAY_SUBDIR)}"]


def main(argv: list[str]) -> int:
    hosts = [a[len(OPTION) :] for a in argv if a.startswith(OPTION)]
    argv = [a for a in argv if not a.startswith(OPTION)]
    if hosts and hosts[-1]:
        _bind_client_server(hosts[-1])
    try:
        argv = private_temp_dir(argv)
    except ClusterError as e:
        print(f"sharded: error: Ray temp dir: {e}", file=sys.stderr)
        return 1

    sys.argv = ["ray", *argv]
    return ray_main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
