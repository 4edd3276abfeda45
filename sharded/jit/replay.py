"""The replayable program behind ``st.jit`` (see :mod:`sharded.jit.api`): a trace whose keys
:meth:`~sharded.jit.recorder.Recorder.finish` normalized, shipped to the workers once as
stored programs (:meth:`Program.compile`) or re-issued from the driver with fresh keys
(:meth:`Program.replay`).

Its commands are the recorder's ``Jit*`` records of :mod:`sharded.runtime.commands`, keys
written as ``Fresh(offset)`` (made by the call), ``Input(input, shard)`` or the captured key
itself; each kind has one function that compiles it into worker commands and one that
replays it (the tables :data:`_COMPILE` and :data:`_REPLAY`).
"""

from __future__ import annotations

import weakref

# the generator's (seed, counter): a dict mutated in place
from ..ops.random.prims.counter import _rng
from ..runtime.commands import (
    Const,
    Exported,
    Free,
    Fresh,
    Input,
    JitExport,
    JitFree,
    JitGroup,
    JitGroupFree,
    JitSubmit,
    JitTree,
    JitWave,
    Kernel,
    Key,
    Keys,
    OnWorkers,
    Prog,
    ProgDef,
    ProgDel,
    Transfer,
    Tree,
    shift,
)
from ..tensor import ShardedTensor, Storage
from .pytree import same, unflatten
from .schedule import schedule


class Program:
    """One trace, normalized: keys as ``Fresh(offset)`` (made by the call), ``Input(input,
    shard)`` or the captured key itself."""

    def __init__(self):
        self.cmds: list = []
        self.nexports = 0
        self.outs: list = []
        self.slots: list = []
        self.bumps: list = []
        self.tree = None
        self.nfresh = self.nstorages = 0
        self.captured: set = set()
        self.owners: list = []
        self.leaked: dict = {}
        self.unclean = None
        self.compiled = None  # (program id, workers) once shipped; False: driver replay
        self.order = None  # the driver replay's order (jit_schedule)
        self.rng = ("advance", 0)  # what a call does to the random generator's state
        self.graph = False  # an output carries an autograd graph a backward could use

    def alive(self) -> bool:
        """Whether every captured tensor and every ``.grad`` owner still exists."""
        return all(r() is not None for r in self.owners) and all(
            t[0] == "in" or t[1]() is not None for t, _ in self.slots
        )

    def differs(self, other):
        """None if ``other`` is the same program, else what differs (for the message)."""
        if len(self.cmds) != len(other.cmds):
            return f"{len(self.cmds)} commands, then {len(other.cmds)}"
        for a, b in zip(self.cmds, other.cmds):
            if not same(a, b):
                why = "(a constant or a tensor it reads)"
                return f"command '{_op_name(a)}' changed between calls {why}"
        checks = (
            ("its outputs", self.outs, other.outs),
            ("the .grad tensors it sets", self._slot_key(), other._slot_key()),
            ("the version counters it bumps", self._bump_key(), other._bump_key()),
            ("the tensors it keeps", self.leaked, other.leaked),
            ("the number of keys it makes", self.nfresh, other.nfresh),
            ("the random numbers it draws", self.rng, other.rng),
            ("its output structure", self.tree, other.tree),
        )
        for what, a, b in checks:
            if not same(a, b):
                return f"{what} changed between calls"
        return None

    def _slot_key(self):
        got = [(t[0], t[1] if t[0] == "in" else id(t[1]()), g) for t, g in self.slots]
        return sorted(got, key=lambda x: x[:2])  # in the order of a gc scan: sort them

    def _bump_key(self):
        return sorted((t[0], t[1] if t[0] == "in" else id(t[1]), d) for t, d in self.bumps)

    def compile(self, ex):
        """Each worker's part as per-shard commands (a stored program, ``ProgDef``), shipped
        once; None for a program that moves data between workers (replayed from the
        driver)."""
        per: dict = {}
        for c in self.cmds:
            if not _COMPILE[type(c)](c, per):
                return None
        for w, offs in self.leaked.items():
            per.setdefault(w, []).append(Free([Fresh(k) for k in offs]))
        pid = ex.new_key()  # a key nobody else uses names the program on every worker
        ex.send({w: [ProgDef(pid, cmds)] for w, cmds in per.items()})
        weakref.finalize(self, _drop_program, ex, pid, list(per))
        return pid, list(per)

    def replay(self, ex, sess, inputs):
        """Issue the commands with fresh keys; return the outputs, rebind ``.grad``s."""
        ex._check_open()
        base = ex.new_keys(self.nfresh).start if self.nfresh else 0
        inkeys = [t._keys for t in inputs]
        if self.compiled is None:
            self.compiled = self.compile(ex) or False
            if not self.compiled:  # transfers: from the driver, exports merged in waves
                self.order = schedule(self.cmds)
        if self.compiled:
            pid, workers = self.compiled
            ex.send({w: [Prog(pid, base, inkeys)] for w in workers})
            return self._outputs(sess, inputs, base)
        r = _Replay(ex, base, inkeys, self.nexports)
        for c in self.order:
            _REPLAY[type(c)](r, c)
        for w, offs in self.leaked.items():
            ex.free(w, [base + k for k in offs])
        return self._outputs(sess, inputs, base)

    def _outputs(self, sess, inputs, base):
        """The replay's outputs; ``.grad`` rebinding, version bumps, the generator's state."""
        if self.rng[0] == "advance":
            _rng["counter"] += self.rng[1]
        else:
            _rng.update(self.rng[1])

        def m(k):
            return bind(k, base, [t._keys for t in inputs])

        storages = [None] * self.nstorages

        def build(tpl):
            if tpl[0] == "in":
                return inputs[tpl[1]]
            if tpl[0] == "obj":  # (no recursion: a recursive closure is a reference cycle)
                t = tpl[1]()
                if t is not None:
                    return t
                tpl = tpl[2]
            kind, where, sk, layout, dtype, strides, offset = tpl
            if sk[0] == "same":
                keys = sk[1] if where[0] == "keep" else inputs[where[1]]._keys
            elif sk[0] == "range":
                keys = range(base + sk[1], base + sk[1] + sk[2])
            else:
                keys = tuple(m(k) for k in sk)
            if where[0] == "new":
                st = storages[where[1]]
                if st is None:
                    st = storages[where[1]] = Storage(sess, layout, keys, dtype)
            else:
                st = where[1] if where[0] == "keep" else inputs[where[1]]._storage
            t = ShardedTensor(sess, layout, dtype, keys, storage=st)
            t._strides, t._offset = strides, offset
            return t

        leaves = []
        for x in self.outs:
            leaves.append(x[1] if x[0] == "v" else leaves[x[1]] if x[0] == "dup" else build(x))
        for target, g in self.slots:
            t = inputs[target[1]] if target[0] == "in" else target[1]()
            t.grad = None if g is None else build(g)
        for target, d in self.bumps:
            vc = inputs[target[1]]._vc if target[0] == "in" else target[1]
            vc[0] += d
        return unflatten(self.tree, leaves)


