"""Facts about this machine that a Ray node needs, and stopping Ray processes on it.

Split from :mod:`cluster.ray_cluster` (which re-exports everything here) to keep files short.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from cluster.errors import ClusterError, UnsafePath

DEFAULT_STOP_TIMEOUT = 30.0


def detect_num_gpus(env: Mapping[str, str] | None = None) -> int:
    """Count the GPUs this node may use.

    ``CUDA_VISIBLE_DEVICES`` wins when set, because Slurm (``--gres=gpu:N``) and container
    runtimes restrict a job through it; otherwise the GPUs listed by ``nvidia-smi -L``; else 0.

    Examples
    --------
    >>> detect_num_gpus({"CUDA_VISIBLE_DEVICES": "0,1"})
    2
    >>> detect_num_gpus({"CUDA_VISIBLE_DEVICES": ""})
    0
    """
    env = os.environ if env is None else env
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        # "-1" and "NoDevFiles" are how CUDA and Slurm spell "no GPU".
        if not ids or ids[0].startswith("-1") or ids[0] == "NoDevFiles":
            return 0
        return len(ids)
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0  # no driver, no tool, or a hung GPU: a CPU node
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def _interface_ip(interface: str) -> str:
    import fcntl
    import struct

    siocgifaddr = 0x8915  # Linux ioctl: an interface's IPv4 address, no iproute2 needed
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            request = struct.pack("256s", interface[:15].encode())
            packed = fcntl.ioctl(s.fileno(), siocgifaddr, request)
        except OSError as e:
            raise ClusterError(f"interface {interface!r} has no IPv4 address: {e}") from e
    return socket.inet_ntoa(packed[20:24])


def node_ip(interface: str | None = None, towards: str | None = None) -> str:
    """The IP address other Ray nodes should use to reach this one.

    Parameters
    ----------
    interface : str, optional
        Take the IPv4 address of this network interface (e.g. ``ib0`` for InfiniBand).
    towards : str, optional
        ``host`` or ``host:port`` of a peer (the head); the address of the interface that routes
        there is returned.  Default: the interface of the default route.

    Raises
    ------
    ClusterError
        Only a loopback address was found, which no other node could reach.

    Examples
    --------
    >>> node_ip(towards="127.0.0.1")
    '127.0.0.1'
    """
    if interface:
        return _interface_ip(interface)
    host = towards.rsplit(":", 1)[0] if towards else "192.0.2.1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            # A UDP connect sends nothing; it only asks the kernel which source address routes
            # to `host`.  192.0.2.1 (TEST-NET) stands for "anywhere" via the default route.
            s.connect((host, 9))
            ip = s.getsockname()[0]
        except OSError as e:
            raise ClusterError(
                f"no route to {host} to pick this node's IP; pass --node-ip-address or "
                f"--interface ({e})"
            ) from e
    if ip.startswith("127.") and not host.startswith("127."):
        raise ClusterError(
            f"only loopback address {ip} found towards {host}; pass --node-ip-address or "
            "--interface"
        )
    return ip


def _ray_processes(temp_dir: str) -> list[int]:
    """Pids of the Ray processes using ``temp_dir``, and all their descendants."""
    root = os.path.abspath(temp_dir).encode()
    cmdlines, children = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdlines[int(entry.name)] = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile, or not ours to read
        children.setdefault(ppid, []).append(int(entry.name))
    # Daemons name their session dir (TEMP_DIR[/NODE]/ray/session_...); the `ray start
    # --block` parent (`ray.scripts.scripts` or `cluster._ray_start`) names the temp dir.  Not
    # a launcher (a batch script, srun) whose arguments merely mention the directory.
    found = [
        pid
        for pid, cmd in cmdlines.items()
        if (root + b"/" in cmd or root + b"\0" in cmd)
        and (b"/session_" in cmd or b"ray.scripts.scripts" in cmd or b"cluster._ray_start" in cmd)
    ]
    # Worker processes rename themselves ("ray::IDLE"): reach them as descendants.
    todo, seen = list(found), set(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    seen.discard(os.getpid())
    return sorted(seen)


def stop_temp_dir(temp_dir: str, timeout: float = DEFAULT_STOP_TIMEOUT) -> int:
    """Stop the Ray processes on this machine that use ``temp_dir`` (and their children).

    The ``ray start --block`` parents get SIGTERM first (they stop their node cleanly), whatever
    is left after ``timeout`` seconds gets SIGKILL.  Returns how many processes were found.
    Scoping by temp dir leaves other Ray clusters on a shared node alone.

    Examples
    --------
    >>> stop_temp_dir("/tmp/sharded-ray-1234")  # doctest: +SKIP
    0
    """
    first = _ray_processes(temp_dir)
    for pid in first:
        _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _ray_processes(temp_dir) and time.monotonic() < deadline:
        time.sleep(0.25)
    for pid in _ray_processes(temp_dir):
        _kill(pid, signal.SIGKILL)
    return len(first)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass  # already gone


def _check_ancestor(path: Path) -> None:
    """Refuse a directory above a private one that another user could rename things in."""
    st = os.lstat(path)
    if st.st_uid not in (0, os.geteuid()):
        raise UnsafePath(
            str(path), f"it is owned by uid {st.st_uid}, who could replace what is in it"
        )
    # World-writable is fine only with the sticky bit (/tmp): then only an entry's owner may
    # rename or delete it.  A symlink's own mode means nothing.
    if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX:
        raise UnsafePath(
            str(path), f"it has mode {oct(st.st_mode & 0o7777)}: anyone may replace what is in it"
        )


def private_dir(path: str | os.PathLike) -> Path:
    """Make ``path`` a directory only this user can enter, or check that it already is one.

    Missing directories are created with mode 0700 (never briefly wider).  An existing
    ``path`` must be a real directory (not a symlink), owned by this user, with no permission
    for group or others; every directory above it must belong to this user or root and be
    writable by others only with the sticky bit (as /tmp), so nobody else can swap ``path``
    for another directory later.  Ray's session files (its sockets among them) and launch logs
    live in such directories: on a shared machine another user who could write there could
    plant symlinks, read logs or replace sockets.

    Returns
    -------
    Path
        The absolute path.

    Raises
    ------
    UnsafePath
        Naming the offending directory and its owner or mode; the directory is left as it is.

    Examples
    --------
    >>> import tempfile
    >>> d = private_dir(tempfile.mkdtemp() + "/a/b")
    >>> oct(d.stat().st_mode & 0o777), oct(d.parent.stat().st_mode & 0o777)
    ('0o700', '0o700')
    """
    path = Path(path).expanduser().absolute()
    missing = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        probe = probe.parent
    # The directories above, as named and as they really are, checked before anything is made
    # in them (those made below are this user's, mode 0700).
    existing = probe.parent if probe == path else probe
    real = Path(os.path.realpath(existing))
    for above in [*reversed(existing.parents), existing, *reversed(real.parents), real]:
        _check_ancestor(above)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
            os.chmod(directory, 0o700)  # exactly: a strict umask may have taken the owner's bits
        except FileExistsError:
            pass  # made meanwhile by someone: checked below like any existing directory
        except OSError as e:
            raise ClusterError(f"cannot create directory {directory}: {e}") from None
    for above in missing[1:]:
        _check_ancestor(above)  # made meanwhile by someone else?
    st = os.lstat(path)
    me = os.geteuid()
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(str(path), "it is a symlink; give the real directory")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(str(path), "it is not a directory")
    if st.st_uid != me:
        raise UnsafePath(str(path), f"it is owned by uid {st.st_uid}, not by this user (uid {me})")
    if st.st_mode & 0o077:
        raise UnsafePath(
            str(path),
            f"it has mode {oct(st.st_mode & 0o777)}: group or others may use it "
            f"(`chmod 700 {path}`, or name a new directory)",
        )
    return path


def open_private_log(path: str | os.PathLike):
    """Create the log file ``path`` (mode 0600) and return it open for writing, binary.

    The file must not exist yet: ``O_EXCL|O_NOFOLLOW`` make the kernel refuse a file or
    symlink placed there beforehand instead of writing through it.  Put logs in a
    :func:`private_dir`, where nobody else can place anything.

    Raises
    ------
    UnsafePath
        Something (a file, a symlink) already is at ``path``.

    Examples
    --------
    >>> import tempfile
    >>> with open_private_log(tempfile.mkdtemp() + "/head.log") as log:
    ...     _ = log.write(b"ray start ...")
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        what = "a symlink" if os.path.islink(path) else "a file"
        raise UnsafePath(
            str(path), f"{what} is already there; a launch log is always a new file"
        ) from None
    return os.fdopen(fd, "wb")
