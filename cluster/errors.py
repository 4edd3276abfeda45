"""Typed errors of the cluster helpers; messages name the values involved."""

from __future__ import annotations


class ClusterError(RuntimeError):
    """A Ray node could not be started, reached or stopped."""


class RayStartError(ClusterError):
    """``ray start`` exited before its node joined the cluster."""


class NodesNotReady(ClusterError, TimeoutError):
    """Fewer Ray nodes than expected registered before the timeout.

    Attributes ``address``, ``expected``, ``arrived`` and ``timeout`` carry the values named in
    the message, so launchers can report or retry without parsing text.
    """

    def __init__(self, address: str, expected: int, arrived: int, timeout: float, why: str = ""):
        self.address, self.expected, self.arrived = address, expected, arrived
        self.timeout = timeout
        self.why = why
        msg = (
            f"only {arrived} of {expected} Ray nodes registered at {address} "
            f"within {timeout:g} s"
        )
        super().__init__(msg + (f": {why}" if why else ""))
