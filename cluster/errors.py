"""Typed errors of the cluster helpers; messages name the values involved."""

from __future__ import annotations


class ClusterError(RuntimeError):
    """A Ray node could not be started, reached or stopped."""


class RayStartError(ClusterError):
    """``ray start`` exited before its node joined the cluster."""


class NodesNotReady(ClusterError, TimeoutError):
    """Fewer Ray nodes than expected registered before the timeout.

    Attributes ``address``, ``expected``, ``arrived``, ``timeout`` (and ``ip``, when a node of
    that address was awaited) carry the values named in the message, so launchers can report or
    retry without parsing text.
    """

    def __init__(
        self,
        address: str,
        expected: int,
        arrived: int,
        timeout: float,
        why: str = "",
        ip: str | None = None,
    ):
        self.address, self.expected, self.arrived = address, expected, arrived
        self.timeout, self.why, self.ip = timeout, why, ip
        if ip is not None and arrived >= expected:
            msg = (
                f"no node with IP {ip} among the {arrived} Ray nodes registered at {address} "
                f"within {timeout:g} s"
            )
        else:
            msg = (
                f"only {arrived} of {expected} Ray nodes registered at {address} "
                f"within {timeout:g} s"
            )
        super().__init__(msg + (f": {why}" if why else ""))
