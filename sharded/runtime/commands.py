"""Every command the driver, relays, mailboxes, workers, recovery and the jit recorder
exchange, and every spec inside them, as named records.

A record is a :class:`typing.NamedTuple`: cheap to build (one call, no ``__init__``; the
per-op and per-shard paths use ``Cls.make(fields)``, which skips even the Python-level
``__new__``), read by field name, and a plain array to msgpack (``[TAG, *fields]`` on our
own sockets, decoded through :data:`BY_TAG` / :func:`from_fields`, which is also how a
record unpickles). Each class has a stable ``TAG``; raw arrays and dtypes stay fields as
they are. Code that acts on records dispatches on their type (a dict ``type -> handler``),
never on a position.

What travels where:

* a **batch** (``Worker.run(cmds, *refs)``) is a list of worker commands (:class:`Kernel`,
  :class:`Free`, :class:`Export`...) run in order; ``refs`` are the batch's extra
  arguments (data exported by other workers or put by the driver, snapshots);
* **layout commands** (:class:`Group`, :class:`GroupFree`, :class:`Tree`) name every shard
  of a layout at once; a batch carries them in a :class:`LayoutCmds` and each worker
  expands them for the shards it holds (:class:`Mod` / :class:`OnWorkers` say which);
* **operands** of a kernel: :class:`Key`, :class:`Const`, :class:`Ref`; the driver's
  :class:`Transfer` becomes a :class:`Ref` when it is queued, a layout's :class:`Keys` a
  :class:`Key` per shard when a worker expands it;
* a stored ``st.jit`` program's keys are symbols: :class:`Fresh`, :class:`Input` or a plain
  key; the recorder's entries are the ``Jit*`` records;
* mailbox frames (:class:`Deliver`, :class:`Abort`, :class:`Run`) and relay messages
  (:class:`Forward` with its :class:`Send` / :class:`Ship` entries; a wire relay's
  :class:`Fan`).

Examples
--------
>>> cmd = Kernel("add", (Key(1), Const(2.0)), (3,), {}, ("add", 0), False)
>>> cmd.kernel, cmd.args[0].key, BY_TAG[cmd.TAG] is Kernel
('add', 1, True)
"""

from __future__ import annotations

import copyreg
import functools
from typing import Any, NamedTuple


# ------------------------------------------------------------------ operands
class Key(NamedTuple):
    """A stored shard; ``slices`` (a tuple of slices) reads part of it, None all of it."""

    TAG = "k"
    key: Any
    slices: Any = None


class Const(NamedTuple):
    """A constant shipped in the command (a Python scalar or a NumPy array)."""

    TAG = "c"
    value: Any


class Ref(NamedTuple):
    """The batch's ``index``-th extra argument (data exported by a worker, put by the
    driver, or a child's tree partial)."""

    TAG = "r"
    index: int


class Transfer(NamedTuple):
    """Data exported or put earlier, by its driver-side ``handle``: the executor turns it into
    a :class:`Ref` of the batch it queues the command in."""

    TAG = "x"
    handle: Any


class Mail(NamedTuple):
    """Data another worker's :class:`Post` sent under ``tag`` (a :class:`MailTag`): taken
    from this worker's mailbox, waiting at most ``timeout`` s. Only in batches as sent: the
    log keeps a :class:`Ref` to the post's export instead (a replay goes through Ray)."""

    TAG = "m"
    tag: Any
    timeout: float


class Keys(NamedTuple):
    """A layout operand of a :class:`Group`: shard ``s`` reads key ``start + s``."""

    TAG = "K"
    start: Any


class Exported(NamedTuple):
    """A recorded program's operand: item ``item`` of worker ``worker``'s handles of the
    call's ``export``-th export (the replay substitutes its own handle)."""

    TAG = "xr"
    export: int
    worker: int
    item: int


# ------------------------------------------------------------------ key symbols (st.jit)
class Fresh(NamedTuple):
    """A key the program's call makes: the call's first fresh key plus ``offset``."""

    TAG = "f"
    offset: int


class Input(NamedTuple):
    """The key of shard ``shard`` of the call's ``input``-th tensor argument."""

    TAG = "i"
    input: int
    shard: int