def bind(k, base, inkeys):
    """Key symbol ``k`` bound to a call's keys: ``Fresh`` from the call's first fresh key
    ``base``, ``Input`` from the inputs' keys ``inkeys``, a captured key as itself.

    Examples
    --------
    >>> bind(Fresh(2), 100, []), bind(Input(0, 1), 100, [[7, 8]]), bind(5, 100, [])
    (102, 8, 5)
    """
    kind = type(k)
    if kind is Fresh:
        return base + k.offset
    if kind is Input:
        return inkeys[k.input][k.shard]
    return k


def map_args(args, key, ref) -> tuple:
    """The operands of a per-shard command with each shard key (a ``Key``) mapped by
    ``key`` and every other operand by ``ref`` (an export's handle to its symbol when
    recording, back to a handle when replaying; anything else unchanged).

    Examples
    --------
    >>> map_args((Key(5), Const(2.0)), lambda k: k + 1, lambda a: a)
    (Key(key=6, slices=None), Const(value=2.0))
    """
    return tuple(Key(key(a.key), a.slices) if type(a) is Key else ref(a) for a in args)


def _op_name(c) -> str:
    """The op a normalized command belongs to (for messages)."""
    kind = type(c)
    if kind in (JitGroup, JitSubmit) and c.label:
        return c.label if isinstance(c.label, str) else c.label[0]
    if kind is JitTree:
        return c.spec.label
    return "export" if kind is JitExport else "free"


def _drop_program(ex, pid, workers):
    if not ex.closed:
        ex.send({w: [ProgDel(pid)] for w in workers})


