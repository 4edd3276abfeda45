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

The log (:mod:`.recovery`) keeps the Ray form of both batches: the post as a plain
``Export``, each ``Mail`` operand as a ``Ref`` to that export, so a replay (through Ray,
in the log's order, the exporter's batch first) needs no mailbox. A posted value is taken
once: a second command of the same taker that uses the same handle takes the export's
value from the driver instead (it waits for it, as without posts).

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
            if p.to == w and not p.taken:
                p.taken = True
                ex._mailrefs.setdefault(w, {})[p.tag] = p.handle
                ex._mailq.add(w)
                ex.posts_taken += 1
                a = Mail.make((p.tag, ex.timeout))
            else:
                a = Transfer.make((p.handle,))
        out.append(a)
    return tuple(out)


def logged_form(cmds, refs, handles) -> tuple:
    """``(cmds, refs)`` as the log keeps them: posts as exports, each Mail operand a Ref to
    its export (``handles``: tag -> the export's handle, each used taken out) appended to
    ``refs``."""
    out, refs = [], list(refs)
    for c in cmds:
        kind = type(c)
        if kind is Post:
            c = Export.make((c.key, c.slices))
        elif kind is Kernel and any(type(a) is Mail for a in c.args):
            args = []
            for a in c.args:
                if type(a) is Mail:
                    refs.append(handles.pop(a.tag))
                    a = Ref.make((len(refs) - 1,))
                args.append(a)
            c = c._replace(args=tuple(args))
        out.append(c)
    return out, refs
