"""Devices of shards: which workers hold ``cpu``/``cuda``/``cuda:N`` data, and moving there.

A worker has one device. ``device="cpu"`` picks the CPU workers, ``"cuda"`` every GPU worker
(shards spread over all GPUs), ``"cuda:N"`` the GPU worker labelled N. A tensor may hold CPU
and GPU shards at once (give ``layout=st.Layout(workers=...)`` explicitly, or move part of
it); elementwise ops and reductions then run where each shard lives. Moving between devices
goes worker to worker through host memory (a GPU worker copies its block to the host, the
receiver copies it onto its own device).
"""

from __future__ import annotations

from .backend import parse_device
from .errors import ArgumentTypeError, BackendUnavailable


class device(str):  # torch's lower-case name
    """A device, as ``torch.device``: ``device("cpu")``, ``device("cuda:1")``,
    ``device("cuda", 1)``; ``.type``, ``.index``, ``repr`` ``device(type='cpu')``, ``str``
    ``'cpu'``. It is also the string it prints as, so it compares equal to ``"cpu"``.

    Examples
    --------
    >>> import sharded as st
    >>> st.device("cpu"), str(st.device("cuda", 1)), st.device("cuda:1").index
    (device(type='cpu'), 'cuda:1', 1)
    """

    def __new__(cls, type, index=None):  # type: torch's keyword name
        if isinstance(type, device) and index is None:
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type  # torch.device(1) is cuda:1
        if not isinstance(type, str):
            raise ArgumentTypeError(f"device() expects a string or an int, got {type!r}")
        kind, sep, num = type.partition(":")
        if sep:
            if index is not None or not num.isdigit():
                raise BackendUnavailable(f"invalid device string {type!r} (index {index!r})")
            index = int(num)
        if kind not in ("cpu", "cuda"):
            raise BackendUnavailable(f"unknown device type {kind!r}; expected 'cpu' or 'cuda'")
        if index is not None and (isinstance(index, bool) or int(index) < 0):
            raise BackendUnavailable(f"device index must be a non-negative int, got {index!r}")
        obj = super().__new__(cls, kind if index is None else f"{kind}:{int(index)}")
        obj._kind, obj._index = kind, None if index is None else int(index)
        return obj

    def __getnewargs__(self):
        return (str(self),)

    @property
    def type(self) -> str:
        return self._kind

    @property
    def index(self):  # torch's attribute; str.index is not needed on a device
        return self._index

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._kind}')"
        return f"device(type='{self._kind}', index={self._index})"

    __hash__ = str.__hash__


def get_default_device() -> device:
    """The device creation functions use without ``device=``: always the CPU workers here.

    Examples
    --------
    >>> import sharded as st
    >>> st.get_default_device()
    device(type='cpu')
    """
    return device("cpu")


def matches(worker_device: str, device: str) -> bool:
    """Whether a worker on ``worker_device`` serves a request for ``device``."""
    if device == "cuda":
        return worker_device.startswith("cuda")
    return worker_device == device


def normalize(device) -> str:
    """``"cpu"``, ``"cuda"`` (any GPU) or ``"cuda:N"``."""
    d = str(device)
    return "cuda" if d == "cuda" else parse_device(d)


def workers_for(ex, device) -> list:
    """Indices of the workers serving ``device``; :class:`BackendUnavailable` if none."""
    dev = normalize(device)
    ids = [w.index for w in ex.workers if matches(w.device, dev)]
    if not ids:
        have = sorted({w.device for w in ex.workers})
        why = (
            "no GPU worker exists in this session (start one on a node with a GPU, or "
            "st.init(executor='local', devices=[...]) where CuPy sees a GPU)"
            if dev.startswith("cuda")
            else "every worker is a GPU worker"
        )
        raise BackendUnavailable(
            f"device {dev!r} is not available: {why}; this session's "
            f"workers are on {', '.join(have)}"
        )
    return ids