def shift(key, s: int):
    """Key (or key symbol) ``key`` of shard 0 moved to shard ``s``: a layout's keys are
    consecutive.

    Examples
    --------
    >>> shift(10, 2), shift(Fresh(3), 2), shift(Input(1, 0), 2)
    (12, Fresh(offset=5), Input(input=1, shard=2))
    """
    kind = type(key)
    if kind is Fresh:
        return Fresh(key.offset + s)
    if kind is Input:
        return Input(key.input, key.shard + s)
    return key + s


# ------------------------------------------------------------------ layout descriptions
class Mod(NamedTuple):
    """``n`` shards, shard ``s`` on worker ``s % m``."""

    TAG = "mod"
    m: int
    n: int


class OnWorkers(NamedTuple):
    """Shard ``s`` on worker ``workers[s]``."""

    TAG = "ws"
    workers: tuple


# ------------------------------------------------------------------ reductions
class ReduceGroup(NamedTuple):
    """One output block of a reduction tree: its workers (the root, where the result lands,
    first) and the shards that reduce into it."""

    TAG = "rgroup"
    parts: tuple
    live: tuple


class TreeSpec(NamedTuple):
    """A reduction as the workers walk it (:func:`sharded.core.tree.plan_reduce`): each
    shard ``start + s`` is reduced by kernel ``chunk`` (``cparams``), the partials of a
    group are merged by ``combine`` (``fn``) up a fan-in-``fan`` tree of its workers; group
    ``g``'s result lands under ``o + g`` for each ``o`` of ``outs`` (its dims ``squeeze``\\ d
    unless None). ``bounds``/``repl``: the input's block grid (the offsets arg-reductions
    need); ``groups``: :class:`ReduceGroup`\\ s; ``label``: the op's name in errors."""

    TAG = "tspec"
    chunk: str
    cparams: dict
    combine: str
    fn: str
    start: Any
    outs: tuple
    bounds: tuple
    repl: bool
    squeeze: Any
    groups: tuple
    label: Any
    fan: int


# ------------------------------------------------------------------ worker commands
class Kernel(NamedTuple):
    """Run ``KERNELS[kernel](xp, *args, **params)``; store the result(s) under ``outs``
    (``inplace``: write into the stored arrays). ``label`` = ``(op, shard)`` names it in
    errors."""

    TAG = "kernel"
    kernel: str
    args: tuple
    outs: tuple
    params: Any
    label: Any
    inplace: bool


class Free(NamedTuple):
    """Drop shards whose last driver reference died."""

    TAG = "free"
    keys: Any


class Export(NamedTuple):
    """Hand (a slice of) a shard out: the batch returns it as an extra value."""

    TAG = "export"
    key: Any
    slices: Any


class Post(NamedTuple):
    """:class:`Export`, the value also sent straight to the mailboxes of workers ``to``
    under ``tag``, where their commands take it (:class:`Mail`) without the driver
    waiting for it in between."""

    TAG = "post"
    key: Any
    slices: Any
    to: tuple
    tag: Any


class Trace(NamedTuple):
    """Start (and zero) or stop tracing this process's allocations; ``received``: count
    the blocks a batch receives mapped from Ray's object store too."""

    TAG = "trace"
    on: bool
    received: bool = False


class Threads(NamedTuple):
    """Limit this process's BLAS/OpenMP pools to ``n`` threads."""

    TAG = "threads"
    n: int


class Pool(NamedTuple):
    """Keep at most ``nbytes`` of freed blocks for reuse."""

    TAG = "pool"
    nbytes: int


class Fusion(NamedTuple):
    """Evaluate runs of fusable elementwise commands block by block, or not (None: the
    default block and minimum sizes)."""

    TAG = "fusion"
    on: bool
    block_elems: Any
    min_elems: Any


class Alias(NamedTuple):
    """Publish: a read-only view of shard ``src`` under ``dst`` (copy on write)."""

    TAG = "alias"
    src: int
    dst: int


class DropRange(NamedTuple):
    """Drop every key in ``[lo, hi)`` but those of ``keep``."""

    TAG = "drop_range"
    lo: int
    hi: int
    keep: tuple


class ProgDef(NamedTuple):
    """Store program ``pid``: this worker's per-shard commands, keys as symbols."""

    TAG = "progdef"
    pid: int
    cmds: list


class Prog(NamedTuple):
    """Run program ``pid`` with fresh keys from ``base`` and the inputs' keys ``inkeys``."""

    TAG = "prog"
    pid: int
    base: int
    inkeys: list


class ProgDel(NamedTuple):
    """Drop program ``pid``."""

    TAG = "progdel"
    pid: int


