"""Batches as bytes for Ray's channels and the driver's recovery log.

Handed a list of command records, Ray's serializer (cloudpickle) calls back into Python for
every record; pickled here by the C pickler, a batch reaches Ray as one ``bytes`` value, and
the recovery log keeps those same bytes. Only Ray's own channels and the driver's memory
carry these pickles: sharded's sockets carry :mod:`.net.codec` data.
"""

from __future__ import annotations

import pickle

from .commands import LayoutCmds, from_fields


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
    [Free(keys=(1, 2)), Trace(on=True)]
    """
    return [from_fields(*t) for t in pickle.loads(data)]


class BatchPacker:
    """Packs the batches a flush sends through Ray (:func:`dump_batch`): the layout
    commands all of a flush's batches share (their head :class:`LayoutCmds`) once for all
    of them, and the last batch packed is kept for the recovery log, which logs the same
    bytes instead of pickling the batch again.

    Examples
    --------
    >>> from sharded.runtime.commands import Free, GroupFree, Mod
    >>> pk = BatchPacker()
    >>> batch = [LayoutCmds(None, [GroupFree(Mod(1, 2), 10)]), Free((1,))]
    >>> data = pk.pack(batch)
    >>> pk.packed(batch) is data  # (the recovery log takes the same bytes)
    True
    >>> head, free = load_batch(data)
    >>> load_batch(head.cmds), free
    ([GroupFree(desc=Mod(m=1, n=2), start=10)], Free(keys=(1,)))
    """

    __slots__ = ("_shared", "last")

    def __init__(self):
        self._shared = (None, b"")  # the last shared layout commands packed, and their bytes
        self.last = (None, None)  # the last batch packed (the list itself), and its bytes

    def pack(self, cmds) -> bytes:
        """``cmds`` as bytes (raises as :func:`dump_batch` does)."""
        head = cmds[0] if cmds else None
        out = cmds
        if type(head) is LayoutCmds and type(head.cmds) is list:
            if self._shared[0] is not head.cmds:
                self._shared = (head.cmds, dump_batch(head.cmds))
            out = [LayoutCmds.make((None, self._shared[1])), *cmds[1:]]
        data = dump_batch(out)
        self.last = (cmds, data)
        return data

    def packed(self, cmds) -> bytes:
        """The bytes of ``cmds``: those of the last :meth:`pack` if it packed this very
        list, else packed now."""
        last, data = self.last
        return data if last is cmds else self.pack(cmds)
