"""The recorder behind ``st.jit`` (see :mod:`sharded.jit.api`).

A :class:`Recorder` is the executor's ``recorder`` while a call is traced: it keeps every
``submit_group``/``submit_tree``/``submit``/``free_group``/``free``/``export`` as a ``Jit*``
record of :mod:`sharded.runtime.commands` and refuses reads. Its :meth:`Recorder.finish`
normalizes the keys (made by the call: ``Fresh`` offsets; of the inputs: ``Input``;
captured: themselves), one function per record type (:data:`_NORMALIZE`), into a
:class:`~sharded.jit.replay.Program`, which re-issues them with fresh keys.
"""

from __future__ import annotations

import gc
import traceback
import warnings
import weakref

from ..errors import TraceError

# the generator's (seed, counter): a dict mutated in place
from ..ops.random.prims.counter import _rng
from ..runtime.commands import (
    Exported,
    Fresh,
    Input,
    JitExport,
    JitFree,
    JitGroup,
    JitGroupFree,
    JitSubmit,
    JitTree,
    Keys,
    ProgDel,
    Transfer,
)
from ..tensor import ShardedTensor
from .pytree import flatten
from .replay import Program, map_args


def _live_tensors():
    """Every live tensor object (a gc scan: only when a trace starts and ends)."""
    return [o for o in gc.get_objects() if isinstance(o, ShardedTensor)]


def _user_line() -> str:
    """The package function the user called to read (``__bool__``, ``item``, ``nonzero``...)
    and the user's line that called it."""
    pkg = __file__.rsplit("/", 2)[0] + "/"  # the sharded package (this is sharded/jit/)
    frames = traceback.extract_stack()
    ins = [f.filename.startswith(pkg) for f in frames]
    i = len(frames) - 1
    while i >= 0 and ins[i]:
        i -= 1
    if i < 0 or i + 1 >= len(frames):
        return "a read"
    f = frames[i]
    return f"'{frames[i + 1].name}' at {f.filename}:{f.lineno}: {f.line}"


