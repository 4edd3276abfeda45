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


class TokenNotFound(ClusterError):
    """Token authentication is on but no token is known: no token file where one was expected.

    ``path`` is the token file that was looked for.
    """

    def __init__(self, path: str, message: str):
        self.path = path
        super().__init__(message)


class TokenAuthUnsupported(ClusterError):
    """Token authentication was asked of a Ray that lacks it (``RAY_AUTH_MODE=token`` came in
    Ray ``minimum``; ``version`` is the one installed, or ``None`` when Ray is missing)."""

    def __init__(self, version: str | None, minimum: str):
        self.version, self.minimum = version, minimum
        have = f"Ray {version} is installed" if version else "Ray is not installed"
        super().__init__(
            f"token authentication needs ray>={minimum}, but {have}: upgrade it "
            f'(pip install "ray[default]>={minimum}") or pass --no-auth (no_auth=True) to run '
            "without authentication"
        )


class UnsafePath(ClusterError):
    """A directory or file a launcher writes to could be changed by another user.

    ``path`` names it and ``why`` says what is wrong (its owner, its mode, a symlink).
    """

    def __init__(self, path: str, why: str):
        self.path, self.why = path, why
        super().__init__(f"refusing {path}: {why}")
