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

**Riding along.** A post need not go in a batch of its own: when the exporting worker's queue
holds nothing but frees (and the trees queued are none), :func:`defer` queues the posts there
and returns their handles at once, to be filled when that queue ships (:class:`Posted` with
no ``handle`` yet). The takers' commands are queued meanwhile, so a matrix-vector product
whose vector is split is one batch per worker, each posting its piece first and then taking
the others' pieces: one send per worker and no Ray call. Such a batch is logged as two: its
commands up to the posts (an export batch, as a post of its own would have been) and the rest;
every export batch of a shipment is logged before the rest of any batch (:func:`record`), so
that a replay through Ray finds the exports made before the refs that name them. A shipment
that cannot go by the wire whole sends each such export batch first
(:func:`first_through_ray`).

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

from ..commands import (
    TRANSFER,
    Export,
    Free,
    Kernel,
    LayoutCmds,
    LayoutSync,
    Mail,
    MailTag,
    Post,
    Ref,
    Transfer,
    TreeMail,
    TreeRefs,
)

ENABLED = os.environ.get("SHARDED_POSTS", "1") != "0"  # (0: every export via the driver)
# (0: every post in a batch of its own, sent at the export, as before riding along)
RIDE = os.environ.get("SHARDED_POSTS_RIDE", "1") != "0"


class Posted:
    """The handle of an export posted to worker ``to`` under ``tag``; ``handle``: the
    export's own (its value, for the log and for any other use), None while the post waits
    in worker ``src``'s queue (:func:`defer`)."""

    __slots__ = ("handle", "to", "tag", "taken", "src")

    def __init__(self, handle, to: int, tag, src=None):
        self.handle, self.to, self.tag, self.taken, self.src = handle, to, tag, False, src


class Pending:
    """Posts waiting in a worker's queue: the handles, where they end in the queue and how
    many layout commands of the flush run before them."""

    __slots__ = ("posted", "end", "nbc")

    def __init__(self, posted, end: int, nbc: int):
        self.posted, self.end, self.nbc = posted, end, nbc


def defer(ex, w: int, items):
    """Queue the posts of worker ``w``'s export ``items`` (``(key, slices, to)``, each for
    another worker) without sending them: their :class:`Posted` handles, or None when they
    must go now (the caller flushes them as before). They may wait when the batch that will
    carry them can be logged as that export batch followed by the rest: ``w``'s queue holds
    nothing but frees (and posts queued the same way), no refs, and no tree is queued
    (a tree's batches link their partials; see :meth:`.executor.Executor.submit_tree`), and
    no relays (a relay's shipment waits for the wire batches sent before it, which may take
    these posts: they would wait for a shipment that waits for them)."""
    if not (RIDE and ENABLED and ex._mail and ex.recorder is None) or ex._btree or ex._tedges:
        return None
    if getattr(ex, "_relays", None):
        return None
    if ex._refs[w] or any(len(it) < 3 or it[2] == w for it in items):
        return None
    pend = ex._pend.get(w)
    q = ex._queues[w][pend.end if pend is not None else 0 :]  # (after the posts waiting)
    if any(type(c) is not Free and type(c) is not LayoutSync for c in q):
        return None  # (work is queued: its takes may wait for posts of this shipment)
    q = ex._q(w)  # (marked to run after the layout commands queued so far)
    ex._shipno += 1  # (the tags of one call: aborted with the shipments up to it)
    out = []
    for i, it in enumerate(items):
        tag = MailTag(ex.client, ex._shipno, TRANSFER, i, w)
        q.append(Post.make((it[0], it[1], (it[2],), tag)))
        out.append(Posted(None, it[2], tag, w))
    ex._pend[w] = Pending((pend.posted if pend is not None else []) + out, len(q), len(ex._bcast))
    ex._mailq.add(w)
    return out


def split(pend, cmds, shared):
    """A batch that carries waiting posts as two: ``(first, rest)``, each ``(commands,
    layout commands)``; ``cmds`` the batch's own commands (no ``LayoutCmds`` in front),
    ``shared`` its layout commands (or None). The first part ends with the posts, as plain
    exports, and has the layout commands queued before them; the rest has the others, its
    marks (``LayoutSync``) counted from there.

    Examples
    --------
    >>> from sharded.runtime.commands import Free, LayoutSync
    >>> tag = MailTag("c", 1, TRANSFER, 0, 0)
    >>> pend = Pending([Posted(None, 1, tag, 0)], 2, 1)
    >>> cmds = [LayoutSync(1), Post(7, None, (1,), tag), Free((8,)), LayoutSync(3)]
    >>> (first, before), (rest, after) = split(pend, cmds, ["g0", "g1", "g2"])
    >>> first, before
    ([LayoutSync(upto=1), Export(key=7, slices=None)], ['g0'])
    >>> rest, after
    ([Free(keys=(8,)), LayoutSync(upto=2)], ['g1', 'g2'])
    """
    n, end = pend.nbc, pend.end
    h = 0  # (a shipment's tree marks in front: TreeRefs, TreeMail; they go with the rest)
    while h < len(cmds) and type(cmds[h]) in (TreeRefs, TreeMail):
        h += 1
    sh = list(shared or ())
    first = ray_form(cmds[h : h + end])
    rest = [LayoutSync.make((c.upto - n,)) if type(c) is LayoutSync else c for c in cmds[h + end :]]
    return (first, sh[:n] or None), (cmds[:h] + rest, sh[n:] or None)