# ------------------------------------------------------------------ recording
class Recorder:
    """Told every executor call of a traced call (``executor.recorder``)."""

    def __init__(self, owner, ex, inputs):
        self.owner, self.ex, self.inputs = owner, ex, inputs
        self.raw: list = []
        self.exported: dict = {}  # id of an export's handle -> its Exported symbol
        self.handles: list = []  # every export's handles: alive (their ids name them)
        self.abandoned = False
        self.sent = False
        live = _live_tensors()
        # objects made before the call (by id: a tensor's == is elementwise)
        self.existing = {id(t): weakref.ref(t) for t in live}
        # what a replay must guard or redo: captured keys -> their storage (alive?), the
        # .grad and version counter of every tensor that may be changed by the call
        self.owners = {}
        for t in live:
            ref = weakref.ref(t._storage)
            for k in t._keys:
                self.owners.setdefault(k, ref)
        self.grads = [(weakref.ref(t), _keys_of(t.grad)) for t in live if t.requires_grad]
        self.vcs = {id(t._vc): (t._vc, t._vc[0]) for t in live}
        self.k0 = ex.new_key()
        self.rng0 = dict(_rng)

    # the executor's hooks
    def group(self, layout, kernel, args, out, params, label, inplace):
        self.raw.append(JitGroup(layout, kernel, args, out, params, label, inplace))

    def gfree(self, layout, keys):
        self.raw.append(JitGroupFree(layout, keys))

    def tree(self, layout, spec, edges):
        self.raw.append(JitTree(layout, spec, edges))

    def submit(self, w, kernel, args, outs, params, label, inplace):
        self.raw.append(JitSubmit(w, kernel, args, outs, params, label, inplace))

    def free(self, w, keys):
        self.raw.append(JitFree(w, tuple(keys)))

    def export(self, requests, handles):
        n = len(self.handles)
        self.handles.append(handles)
        for w, hs in handles.items():
            for j, h in enumerate(hs):
                self.exported[id(h)] = Exported(n, w, j)
        self.raw.append(JitExport(n, requests))

    def send(self, actions):
        # a dropped jit program (a finalizer) is no part of the call; anything else raw is
        if any(type(c) is not ProgDel for cmds in actions.values() for c in cmds):
            self.sent = True

    def read(self, items):
        what = _user_line()
        msg = (
            f"st.jit: '{self.owner.name}' reads a tensor's value while being traced ({what}); "
            "Python control flow or ops that depend on tensor values cannot be replayed"
        )
        if not self.owner.fallback:
            hint = "compute it with tensor ops (st.where) or use st.jit(fn, fallback=True)"
            raise TraceError(f"{msg}; {hint} to run it eagerly with a warning")
        warnings.warn(msg + "; running it eagerly from now on (fallback=True)", stacklevel=3)
        self.abandoned = True
        self.ex.recorder = None

    # the program
    def finish(self, out, sess) -> Program:
        """The trace as a :class:`~sharded.jit.replay.Program`: its commands normalized,
        what it does to outputs, ``.grad`` slots, version counters and the generator."""
        n = _Normalizer(self, self.ex.new_key())
        prog = Program()
        for c in self.raw:
            got = _NORMALIZE[type(c)](n, c)
            if got is not None:  # (frees of keys the call did not make: nothing to redo)
                prog.cmds.append(got)
        prog.nexports = len(self.handles)
        prog.nfresh = n.k1 - n.k0
        prog.rng = self._rng_effect()
        prog.captured = n.captured
        prog.owners = [self.owners[k] for k in sorted(n.captured) if k in self.owners]
        if self.sent:
            prog.unclean = "it sends raw worker commands (publishing)"
        keep = set()  # fresh offsets that outlive the call in outputs and .grad slots
        temps: dict = {}
        leaves = self._outputs(out, n.key, temps, keep, prog)
        slot_objs = self._slots(n.key, temps, keep, prog)
        self._bumps(prog)
        prog.leaked = {}
        for off, w in n.made.items():
            if off not in n.freed and off not in keep:
                prog.leaked.setdefault(w, []).append(off)
        if prog.unclean is None:
            roots = [x for x in leaves if isinstance(x, ShardedTensor)] + slot_objs
            prog.unclean = _survivors(roots, n.k0, n.k1)
        return prog

    def _rng_effect(self):
        """What a call does to the random generator's state."""
        moved = _rng["counter"] - self.rng0["counter"]
        if _rng["seed"] == self.rng0["seed"] and moved >= 0:  # a replay draws further on
            return ("advance", moved)
        return ("set", dict(_rng))  # the function seeds the generator itself: fixed after

    def _outputs(self, out, norm, temps, keep, prog) -> list:
        """The output templates (``prog.outs``, ``prog.tree``); returns the leaves."""
        leaves, prog.tree = flatten(out)
        first: dict = {}  # id of an output tensor -> its first leaf (returned twice: one object)
        for i, x in enumerate(leaves):
            if isinstance(x, ShardedTensor) and id(x) in first:
                prog.outs.append(("dup", first[id(x)]))
            elif isinstance(x, ShardedTensor):
                first[id(x)] = i
                tpl = self._template(x, norm, temps, keep, prog)
                prog.outs.append(tpl)
                # a replay's outputs carry no graph: one a later backward could still use
                # (not freed by a backward inside the call) keeps its signature eager
                fresh = tpl[0] not in ("in", "obj")  # not an argument or a parameter itself
                if fresh and x.requires_grad and not getattr(x.grad_fn, "freed", 0):
                    prog.graph = True
            else:
                prog.outs.append(("v", x))
        return leaves

    def _slots(self, norm, temps, keep, prog) -> list:
        """The ``.grad`` slots the call rebinds (``prog.slots``); returns the new grads."""
        index = {id(t): i for i, t in enumerate(self.inputs)}
        slot_objs = []
        for ref, before in self.grads:
            t = ref()
            if t is None or _keys_of(t.grad) == before:
                continue
            target = ("in", index[id(t)]) if id(t) in index else ("obj", ref)
            g = t.grad
            if g is not None:
                slot_objs.append(g)
                g = self._template(g, norm, temps, keep, prog)
                if g[0] != "new":
                    prog.unclean = "it sets a .grad to a tensor made before the call"
            prog.slots.append((target, g))
        return slot_objs

    def _bumps(self, prog) -> None:
        """The version counters the call bumped (``prog.bumps``)."""
        for vc, v in self.vcs.values():
            if vc[0] != v:
                i = next((i for i, t in enumerate(self.inputs) if t._vc is vc), None)
                prog.bumps.append((("in", i) if i is not None else ("obj", vc), vc[0] - v))

    def _draw(self, params):
        """A random draw's counter as an offset from the generator's state when the call
        began, and its seed as that state's, so a replay draws the numbers eager would."""
        c0, c = self.rng0["counter"], params["counter"]
        if params["seed"] != self.rng0["seed"] or not c0 <= c < _rng["counter"]:
            return params  # drawn after a manual_seed inside the call: the same each call
        return dict(params, seed=("rng",), counter=("rng", c - c0))

    def _template(self, t, norm, temps, keep, prog):
        """How a replay rebuilds output (or ``.grad``) tensor ``t``."""
        for i, x in enumerate(self.inputs):
            if x is t:
                return ("in", i)
        ref = self.existing.get(id(t))
        if ref is not None and ref() is t:  # e.g. a parameter: the same object again
            return ("obj", weakref.ref(t), self._template_of_copy(t, norm, temps, keep, prog))
        return self._template_of_copy(t, norm, temps, keep, prog)

    def _template_of_copy(self, t, norm, temps, keep, prog):
        keys = [norm(k) for k in t._keys]
        if not keys or not all(type(k) is Fresh for k in keys):
            if keys and all(type(k) is Input for k in keys):
                where = ("in", keys[0].input)  # an alias of an input (detach, a same-key view)
            else:
                where = ("keep", t._storage)  # a captured tensor or an alias of one
            sk = ("same", t._keys)
        else:
            keep.update(k.offset for k in keys)
            where = ("new", temps.setdefault(id(t._storage), len(temps)))
            sk = ("range", keys[0].offset, len(keys)) if isinstance(t._keys, range) else keys
        prog.nstorages = len(temps)
        return (
            "new" if where[0] == "new" else "alias",
            where,
            sk,
            t._layout,
            t._dtype,
            t._strides,
            t._offset,
        )


