"""Small exports sent worker to worker: the driver starts the exporting batch and the taking
one without waiting for the value in between.

Without this, a small export another worker takes (the other half of a matrix-vector
product's vector, a halo) goes to the driver by its wire and comes back inline in the
taker's command: the driver waits one round trip per product, which an iterative solver
pays every iteration. When the caller names the taker (``(key, slices, nbytes, to)`` in
:meth:`.executor.Executor.export`'s requests) and the workers have mailboxes
(:mod:`..net.mailbox`), the exporting worker runs a :class:`~..commands.Post` instead: it
returns the value as an export, as before, and also sends it to the taker's mailbox, where
the taker's command takes it (a :class:`~..commands.Mail` operand).

Posts and takes travel only in batches that go by the driver's wire: a wire wait sees a
lost worker at once (its connection ends) and aborts every take waiting for its posts,
where a worker lost under a Ray batch is seen only by a wait for that batch. A batch that
goes through Ray after all (it takes Ray references) exports instead of posting, and takes
posted values inline, as without posts (:func:`settle`). The log (:mod:`.recovery`)
keeps the Ray form of both batches: the post as a plain ``Export``, each ``Mail`` operand
as a ``Ref`` to that export, so a replay (through Ray, in the log's order, the exporter's
batch first) needs no mailbox. A posted value is taken once: a second command of the same
taker that uses the same handle takes the export's value from the driver instead (it waits
for it, as without posts).

Examples
--------
>>> from sharded.runtime.commands import Key, Kernel, Mail, MailTag, Post, Ref
>>> tag = MailTag("c", 3, -1, 0, 1)
>>> cmds = [Post(7, None, (0,), tag), Kernel("neg", (Mail(tag, 5.0),), (8,), {}, None, False)]
>>> logged_form(cmds, [], {tag: "handle"})
([Export(key=7, slices=None), Kernel(kernel='neg', args=(Ref(index=0),), outs=(8,), \
params={}, label=None, inplace=False)], ['handle'])
"""

from __future__ import annotations

import os

from ..commands import TRANSFER, Export, Kernel, Mail, MailTag, Post, Ref, Transfer

ENABLED = os.environ.get("SHARDED_POSTS", "1") != "0"  # (0: every export via the driver)


class Posted:
    """The handle of an export posted to worker ``to`` under ``tag``; ``handle``: the
    export's own (its value, for the log and for any other use)."""

    __slots__ = ("handle", "to", "tag", "taken")

    def __init__(self, handle, to: int, tag):
        self.handle, self.to, self.tag, self.taken = handle, to, tag, False


def commands(ex, w: int, items) -> tuple:
    """Worker ``w``'s commands for export items ``(key, slices[, to])``, and per item the
    ``(to, tag)`` of its post or None: an item posts when it names a taker other than
    ``w`` and the session's mailboxes carry worker-to-worker data (not while ``st.jit``
    traces: a recorded program replays its exports itself; not with ``SHARDED_POSTS=0``)."""
    post = ENABLED and ex._mail and ex.recorder is None and any(len(it) > 2 for it in items)
    if post:
        ex._shipno += 1  # (the tags of one call: aborted with the shipments up to it)
    cmds, posts = [], []
    for i, it in enumerate(items):
        to = it[2] if post and len(it) > 2 else None
        if to is None or to == w:
            cmds.append(Export.make(it[:2]))
            posts.append(None)
            continue
        tag = MailTag(ex.client, ex._shipno, TRANSFER, i, w)
        cmds.append(Post.make((it[0], it[1], (to,), tag)))
        posts.append((to, tag))
    return cmds, posts


def by_mail(ex, w: int, args) -> tuple:
    """A command's operands for worker ``w``: a transfer posted to ``w`` and not taken yet
    becomes a :class:`Mail` operand (its export's handle remembered for the log); any other
    posted transfer is its plain export."""
    out = []
    for a in args:
        if type(a) is Transfer and type(a.handle) is Posted:
            p = a.handle
            if p.to == w and not p.taken and p.tag.ship > ex._aborted_ship:
                p.taken = True
                ex._mailrefs.setdefault(w, {})[p.tag] = p.handle
                ex._mailq.add(w)
                ex._posts_out = True
                ex.posts_taken += 1
                a = Mail.make((p.tag, ex.timeout))
            else:
                a = Transfer.make((p.handle,))
        out.append(a)
    return tuple(out)


def settle(ex, w: int, cmds, refs, logged, by_wire: bool) -> tuple:
    """Worker ``w``'s batch that posts or takes posted values, as it is dispatched and as
    the log keeps it: ``(cmds, refs, logged)``. Posts and takes travel only in batches that
    go by the driver's wire, whose waits see a lost worker at once (and abort the takes
    that wait for its posts); a batch that goes through Ray exports instead of posting and
    takes the values inline (waiting for them here)."""
    handles = ex._mailrefs.get(w, {})
    used: set = set()
    log = logged_form(*(logged or (cmds, refs)), handles, used)
    refs = list(refs)
    if by_wire:  # (takes of posts a lost worker's abort dropped: from their exports)
        cmds = [_inline(ex, c, handles, refs, ex._aborted_ship) for c in cmds]
        by_wire = not refs  # (a replayed export is a Ray reference: through Ray after all)
    if by_wire:
        ex._posts_sent.update(c.tag for c in cmds if type(c) is Post)
    else:
        cmds = [_inline(ex, c, handles, refs) for c in ray_form(cmds)]
    for t in used:
        handles.pop(t, None)
    if not handles:
        ex._mailrefs.pop(w, None)
        ex._mailq.discard(w)
    return cmds, refs, log


def ray_form(cmds) -> list:
    """``cmds`` with every post a plain export."""
    return [Export.make((c.key, c.slices)) if type(c) is Post else c for c in cmds]


def _inline(ex, c, handles, refs, stale=None):
    """Kernel ``c`` with its Mail operands (those of shipments up to ``stale``, if given)
    taken from their exports instead: inline (a value that came by the wire) or as a Ref
    appended to ``refs`` (the batch then goes through Ray: a replay's export)."""
    if type(c) is not Kernel or not any(
        type(a) is Mail and (stale is None or a.tag.ship <= stale) for a in c.args
    ):
        return c
    rec = ex._rec
    args = []
    for a in c.args:
        if type(a) is Mail and (stale is None or a.tag.ship <= stale):
            h = handles[a.tag]
            a = Transfer.make((rec.translate([h])[0] if rec is not None and rec.remap else h,))
        args.append(a)
    args = [
        Ref.make((_append(refs, a.handle),)) if type(a) is Transfer else a
        for a in ex._inline(tuple(args))
    ]
    return c._replace(args=tuple(args))


def _append(lst, v) -> int:
    lst.append(v)
    return len(lst) - 1


def logged_form(cmds, refs, handles, used=None) -> tuple:
    """``(cmds, refs)`` as the log keeps them: posts as exports, each Mail operand a Ref to
    its export (``handles``: tag -> the export's handle; ``used`` collects the tags)
    appended to ``refs``."""
    out, refs = [], list(refs)
    for c in ray_form(cmds):
        if type(c) is Kernel and any(type(a) is Mail for a in c.args):
            args = []
            for a in c.args:
                if type(a) is Mail:
                    refs.append(handles[a.tag])
                    if used is not None:
                        used.add(a.tag)
                    a = Ref.make((len(refs) - 1,))
                args.append(a)
            c = c._replace(args=tuple(args))
        out.append(c)
    return out, refs
