"""Token authentication for the clusters ``python -m cluster.ray_cluster`` starts.

Ray (2.60, as installed here) checks a shared secret on every gRPC and HTTP request to its GCS,
raylets, Ray Client server and dashboard when ``RAY_AUTH_MODE=token``; each process finds the
token in ``RAY_AUTH_TOKEN``, else the file named by ``RAY_AUTH_TOKEN_PATH``, else
``~/.ray/auth_token``.
Without it, anyone who reaches those ports runs arbitrary code on every node, so the command
line turns it on unless told ``--no-auth``:

* the head creates a token file readable by its user only (mode 0600) when none exists, or a
  fresh one with ``--new-token`` (docker-compose: one token per ``up``);
* workers, clients and ``wait`` read the same file (``--token-file``, default
  :data:`DEFAULT_TOKEN_FILE`), copied to their machine by the user;
* a token already given in the environment (``RAY_AUTH_MODE=token`` with ``RAY_AUTH_TOKEN`` or
  ``RAY_AUTH_TOKEN_PATH``, as the Slurm scripts do per job) is used as it is.

Ray gained token authentication in 2.52 (:data:`MIN_RAY_VERSION`); asking an older Ray for it
is refused with :class:`~cluster.errors.TokenAuthUnsupported` rather than silently running
without.  Only the standard library is needed here (Ray's version is read from its metadata).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from cluster.errors import ClusterError, TokenAuthUnsupported, TokenNotFound

__all__ = [
    "DEFAULT_TOKEN_FILE",
    "AUTH_VARS",
    "new_token",
    "write_token_file",
    "check_token_file",
    "check_ray_supports_tokens",
    "resolve_auth",
    "auth_env",
    "MIN_RAY_VERSION",
]

DEFAULT_TOKEN_FILE = "~/.ray/sharded_auth_token"
MIN_RAY_VERSION = "2.52"  # the first Ray with RAY_AUTH_MODE=token
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def new_token() -> str:
    """A fresh token: 256 random bits as 64 hex digits (what ``ray get-auth-token`` makes).

    Examples
    --------
    >>> len(new_token())
    64
    """
    return secrets.token_hex(32)


def write_token_file(path: str | os.PathLike) -> Path:
    """Write a fresh token to ``path`` atomically, readable and writable by this user only.

    The file is created with mode 0600 from the start (never briefly wider), then renamed
    over any previous one, so a reader sees the old token or the new one, never a part.

    Raises
    ------
    ClusterError
        The file or its directory cannot be written (naming the file and the reason).

    Examples
    --------
    >>> p = write_token_file("/tmp/sharded-doctest-token")  # doctest: +SKIP
    >>> oct(p.stat().st_mode & 0o777)  # doctest: +SKIP
    '0o600'
    """
    path = Path(path).expanduser()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, new_token().encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        # e.g. a directory (a Docker volume made by an older image) this user may not write
        raise ClusterError(f"cannot write token file {path}: {e}") from None
    return path


def check_token_file(path: str | os.PathLike) -> Path:
    """Refuse a token file that is missing, empty, not a regular file or readable by others.

    Raises
    ------
    TokenNotFound
        There is no file at ``path``.
    ClusterError
        Naming the file and what is wrong with it (its mode, for a file others can read: the
        token grants running code on the cluster, as ``ssh`` refuses a readable private key).

    Examples
    --------
    >>> try:
    ...     check_token_file("/nonexistent/token")
    ... except TokenNotFound as e:
    ...     print(e.path)
    /nonexistent/token
    """
    path = Path(path).expanduser()
    try:
        st = path.stat()
    except FileNotFoundError:
        raise TokenNotFound(
            str(path),
            f"no token file at {path}: copy the head's token file here (mode 0600), point "
            "--token-file at it, set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN, or pass --no-auth "
            "if the head runs without authentication",
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise ClusterError(f"token file {path} is not a regular file")
    if st.st_mode & 0o077:
        raise ClusterError(
            f"token file {path} has mode {oct(st.st_mode & 0o777)}: others can read it; "
            f"run `chmod 600 {path}`"
        )
    if st.st_size == 0:
        raise ClusterError(f"token file {path} is empty")
    return path


def _release(version: str) -> tuple[int, ...]:
    """``"2.60.0"`` -> ``(2, 60, 0)``; a pre-release or dev suffix is dropped."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