def _keys_of(t):
    return None if t is None else t._keys


def _see(t, seen, nodes):
    """Mark ``t``, the bases it views and its origin as reachable; queue its node."""
    while t is not None and id(t) not in seen:
        seen.add(id(t))
        if t.grad_fn is not None:
            nodes.append(t.grad_fn)
        origin = getattr(t, "_origin", None)
        if origin is not None:
            _see(origin, seen, nodes)
        t = t._base


def _survivors(roots, k0, k1):
    """Why the trace is unusable if a tensor made by the call outlives it in Python state
    other than the outputs, their autograd graphs and .grad slots (None if none does)."""
    seen, nodes, done = set(), [], set()
    for t in roots:
        _see(t, seen, nodes)
    while nodes:
        n = nodes.pop()
        if id(n) in done:
            continue
        done.add(id(n))
        ts = [a for a in n.args if isinstance(a, ShardedTensor)]
        ts += [t for t, _ in n.versions]
        ts += [t for v in n.saved.values() for t in v if t is not None]
        for t in ts:
            _see(t, seen, nodes)
    for t in _live_tensors():
        if id(t) in seen or not t._keys or not (k0 < t._keys[0] < k1):
            continue
        return (
            f"a tensor it made (shape {tuple(t.shape)}, {t.dtype.name}) outlives the call "
            "in Python state other than its outputs and .grad"
        )
    return None


# ------------------------------------------------------------------ normalizing
class _Normalizer:
    """What :meth:`Recorder.finish` learns while it normalizes the recorded commands: the
    keys the call made (``[k0, k1)``), the captured ones, which worker holds each fresh
    offset and which offsets the call freed."""

    def __init__(self, rec, k1):
        self.k0, self.k1, self.draw = rec.k0, k1, rec._draw
        self.exported = rec.exported
        self.inmap = {}
        for i, t in enumerate(rec.inputs):
            for s, k in enumerate(t._keys):
                self.inmap.setdefault(k, Input(i, s))
        self.captured: set = set()
        self.made: dict = {}  # fresh offset -> worker
        self.freed: set = set()

    def key(self, k):
        """Key ``k`` as a symbol: ``Fresh`` if the call made it, ``Input`` if an input
        holds it, else itself (captured)."""
        if self.k0 < k < self.k1:
            return Fresh(k - self.k0)
        got = self.inmap.get(k)
        if got is not None:
            return got
        self.captured.add(k)
        return k

    def arg(self, a):
        """An export's handle as its ``Exported`` symbol; other operands as they are."""
        if type(a) is Transfer:
            return self.exported.get(id(a.handle), a)
        return a


def _norm_group(n, c):
    args = tuple(Keys(n.key(a.start)) if type(a) is Keys else a for a in c.args)
    out = n.key(c.out)
    if type(out) is Fresh and not c.inplace:
        for s, w in enumerate(c.layout.workers):
            n.made[out.offset + s] = w
    return c._replace(args=args, out=out)


def _norm_group_free(n, c):
    keys = c.keys
    if not n.k0 < keys.start < n.k1:
        return None
    offsets = range(keys.start - n.k0, keys.stop - n.k0)
    n.freed.update(offsets)
    return c._replace(keys=offsets)


def _norm_tree(n, c):
    """A reduction tree: its input and output keys as symbols."""
    spec = c.spec
    outs = tuple(n.key(o) for o in spec.outs)
    for o in outs:  # group g's result lands on its root, its first worker
        if type(o) is Fresh:
            n.made.update((o.offset + g, grp.parts[0]) for g, grp in enumerate(spec.groups))
    # the planner's cached group tuples stay shared: the executor's wiring cache knows them
    return c._replace(spec=spec._replace(start=n.key(spec.start), outs=outs))


def _norm_submit(n, c):
    outs = tuple(n.key(k) for k in c.outs)
    if not c.inplace:
        for k in outs:
            if type(k) is Fresh:
                n.made[k.offset] = c.w
    params = n.draw(c.params) if c.kernel == "random" else c.params
    return c._replace(args=map_args(c.args, n.key, n.arg), outs=outs, params=params)


def _norm_free(n, c):
    offsets = tuple(k - n.k0 for k in c.keys if n.k0 < k < n.k1)
    if not offsets:
        return None
    n.freed.update(offsets)
    return c._replace(keys=offsets)


def _norm_export(n, c):
    req = {w: [(n.key(key), *rest) for key, *rest in its] for w, its in c.requests.items()}
    return c._replace(requests=req)


# normalize(normalizer, recorded command) -> the program's command (None: nothing to redo)
_NORMALIZE = {
    JitGroup: _norm_group,
    JitGroupFree: _norm_group_free,
    JitTree: _norm_tree,
    JitSubmit: _norm_submit,
    JitFree: _norm_free,
    JitExport: _norm_export,
}
