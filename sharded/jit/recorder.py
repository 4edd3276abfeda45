"""The recorder and the replayable program behind ``st.jit`` (see :mod:`sharded.jit.api`).

A :class:`Recorder` is the executor's ``recorder`` while a call is traced: it keeps every
``submit_group``/``submit_tree``/``submit``/``free_group``/``free``/``export`` and refuses
reads. Its :meth:`Recorder.finish` normalizes the keys (made by the call: offsets; of the inputs:
(input, shard); captured: themselves) into a :class:`Program`, which :meth:`Program.replay`
re-issues with fresh keys.
"""

from __future__ import annotations

import gc
import traceback
import warnings
import weakref

from ..errors import TraceError
from ..ops.random.prims.counter import _rng  # the generator's (seed, counter): a dict mutated in place
from ..tensor import ShardedTensor, Storage
from .pytree import flatten, same, unflatten
from .schedule import schedule


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
        self.raw.append(("g", layout, kernel, args, out, params, label, inplace))

    def gfree(self, layout, keys):
        self.raw.append(("gf", layout, keys))

    def tree(self, layout, spec, edges):
        self.raw.append(("t", layout, spec, edges))

    def submit(self, w, kernel, args, outs, params, label, inplace):
        self.raw.append(("s", w, kernel, args, outs, params, label, inplace))

    def free(self, w, keys):
        self.raw.append(("f", w, tuple(keys)))

    def export(self, requests, handles):
        self.raw.append(("e", requests, handles))

    def send(self, actions):
        # a dropped jit program (a finalizer) is no part of the call; anything else raw is
        if any(c[0] != "progdel" for cmds in actions.values() for c in cmds):
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
        ex, k0 = self.ex, self.k0
        k1 = ex.new_key()
        inmap = {}
        for i, t in enumerate(self.inputs):
            for s, k in enumerate(t._keys):
                inmap.setdefault(k, (i, s))
        captured = set()

        def norm(k):
            if k0 < k < k1:
                return ("f", k - k0)
            got = inmap.get(k)
            if got is not None:
                return ("i",) + got
            captured.add(k)
            return k

        prog = Program()
        made, freed = {}, set()  # fresh offset -> worker; offsets freed by the call
        handles = {}

        def ref(a):  # an export's handle: which export, worker and item it is
            got = handles.get(id(a[1])) if a[0] == "x" else None
            return a if got is None else ("xr",) + got

        for c in self.raw:
            tag = c[0]
            if tag == "g":
                _, layout, kernel, args, o, params, label, inplace = c
                args = tuple(("K", norm(a[1])) if a[0] == "K" else a for a in args)
                no = norm(o)
                if type(no) is tuple and no[0] == "f" and not inplace:
                    for s, w in enumerate(layout.workers):
                        made[no[1] + s] = w
                prog.cmds.append(("g", layout, kernel, args, no, params, label, inplace))
            elif tag == "gf":
                _, layout, keys = c
                if k0 < keys.start < k1:
                    freed.update(range(keys.start - k0, keys.stop - k0))
                    prog.cmds.append(("gf", layout, keys.start - k0, len(keys)))
            elif tag == "t":  # a reduction tree: its input and output keys as symbols
                _, layout, spec, edges = c
                outs = tuple(norm(o) for o in spec[5])
                for o in outs:  # group g's result lands on its root, its first worker
                    if type(o) is tuple and o[0] == "f":
                        made.update((o[1] + g, gp[0][0]) for g, gp in enumerate(spec[9]))
                spec = _tree_keys(spec, norm(spec[4]), outs)
                prog.cmds.append(("t", layout, spec, edges))
            elif tag == "s":
                _, w, kernel, args, outs, params, label, inplace = c
                na = map_args(args, norm, ref)
                nouts = tuple(norm(k) for k in outs)
                for k in nouts:
                    if isinstance(k, tuple) and k[0] == "f" and not inplace:
                        made[k[1]] = w
                if kernel == "random":
                    params = self._draw(params)
                prog.cmds.append(("s", w, kernel, na, nouts, params, label, inplace))
            elif tag == "f":
                _, w, keys = c
                fk = tuple(k - k0 for k in keys if k0 < k < k1)
                if fk:
                    freed.update(fk)
                    prog.cmds.append(("f", w, fk))
            else:
                _, requests, got = c
                n = len(prog.exports)
                prog.exports.append(None)
                for w, hs in got.items():
                    for j, h in enumerate(hs):
                        handles[id(h)] = (n, w, j)
                req = {
                    w: [(norm(it[0]),) + tuple(it[1:]) for it in items]
                    for w, items in requests.items()
                }
                prog.cmds.append(("e", n, req))
        prog.nfresh = k1 - k0
        moved = _rng["counter"] - self.rng0["counter"]
        if _rng["seed"] == self.rng0["seed"] and moved >= 0:  # a replay draws further on
            prog.rng = ("advance", moved)
        else:  # the function seeds the generator itself: its state after a call is fixed
            prog.rng = ("set", dict(_rng))
        prog.captured = captured
        prog.owners = [self.owners[k] for k in sorted(captured) if k in self.owners]
        if self.sent:
            prog.unclean = "it sends raw worker commands (publishing)"
        keep = set()  # fresh offsets that outlive the call in outputs and .grad slots
        leaves, prog.tree = flatten(out)
        temps: dict = {}
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
        for key, (vc, v) in self.vcs.items():
            if vc[0] != v:
                i = next((i for i, t in enumerate(self.inputs) if t._vc is vc), None)
                prog.bumps.append((("in", i) if i is not None else ("obj", vc), vc[0] - v))
        prog.leaked = {}
        for off, w in made.items():
            if off not in freed and off not in keep:
                prog.leaked.setdefault(w, []).append(off)
        if prog.unclean is None:
            roots = [x for x in leaves if isinstance(x, ShardedTensor)] + slot_objs
            prog.unclean = _survivors(roots, k0, k1)
        return prog

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
        if not keys or not all(isinstance(k, tuple) and k[0] == "f" for k in keys):
            if all(isinstance(k, tuple) and k[0] == "i" for k in keys) and keys:
                where = ("in", keys[0][1])  # an alias of an input (detach, a same-key view)
            else:
                where = ("keep", t._storage)  # a captured tensor or an alias of one
            sk = ("same", t._keys)
        else:
            keep.update(k[1] for k in keys)
            where = ("new", temps.setdefault(id(t._storage), len(temps)))
            sk = ("range", keys[0][1], len(keys)) if isinstance(t._keys, range) else keys
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