class Reset(NamedTuple):
    """Forget every shard, then restore the snapshot that is the batch's ``ref``-th extra
    argument (None: stay empty)."""

    TAG = "reset"
    ref: Any


class Hold(NamedTuple):
    """Keep worker ``src``'s snapshot (the batch's ``ref``-th extra argument) alive here."""

    TAG = "hold"
    src: int
    ref: int


class LayoutCmds(NamedTuple):
    """The batch's layout commands: ``cmds``, or the batch's ``ref``-th extra argument."""

    TAG = "B"
    ref: Any
    cmds: Any


class LayoutSync(NamedTuple):
    """Run the batch's layout commands up to ``upto`` (those queued before what follows)."""

    TAG = "bsync"
    upto: int


class TreeRefs(NamedTuple):
    """The batch's trees take their children's partials as refs from the ``start``-th on."""

    TAG = "tref"
    start: int


class TreeMail(NamedTuple):
    """The batch's trees take their children's partials from this worker's mailbox (at most
    ``timeout`` s each) and send their own to their parents': shipment ``ship`` of
    ``client``."""

    TAG = "tmail"
    client: int
    ship: int
    timeout: float


# ------------------------------------------------------------------ layout commands
class Group(NamedTuple):
    """:class:`Kernel` for every shard ``s`` of a layout (``desc``) the worker holds:
    operands :class:`Keys` read key ``start + s``, the output is key ``out + s``."""

    TAG = "group"
    kernel: str
    desc: Any
    args: tuple
    out: Any
    params: Any
    label: Any
    inplace: bool


class GroupFree(NamedTuple):
    """Drop keys ``start + s`` of the shards of layout ``desc`` the worker holds."""

    TAG = "gfree"
    desc: Any
    start: int


class Tree(NamedTuple):
    """A whole reduction over layout ``desc`` (``spec``: a :class:`TreeSpec`)."""

    TAG = "tree"
    desc: Any
    spec: TreeSpec


# ------------------------------------------------------------------ mailbox and wire frames
class MailTag(NamedTuple):
    """Where a tree partial goes: shipment ``ship`` of ``client``, its ``tree``-th tree,
    ``group``, from the child at position ``child``. A :class:`Post`'s tag has ``tree``
    -1 (``TRANSFER``), ``group`` the item's place in its export call and ``child`` the
    sending worker."""

    TAG = "mtag"
    client: Any
    ship: int
    tree: int
    group: int
    child: int


TRANSFER = -1  # a MailTag's ``tree`` for a Post's value


class Deliver(NamedTuple):
    """A frame carrying ``values`` for the mailbox under ``tag``."""

    TAG = "mail"
    tag: Any
    values: Any


class Abort(NamedTuple):
    """A frame failing every take of ``client``'s shipments up to ``ship``."""

    TAG = "abort"
    client: Any
    ship: int


class Run(NamedTuple):
    """The driver's batch over its wire: run ``cmds`` once the worker ran ``after`` Ray
    batches (waiting at most ``timeout`` s)."""

    TAG = "run"
    after: int
    timeout: float
    cmds: list


# ------------------------------------------------------------------ relay messages
class Obj(NamedTuple):
    """A batch's ref that the driver holds: the message's ``index``-th object."""

    TAG = "o"
    index: int


class Held(NamedTuple):
    """A batch's ref that the relay holds: the export made under handle id ``hid``."""

    TAG = "h"
    hid: int


class Send(NamedTuple):
    """One batch for worker ``w``: refs ``args`` (:class:`Obj`/:class:`Held`); its exports
    are kept under ``hids``."""

    TAG = "send"
    w: int
    cmds: Any
    args: Any
    hids: Any


class Own(NamedTuple):
    """A worker's own commands in a :class:`Ship` (refs and exports as in :class:`Send`)."""

    TAG = "own"
    cmds: Any
    args: Any
    hids: Any


class Ship(NamedTuple):
    """A whole shipment the relay composes: the layout commands ``bc`` every worker of
    ``order`` runs, ``own[w]`` (an :class:`Own`) of the workers with commands of their own,
    ``mail`` (a :class:`TreeMail` or None), and the handle ids of all its exports."""

    TAG = "ship"
    bc: Any
    order: tuple
    own: dict
    mail: Any
    hids: Any