# ------------------------------------------------------------------ compiling, by command type
# compile(command, {worker: [per-shard commands]}) -> False when it moves data between workers


def _compile_group(c, per) -> bool:
    for s, w in enumerate(c.layout.workers):
        args = tuple(Key(shift(a.start, s), None) if type(a) is Keys else a for a in c.args)
        cmd = Kernel(c.kernel, args, (shift(c.out, s),), c.params, (c.label, s), c.inplace)
        per.setdefault(w, []).append(cmd)
    return True


def _compile_group_free(c, per) -> bool:
    for s, w in enumerate(c.layout.workers):
        per.setdefault(w, []).append(Free([Fresh(c.keys.start + s)]))
    return True


def _compile_submit(c, per) -> bool:
    if c.kernel == "random" or any(type(a) not in (Key, Const) for a in c.args):
        return False  # transfers, or draws whose counters change every call
    cmd = Kernel(c.kernel, c.args, c.outs, c.params, c.label, c.inplace)
    per.setdefault(c.w, []).append(cmd)
    return True


def _compile_free(c, per) -> bool:
    per.setdefault(c.w, []).append(Free([Fresh(k) for k in c.keys]))
    return True


def _compile_tree(c, per) -> bool:
    if c.edges:  # partials move between workers
        return False
    desc = OnWorkers(c.layout.workers)  # a reduction within each worker
    for w in dict.fromkeys(c.layout.workers):
        per.setdefault(w, []).append(Tree(desc, c.spec))
    return True


_COMPILE = {
    JitGroup: _compile_group,
    JitGroupFree: _compile_group_free,
    JitSubmit: _compile_submit,
    JitFree: _compile_free,
    JitTree: _compile_tree,
    JitExport: lambda c, per: False,  # data moves between workers
}


# ------------------------------------------------------------------ replaying, by command type
class _Replay:
    """One driver replay: the executor, the call's keys, the handles of its exports so far
    and the random generator's state when it began."""

    def __init__(self, ex, base, inkeys, nexports):
        self.ex, self.base, self.inkeys = ex, base, inkeys
        self.handles = [None] * nexports  # export number -> {worker: handles}
        self.seed, self.c0 = _rng["seed"], _rng["counter"]

    def key(self, k):
        return bind(k, self.base, self.inkeys)

    def arg(self, a):
        """The handle this replay's export made, for a recorded ``Exported``."""
        if type(a) is Exported:
            return Transfer(self.handles[a.export][a.worker][a.item])
        return a


def _replay_group(r, c) -> None:
    args = tuple(Keys(r.key(a.start)) if type(a) is Keys else a for a in c.args)
    r.ex.submit_group(c.layout, c.kernel, args, r.key(c.out), c.params, c.label, c.inplace)


def _replay_group_free(r, c) -> None:
    r.ex.free_group(c.layout, range(r.base + c.keys.start, r.base + c.keys.stop))


def _replay_tree(r, c) -> None:
    spec = c.spec._replace(start=r.key(c.spec.start), outs=tuple(map(r.key, c.spec.outs)))
    r.ex.submit_tree(c.layout, spec, c.edges)


def _replay_submit(r, c) -> None:
    params = c.params
    if c.kernel == "random" and params["seed"] == ("rng",):
        params = dict(params, seed=r.seed, counter=r.c0 + params["counter"][1])
    args = map_args(c.args, r.key, r.arg)
    r.ex.submit(c.w, c.kernel, args, tuple(map(r.key, c.outs)), params, c.label, c.inplace)


def _replay_free(r, c) -> None:
    r.ex.free(c.w, [r.base + k for k in c.keys])


def _replay_wave(r, c) -> None:
    """A wave's exports: one call per source worker."""
    req, at = {}, []
    for e in c.exports:
        for w, items in e.requests.items():
            got = req.setdefault(w, [])
            at.append((e.number, w, len(got), len(items)))
            got += [(r.key(key), *rest) for key, *rest in items]
    got = r.ex.export(req)
    for n, w, i, k in at:
        r.handles[n] = r.handles[n] or {}
        r.handles[n][w] = got[w][i : i + k]


_REPLAY = {
    JitGroup: _replay_group,
    JitGroupFree: _replay_group_free,
    JitTree: _replay_tree,
    JitSubmit: _replay_submit,
    JitFree: _replay_free,
    JitWave: _replay_wave,
}
