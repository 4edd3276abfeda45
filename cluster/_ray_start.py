"""``ray start`` with one more option: ``--ray-client-server-host=HOST``.

Ray 2.60 binds the Ray Client server (port 10001) to the node's address (plus loopback) and
offers no option to keep it on loopback only, as ``--dashboard-host`` does for the dashboard.
The head runs ``python -m cluster._ray_start start --head ... --ray-client-server-host=HOST``:
this strips the option, makes the node start its client server on ``HOST`` instead (the one
call it goes through, ``ray._private.services.start_ray_client_server``, runs in this process:
``ray start --block`` starts the node's daemons itself), then runs Ray's own command line.
Anything else is Ray's ``ray start`` unchanged.
"""

from __future__ import annotations

import sys

from ray._private import services
from ray.scripts.scripts import main as ray_main

OPTION = "--ray-client-server-host="


def _bind_client_server(host: str) -> None:
    """Make the node started by this process run its Ray Client server on ``host``."""
    start = services.start_ray_client_server

    def start_on_host(address, _node_ip, port, *args, **kwargs):
        return start(address, host, port, *args, **kwargs)

    services.start_ray_client_server = start_on_host


def main(argv: list[str]) -> int:
    hosts = [a[len(OPTION) :] for a in argv if a.startswith(OPTION)]
    argv = [a for a in argv if not a.startswith(OPTION)]
    if hosts and hosts[-1]:
        _bind_client_server(hosts[-1])

    sys.argv = ["ray", *argv]
    return ray_main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