def with_layout(cmds, shared) -> list:
    """``cmds`` after the ``LayoutCmds`` of ``shared`` (if any)."""
    return cmds if not shared else [LayoutCmds.make((None, shared)), *cmds]


def fill(ex, pend, exports, by_wire: bool) -> list:
    """The waiting posts went (their batch was dispatched): their handles are the batch's
    first exports; returns the others. Posts that did not go by the wire went as plain
    exports (:func:`settle`): no command may take them from a mailbox after this."""
    sent, k = ex._posts_sent, len(pend.posted)
    for p, h in zip(pend.posted, exports[:k]):
        p.handle = h
        if not by_wire or p.tag not in sent:
            p.taken = True
        sent.discard(p.tag)
    return exports[k:]


def first_through_ray(ex, order, taken, shared) -> dict:
    """A shipment that goes through Ray, some of whose queues ``taken`` (worker -> commands,
    refs) carry waiting posts: each such worker's commands up to its posts go now, as a
    batch of plain exports (a taker's batch takes them as refs, which must exist when it is
    sent); ``taken`` keeps the rest. Returns, per such worker, the layout commands its rest
    still runs."""
    per = {}
    for v in order:
        pend = ex._pend.pop(v, None)
        if pend is not None:
            (cmds, sh), (rest, per[v]) = split(pend, taken[v][0], shared)
            fill(ex, pend, ex._flush(v, len(pend.posted), sh, (cmds, [])), False)
            taken[v] = rest, taken[v][1]
    return per


def record_first(rec, w, pend, first, logged, shared) -> list:
    """Log the first part of worker ``w``'s batch that carried waiting posts (``first``,
    from :func:`split`) as a batch of its own; returns the commands of the rest as the log
    keeps them (``logged``: the batch's, without its ``LayoutCmds``)."""
    mine = [p.handle for p in pend.posted]
    rec.record(w, with_layout(*first), [], len(mine), None, mine)
    return with_layout(*split(pend, logged, shared)[1])


def handle(h):
    """The export handle behind ``h`` (a :class:`Posted` or a handle)."""
    return h.handle if type(h) is Posted else h


def record(ex, rec, w, cmds, refs, nexp, errs, exports) -> None:
    """Log a batch whose refs may name posts of this shipment not sent yet: held until the
    shipment ends (:func:`release`), so every export batch is logged before them."""
    if ex._held or any(type(r) is Posted and r.handle is None for r in refs):
        ex._held.append((w, cmds, refs, nexp, errs, exports))
        return
    refs = [handle(r) for r in refs]
    rec.record(w, cmds, rec.translate(refs) if rec.remap and refs else refs, nexp, errs, exports)


def release(ex) -> None:
    """Log the batches :func:`record` held, their posts' handles filled by now."""
    held, ex._held = ex._held, []
    rec = ex._rec
    if rec is None:
        return
    for w, cmds, refs, nexp, errs, exports in held:
        refs = [handle(r) for r in refs]
        rec.record(
            w, cmds, rec.translate(refs) if rec.remap and refs else refs, nexp, errs, exports
        )


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
                ex._mailrefs.setdefault(w, {})[p.tag] = p  # (its handle: filled when it goes)
                ex._mailq.add(w)
                ex._posts_out = True
                ex.posts_taken += 1
                a = Mail.make((p.tag, ex.timeout))
            else:
                if p.handle is None:  # still queued: send it (and what it rides with) now
                    ex._flush(p.src)
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
    if type(c) is not Kernel or not any(_from_export(a, handles, stale) for a in c.args):
        return c
    rec = ex._rec
    args = []
    for a in c.args:
        if _from_export(a, handles, stale):
            h = handle(handles[a.tag])
            a = Transfer.make((rec.translate([h])[0] if rec is not None and rec.remap else h,))
        args.append(a)
    args = [
        Ref.make((_append(refs, a.handle),)) if type(a) is Transfer else a
        for a in ex._inline(tuple(args))
    ]
    return c._replace(args=tuple(args))


def _from_export(a, handles, stale) -> bool:
    """Whether operand ``a`` is a Mail operand :func:`_inline` takes from its export: every
    one (``stale`` None), else those of shipments up to ``stale`` whose post went (one
    still queued goes after the abort, to a mailbox that takes it)."""
    if type(a) is not Mail:
        return False
    return stale is None or (a.tag.ship <= stale and handle(handles[a.tag]) is not None)


def _append(lst, v) -> int:
    lst.append(v)
    return len(lst) - 1


def logged_form(cmds, refs, handles, used=None) -> tuple:
    """``(cmds, refs)`` as the log keeps them: posts as exports, each Mail operand a Ref to
    its export (``handles``: tag -> the export's handle, or its :class:`Posted`, whose
    handle :func:`record` takes once it is filled; ``used`` collects the tags) appended to
    ``refs``."""
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
