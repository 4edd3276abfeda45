"""Batches as bytes for Ray's channels and the driver's recovery log.

Handed a list of command records, Ray's serializer (cloudpickle) calls back into Python for
every record; pickled here by the C pickler, a batch reaches Ray as one ``bytes`` value, and
the recovery log keeps those same bytes. Only Ray's own channels and the driver's memory
carry these pickles: sharded's sockets carry :mod:`.net.codec` data.
"""

from __future__ import annotations

import pickle

from .commands import LayoutCmds, from_fields
from .net import codec


def dump_batch(cmds) -> bytes:
    """A batch as the bytes a Ray call carries and the recovery log keeps: each command as
    ``(TAG, *fields)``, pickled by the C pickler. Handed records, Ray's serializer
    (cloudpickle) calls back into Python for every one of them: measured on one op's
    elementwise command in a 50-op batch, 2.8 us against 0.9 us here.
    Raises (``pickle.PicklingError``, ``AttributeError``, ``TypeError``) for a command
    that only cloudpickle can carry (a Python function in it)."""
    return pickle.dumps([(c.TAG,) + c for c in cmds], 5)


def load_batch(data) -> list:
    """The batch :func:`dump_batch` made ``data`` of.

    Examples
    --------
    >>> from sharded.runtime.commands import Free, Trace
    >>> load_batch(dump_batch([Free((1, 2)), Trace(True)]))
    [Free(keys=(1, 2)), Trace(on=True, received=False)]
    """
    return [from_fields(*t) for t in pickle.loads(data)]


class BatchPacker:
    """Packs the batches a flush sends through Ray (:func:`dump_batch`) and keeps the one
    encoding of the layout commands all of a flush's batches share (their head
    :class:`LayoutCmds`): the driver's wire (:mod:`.net.wire`) asks it for them as codec
    data (:meth:`shared_data`), a Ray batch takes that same encoding when the wire made
    one (the worker decodes it as it would a frame's) and pickles them once otherwise. The
    last batch packed is kept for the recovery log, which logs the same bytes instead of
    pickling the batch again.

    Examples
    --------
    >>> from sharded.runtime.commands import Free, GroupFree, Mod
    >>> pk = BatchPacker()
    >>> batch = [LayoutCmds(None, [GroupFree(Mod(1, 2), 10)]), Free((1,))]
    >>> data = pk.pack(batch)
    >>> pk.packed(batch) is data  # (the recovery log takes the same bytes)
    True
    >>> head, free = load_batch(data)
    >>> shared_layout(head.cmds), free
    ([GroupFree(desc=Mod(m=1, n=2), start=10)], Free(keys=(1,)))
    """

    __slots__ = ("_cmds", "_pickled", "_data", "last")

    def __init__(self):
        self._cmds = None  # the last shared layout commands seen (the list itself) ...
        self._pickled = self._data = None  # ... pickled, and as codec data (an Encoded)
        self.last = (None, None)  # the last batch packed (the list itself), and its bytes

    def _see(self, cmds) -> None:
        if self._cmds is not cmds:
            self._cmds, self._pickled, self._data = cmds, None, None

    def shared_data(self, cmds):
        """The shared layout commands ``cmds`` as codec data (:func:`.net.codec.encode_once`),
        encoded once per flush; None when they are not data or hold a large array."""
        self._see(cmds)
        if self._data is None:
            self._data = codec.encode_once(cmds) or False
        return self._data or None

    def pack(self, cmds) -> bytes:
        """``cmds`` as bytes (raises as :func:`dump_batch` does)."""
        head = cmds[0] if cmds else None
        out = cmds
        if type(head) is LayoutCmds and type(head.cmds) is list:
            self._see(head.cmds)
            shared = self._data or self._pickled
            if shared is None:
                shared = self._pickled = dump_batch(head.cmds)
            out = [LayoutCmds.make((None, shared)), *cmds[1:]]
        data = dump_batch(out)
        self.last = (cmds, data)
        return data

    def packed(self, cmds) -> bytes:
        """The bytes of ``cmds``: those of the last :meth:`pack` if it packed this very
        list, else packed now."""
        last, data = self.last
        return data if last is cmds else self.pack(cmds)


def from_socket_ok(cmds) -> bool:
    """Whether a batch that came off a socket is records only: a list whose shared layout
    commands are a list or codec data, never the pickled bytes that only Ray's channels and
    the driver's memory carry (:func:`shared_layout` would unpickle them).

    Examples
    --------
    >>> from_socket_ok([LayoutCmds(None, [])]), from_socket_ok([LayoutCmds(None, b"x")])
    (True, False)
    >>> from_socket_ok(b"a pickle")
    False
    """
    if type(cmds) is not list:
        return False
    return not any(type(c) is LayoutCmds and type(c.cmds) is bytes for c in cmds)


def shared_layout(layout) -> list:
    """A batch's shared layout commands as records, however :class:`BatchPacker` packed
    them: pickled (bytes), as codec data (an Encoded), or not at all (a list)."""
    if type(layout) is bytes:
        return load_batch(layout)
    if type(layout) is codec.Encoded:
        return codec.decode(layout.body)
    return layout