def check_ray_supports_tokens(version: str | None = None) -> str:
    """Refuse a Ray too old for token authentication; return the version checked.

    Parameters
    ----------
    version : str, optional
        A Ray version to check (default: the installed one, from its package metadata, so Ray
        itself is not imported).

    Raises
    ------
    TokenAuthUnsupported
        The version is older than :data:`MIN_RAY_VERSION`, or Ray is not installed.

    Examples
    --------
    >>> check_ray_supports_tokens("2.60.0")
    '2.60.0'
    >>> try:
    ...     check_ray_supports_tokens("2.40.0")
    ... except TokenAuthUnsupported as e:
    ...     print(e.version, e.minimum)
    2.40.0 2.52
    """
    if version is None:
        try:
            version = metadata.version("ray")
        except metadata.PackageNotFoundError:
            raise TokenAuthUnsupported(None, MIN_RAY_VERSION) from None
    if _release(version) < _release(MIN_RAY_VERSION):
        raise TokenAuthUnsupported(version, MIN_RAY_VERSION)
    return version


def resolve_auth(
    env: Mapping[str, str],
    *,
    no_auth: bool = False,
    token_file: str | None = None,
    create: bool = False,
    new: bool = False,
    required: bool = True,
) -> tuple[dict[str, str | None], str]:
    """Decide the ``RAY_AUTH_*`` variables of a node or driver, and say where the token is.

    Parameters
    ----------
    env : mapping
        The environment as given (the user's ``RAY_AUTH_*`` choices win).
    no_auth : bool
        ``--no-auth``: run without token authentication.
    token_file : str, optional
        Token file (default :data:`DEFAULT_TOKEN_FILE`).
    create : bool
        Create the file when missing (the head); ``new`` replaces it with a fresh token.
    required : bool
        False for read-only helpers (``wait``): without a token file, leave the environment.

    Returns
    -------
    (dict, str)
        Variables to set (``None``: remove) and a one-line description of the token's source.

    Raises
    ------
    TokenNotFound
        No token file where one is needed (``create`` false, no token in ``env``).
    TokenAuthUnsupported
        Token authentication is the answer but the installed Ray is older than 2.52.
    ClusterError
        ``RAY_AUTH_MODE=disabled`` without ``--no-auth``, or an unusable token file.

    Examples
    --------
    >>> resolve_auth({}, no_auth=True)[0]["RAY_AUTH_MODE"]
    'disabled'
    >>> resolve_auth({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "x" * 64})[1]
    'the token in RAY_AUTH_TOKEN'
    """
    off = {"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": None, "RAY_AUTH_TOKEN_PATH": None}
    if no_auth:
        return off, "no token (--no-auth)"
    mode = env.get("RAY_AUTH_MODE", "").strip().lower()
    if mode == "disabled" and required:
        raise ClusterError(
            "RAY_AUTH_MODE=disabled is set in the environment: pass --no-auth (or "
            "SHARDED_RAY_NO_AUTH=1; no_auth=True from Python) to run without token authentication"
        )
    if mode and mode not in ("disabled", "token"):
        raise ClusterError(f"RAY_AUTH_MODE={env['RAY_AUTH_MODE']!r} is neither token nor disabled")
    if mode == "disabled":
        return {}, "no token (RAY_AUTH_MODE=disabled)"
    if mode == "token" and env.get("RAY_AUTH_TOKEN"):
        check_ray_supports_tokens()
        return {}, "the token in RAY_AUTH_TOKEN"
    if mode == "token" and env.get("RAY_AUTH_TOKEN_PATH"):
        check_ray_supports_tokens()
        path = check_token_file(env["RAY_AUTH_TOKEN_PATH"])
        return {}, f"the token file {path} (RAY_AUTH_TOKEN_PATH)"
    path = Path(token_file or DEFAULT_TOKEN_FILE).expanduser().absolute()
    if not required and not path.exists():
        return {}, "no token file"
    check_ray_supports_tokens()  # before a token file is made for a Ray that cannot use it
    if new or (create and not path.exists()):
        write_token_file(path)
    check_token_file(path)
    on = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": None, "RAY_AUTH_TOKEN_PATH": str(path)}
    return on, f"the token file {path}"


def auth_env(env: Mapping[str, str], **resolve) -> tuple[dict[str, str], str]:
    """``env`` with its ``RAY_AUTH_*`` variables decided by :func:`resolve_auth`.

    Keyword arguments are those of :func:`resolve_auth`; returns the new environment (a copy)
    and where the token comes from.

    Examples
    --------
    >>> auth_env({"PATH": "/bin", "RAY_AUTH_TOKEN": "x"}, no_auth=True)[0]
    {'PATH': '/bin', 'RAY_AUTH_MODE': 'disabled'}
    """
    updates, source = resolve_auth(env, **resolve)
    out = dict(env)
    for key, value in updates.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out, source