# ------------------------------------------------------------------ replaying
class Program:
    """One trace, normalized: keys as ``("f", offset)`` (made by the call), ``("i", input,
    shard)`` or the captured key itself."""

    def __init__(self):
        self.cmds: list = []
        self.exports: list = []
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
        """Each worker's part as per-shard commands (``Worker._program``), shipped once;
        None for a program that moves data between workers (replayed from the driver)."""
        per: dict = {}
        for c in self.cmds:
            tag = c[0]
            if tag == "g":
                _, layout, kernel, args, o, params, label, inplace = c
                for s, w in enumerate(layout.workers):
                    a = tuple(("k", _plus(x[1], s), None) if x[0] == "K" else x for x in args)
                    cmd = (kernel, a, (_plus(o, s),), params, (label, s), inplace)
                    per.setdefault(w, []).append(cmd)
            elif tag == "gf":
                for s, w in enumerate(c[1].workers):
                    per.setdefault(w, []).append(("free", [("f", c[2] + s)]))
            elif tag == "s":
                if any(a[0] not in ("k", "c") for a in c[3]) or c[2] == "random":
                    return None  # transfers, or draws whose counters change every call
                per.setdefault(c[1], []).append(c[2:])
            elif tag == "f":
                per.setdefault(c[1], []).append(("free", [("f", k) for k in c[2]]))
            elif tag == "t" and not c[3]:  # a reduction within each worker (no edges)
                for w in dict.fromkeys(c[1].workers):
                    per.setdefault(w, []).append(("tree", c[1].workers, c[2]))
            else:  # exports, reduction trees across workers: data moves between workers
                return None
        for w, offs in self.leaked.items():
            per.setdefault(w, []).append(("free", [("f", k) for k in offs]))
        pid = ex.new_key()  # a key nobody else uses names the program on every worker
        ex.send({w: [("progdef", pid, cmds)] for w, cmds in per.items()})
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
            ex.send({w: [("prog", pid, base, inkeys)] for w in workers})
            return self._outputs(sess, inputs, base)

        def m(k):
            if type(k) is int:
                return k
            return base + k[1] if k[0] == "f" else inkeys[k[1]][k[2]]

        handles = [None] * len(self.exports)

        def ref(a):  # the handle this replay's export made
            return ("x", handles[a[1]][a[2]][a[3]]) if a[0] == "xr" else a

        seed, c0 = _rng["seed"], _rng["counter"]
        for c in self.order:
            tag = c[0]
            if tag == "g":
                _, layout, kernel, args, o, params, label, inplace = c
                args = tuple(("K", m(a[1])) if a[0] == "K" else a for a in args)
                ex.submit_group(layout, kernel, args, m(o), params, label, inplace)
            elif tag == "gf":
                ex.free_group(c[1], range(base + c[2], base + c[2] + c[3]))
            elif tag == "t":
                _, layout, spec, edges = c
                ex.submit_tree(layout, _tree_keys(spec, m(spec[4]), tuple(map(m, spec[5]))), edges)
            elif tag == "s":
                _, w, kernel, args, outs, params, label, inplace = c
                na = map_args(args, m, ref)
                if kernel == "random" and params["seed"] == ("rng",):
                    params = dict(params, seed=seed, counter=c0 + params["counter"][1])
                ex.submit(w, kernel, na, tuple(m(k) for k in outs), params, label, inplace)
            elif tag == "f":
                ex.free(c[1], [base + k for k in c[2]])
            else:  # a wave's exports: one call per source worker
                req, at = {}, []
                for e in c[1]:
                    for w, items in e[2].items():
                        got = req.setdefault(w, [])
                        at.append((e[1], w, len(got), len(items)))
                        got += [(m(it[0]),) + it[1:] for it in items]
                got = ex.export(req)
                for n, w, i, k in at:
                    handles[n] = handles[n] or {}
                    handles[n][w] = got[w][i : i + k]
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
            if type(k) is int:
                return k
            return base + k[1] if k[0] == "f" else inputs[k[1]]._keys[k[2]]

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