class Forward(NamedTuple):
    """One call to a relay: ``sends`` in order (``objs``: the driver's refs they name),
    handle ids to ``forget``, and a read: ``fetch`` (``{w: items}``, a list of handle ids,
    or None), after every batch (``barrier``); ``ret``: return the new exports' refs."""

    TAG = "fwd"
    sends: tuple
    objs: list
    forget: list
    fetch: Any
    barrier: bool
    ret: bool


class Fan(NamedTuple):
    """One flush for a wire relay (:mod:`sharded.runtime.net.fanout`): the layout commands
    ``bc`` every worker of ``order`` runs (sorted for a relay of relays), ``own[w]`` the
    commands of the workers that have their own, ``mail`` (a :class:`TreeMail` or None),
    ``want[w]`` the exports worker ``w``'s batch returns and ``after[w]`` the Ray batches the
    driver sent worker ``w`` before this one (absent: none; the worker runs its batch once it
    ran them, as a ``Run``'s ``after``). The relay answers ``(errors, *values)``: every
    batch's error records, and the wanted exports in the order of ``order``."""

    TAG = "fan"
    bc: Any
    order: Any
    own: dict
    mail: Any
    want: dict
    after: Any = None


# ------------------------------------------------------------------ the jit recorder
class JitGroup(NamedTuple):
    """A recorded ``submit_group`` (keys as symbols once normalized)."""

    TAG = "jg"
    layout: Any
    kernel: str
    args: tuple
    out: Any
    params: Any
    label: Any
    inplace: bool


class JitGroupFree(NamedTuple):
    """A recorded ``free_group``: ``keys`` a range (of fresh offsets once normalized)."""

    TAG = "jgf"
    layout: Any
    keys: range


class JitTree(NamedTuple):
    """A recorded ``submit_tree``."""

    TAG = "jt"
    layout: Any
    spec: TreeSpec
    edges: tuple


class JitSubmit(NamedTuple):
    """A recorded ``submit`` to worker ``w``."""

    TAG = "js"
    w: int
    kernel: str
    args: tuple
    outs: tuple
    params: Any
    label: Any
    inplace: bool


class JitFree(NamedTuple):
    """A recorded ``free`` on worker ``w`` (fresh offsets once normalized)."""

    TAG = "jf"
    w: int
    keys: tuple


class JitExport(NamedTuple):
    """The call's ``number``-th ``export``: ``{w: [(key, slices[, nbytes])]}``."""

    TAG = "je"
    number: int
    requests: dict


class JitWave(NamedTuple):
    """A replay's merged exports of one wave (:func:`sharded.jit.schedule.schedule`)."""

    TAG = "jE"
    exports: list


RECORDS = (
    Key, Const, Ref, Transfer, Mail, Keys, Exported, Fresh, Input, Mod, OnWorkers,
    ReduceGroup, TreeSpec,
    Kernel, Free, Export, Post, Trace, Threads, Pool, Fusion, Alias, DropRange,
    ProgDef, Prog, ProgDel, Reset, Hold, LayoutCmds, LayoutSync, TreeRefs, TreeMail,
    Group, GroupFree, Tree,
    MailTag, Deliver, Abort, Run,
    Obj, Held, Send, Own, Ship, Forward,
    JitGroup, JitGroupFree, JitTree, JitSubmit, JitFree, JitExport, JitWave,
    Fan,
)  # fmt: skip

# TAG -> record class: how a ``[tag, *fields]`` array off a socket becomes a record again
BY_TAG = {cls.TAG: cls for cls in RECORDS}


def from_fields(tag, *fields):
    """The record of tag ``tag`` with ``fields``: how a record is unpickled (and how an
    array ``[tag, *fields]`` off a socket is decoded).

    Examples
    --------
    >>> from_fields("k", 5, None)
    Key(key=5, slices=None)
    """
    return BY_TAG[tag](*fields)


def _reduce(rec):
    """A record pickled as ``from_fields(TAG, *fields)``: one global per pickle whatever the
    record types, each tag a memoized string. NamedTuple's own path (``__reduce_ex__``,
    ``__getnewargs__``, ``copyreg.__newobj__``, a global per class) costs several times as
    much, and the recovery log pickles every batch the driver sends."""
    return from_fields, (rec.TAG,) + rec


for _cls in RECORDS:
    copyreg.pickle(_cls, _reduce)
    # ``Cls.make(fields)``: the record built from the tuple of its fields, without the
    # Python-level ``__new__`` of a NamedTuple (no arity check): half the cost, for the
    # paths that build one per op or per shard
    _cls.make = functools.partial(tuple.__new__, _cls)