def map_args(args, key, ref) -> tuple:
    """The operands of a per-shard command with each shard key (``("k", key, slices)``)
    mapped by ``key`` and every other operand by ``ref`` (an export's handle to its symbol
    when recording, back to a handle when replaying; anything else unchanged).

    Examples
    --------
    >>> map_args((("k", 5, None), ("c", 2.0)), lambda k: k + 1, lambda a: a)
    (('k', 6, None), ('c', 2.0))
    """
    return tuple(("k", key(a[1]), a[2]) if a[0] == "k" else ref(a) for a in args)


def _tree_keys(spec, start, outs) -> tuple:
    """Reduction tree ``spec`` (:func:`sharded.core.tree.plan_reduce`) reading shards from
    ``start`` and writing its results from ``outs``; the rest (the planner's cached group
    tuples, which the executor's wiring cache recognises by identity) is shared."""
    return spec[:4] + (start, outs) + spec[6:]


def _op_name(c) -> str:
    """The op a normalized command belongs to (for messages)."""
    tag = c[0]
    if tag in ("g", "s") and c[6]:
        return c[6] if isinstance(c[6], str) else c[6][0]
    if tag == "t":
        return c[2][10]
    return "export" if tag == "e" else "free"


def _plus(k, s):
    """Key symbol ``k`` of shard 0 moved to shard ``s`` (a layout's keys are consecutive)."""
    if type(k) is int:
        return k + s
    return ("f", k[1] + s) if k[0] == "f" else ("i", k[1], k[2] + s)


def _drop_program(ex, pid, workers):
    if not ex.closed:
        ex.send({w: [("progdel", pid)] for w in workers})
