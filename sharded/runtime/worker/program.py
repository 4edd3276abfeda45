"""A stored ``st.jit`` program, compiled once on the worker so that a call is a tight loop.

A program (a ``ProgDef``, see :mod:`sharded.jit.recorder`) is this worker's per-shard commands
(``Kernel``, ``Free``, ``Tree``) with keys written as symbols: ``Fresh(offset)`` (made by the
call: ``base + offset``), ``Input(input, shard)`` (an input's key) or a plain key (captured).
Run through the generic batch path, every call would rebuild the commands with their keys
bound, look for fusable windows, and dispatch each command through the worker's handlers and
:meth:`Worker._kernel` (about 8 us a command: the 200-op chain of issue 17 spent 3.2 ms of
worker time a call on it). :class:`Compiled` does that work once, at definition:

* each command becomes a step (one function per command type compiles it), a kernel's with
  its function looked up, its operand and output symbols encoded as small tuples, its
  constants already on the device;
* the fusion windows (:func:`.fusion.windows`) and the reference index that decides which
  keys stay internal to a fused group (:class:`.fusion.References`, over the symbols: a key
  made by the call has exactly one symbol) are computed once. A call runs a window fused
  only when the operands it reads from outside could make an output as large as the
  worker's ``fusion_min`` (the broadcast of their shapes bounds every output's); otherwise
  (tiny tensors) its commands run in the loop like the others, exactly as the unfused path
  would run them;
* a pooled kernel (one that may write into a recycled block) is offered the pool only while
  its output is large enough to be pooled at all (the pool holds blocks of at least
  ``POOL_MIN_BYTES``; asking costs a broadcast of the shapes per command);
* on a worker with several kernel threads, back-to-back kernels that do not read one
  another's outputs (one per shard of an op: :class:`_Group`) run at once on its pool, and
  a fusion window of independent per-shard chains runs each chain fused on it, as the
  batch path does (:mod:`.parallel`);
* a window too small to fuse whose chains are its shards' same kernels runs once over the
  shards stacked (:mod:`.stacked`: a kernel of a few hundred elements costs its
  bookkeeping, not its arithmetic; as fusion, only while the worker's fusion is on);
* a kernel step with one fresh output, not in place, reading unsliced keys and scalars
  takes a short path through the loop (about half the general path's cost: most steps of a
  program of small blocks).

Results and error records are those of the generic path: the same kernels with the same
arguments in the same order; a missing or poisoned operand poisons the outputs, a failing
kernel records its error, and the call goes on.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..commands import Const, Free, Fresh, Input, Kernel, Key, Mod, Tree, shift
from . import fusion, parallel, stacked

POOL_MIN_BYTES = 1 << 20  # the worker's pool keeps no smaller block (store.POOL_MIN_BYTES)
_FRESH, _INPUT, _FIXED = 1, 2, 3  # how a key symbol binds (a constant operand is 0)


def _sym(k):
    """``(how, a, b)`` for key symbol ``k`` (see the module docstring)."""
    kind = type(k)
    if kind is Fresh:
        return (_FRESH, k.offset, 0)
    if kind is Input:
        return (_INPUT, k.input, k.shard)
    return (_FIXED, k, 0)


# ------------------------------------------------------------------ compiled steps
class _Plain(NamedTuple):
    """Steps run one by one in the tight loop."""

    steps: list


class _Window(NamedTuple):
    """A fusion window: commands ``start:end``, what they read from outside (key symbols
    with slices, constant shapes) and their steps (run so when it is too small to fuse,
    unless its per-shard chains run stacked: ``stack``, keys as encoded symbols)."""

    start: int
    end: int
    outside: tuple
    steps: list
    stack: Any  # a stacked.Stack or None


class _Group(NamedTuple):
    """Back-to-back kernel steps of which none reads or writes what another makes (one per
    shard of an op, say). On a worker with several kernel threads, when one of the first
    one's stored operands holds ``par_min`` elements or more, they run at once on the pool;
    else one after another, as written."""

    prog: Any  # the Compiled program (its tight loop runs each step)
    steps: list
    first: tuple  # the first step's key symbols
    blas: bool


class _KernelStep(NamedTuple):
    """A kernel command, its function looked up and its keys encoded (:func:`_sym`)."""

    fn: Any
    args: tuple  # per operand (how, a, b, slices); how 0: the constant a, on the device
    outs: tuple
    params: dict
    label: Any
    inplace: bool
    pooled: bool  # may take its output from the pool
    kernel: str
    index: int  # of the command in the program
    fast: Any  # (operands, output offset) when it may skip the general loop, else None


class _FreeFresh(NamedTuple):
    """A free of keys the call made (offsets from its base)."""

    offsets: tuple


class _FreeKeys(NamedTuple):
    """A free of keys of any kind (encoded symbols)."""

    syms: tuple


class _TreeStep(NamedTuple):
    """A reduction (``Worker._tree``) with its input and output keys bound at each call."""

    desc: Any
    spec: Any
    start: tuple
    outs: tuple


class Compiled:
    """Worker ``w``'s part of one program, ready to run with :meth:`run`.

    Examples
    --------
    >>> from sharded.runtime.commands import Const, Free, Fresh, Input, Kernel, Key
    >>> from sharded.runtime.worker.core import Worker
    >>> w = Worker(0)
    >>> w.store[7] = np.zeros(3)
    >>> x1 = Kernel("add", (Key(Input(0, 0)), Const(1.0)), (Fresh(0),), {}, None, False)
    >>> x2 = Kernel("mul", (Key(Fresh(0)), Const(3.0)), (Fresh(1),), {}, None, False)
    >>> p = Compiled([x1, x2, Free([Fresh(0)])], w.kernels)
    >>> p.run(w, 100, [[7]]), w.store[101], 100 in w.store
    ([], array([3., 3., 3.]), False)
    """

    def __init__(self, cmds, kernels=None):
        self.cmds = cmds
        self.steps = None
        if kernels is not None:  # else at the first run (a program restored from a snapshot)
            self._compile(kernels)

    def __reduce__(self):  # a snapshot pickles the commands; the kernels are looked up again
        return Compiled, (self.cmds,)

    def _compile(self, kernels) -> None:
        """Steps: runs of plain steps (:class:`_Plain`) and fusion windows
        (:class:`_Window`)."""
        cmds = self.cmds
        # a reduction tree reads every shard of its input: for the fusion index, a command
        # that reads them (a group's output it reads is then never internal to the group)
        seen = [_tree_reads(c) if type(c) is Tree else c for c in cmds]
        self.index = fusion.References(seen)  # symbolic: built at the first fused window
        self.big = [True] * len(cmds)  # per command: may its output come from the pool?
        wins = fusion.windows(seen, kernels) or {}
        steps, plain, i = [], [], 0
        while i < len(cmds):
            end = wins.get(i)
            if end is None:
                plain.append(self._step(i, kernels))
                i += 1
                continue
            if plain:
                steps.append(_Plain(plain))
                plain = []
            inner = [self._step(j, kernels) for j in range(i, end)]
            stack = _encoded(stacked.plan(cmds[i:end], kernels))
            steps.append(_Window(i, end, _outside(cmds[i:end]), inner, stack))
            i = end
        if plain:
            steps.append(_Plain(plain))
        self.steps = [_Plain(self._grouped(s.steps)) if type(s) is _Plain else s for s in steps]

    def _grouped(self, steps) -> list:
        """``steps`` with runs of independent kernel steps as :class:`_Group` s: each step
        of a run makes fresh keys (none in place) that no other step of the run reads."""
        out, run, made, read = [], [], set(), set()

        def close():
            first = tuple(a[:3] for a in run[0].args if a[0]) if len(run) > 1 else ()
            if not first:
                out.extend(run)
            else:
                cmds = [[self.cmds[s.index]] for s in run]
                blas = parallel.calls_blas({s.kernel: s.fn for s in run}, cmds)
                out.append(_Group(self, list(run), first, blas))
            run.clear()
            made.clear()
            read.clear()

        for s in steps:
            if type(s) is not _KernelStep or s.inplace:
                close()
                out.append(s)
                continue
            reads = {a[:3] for a in s.args if a[0]}
            if reads & made or made.intersection(s.outs) or read.intersection(s.outs):
                close()
            run.append(s)
            made.update(s.outs)
            read.update(reads)
        close()
        return out

    def _step(self, i, kernels):
        c = self.cmds[i]
        return _COMPILE[type(c)](c, i, kernels)

    # ------------------------------------------------------------------ running
    def run(self, w, base, inkeys) -> list:
        """Run on worker ``w`` with the fresh keys from ``base`` and the inputs' keys
        ``inkeys``; returns the error records."""
        if self.steps is None:
            self._compile(w.kernels)
        errors: list = []
        fuse = w.fusion and w.xp is np
        for st in self.steps:
            if type(st) is _Plain:
                self._run(w, st.steps, base, inkeys, errors)
            elif fuse and self._large(w, st.outside, base, inkeys):
                self._fused(w, st, base, inkeys, errors)
            elif not (
                fuse
                and st.stack is not None
                and stacked.run(w, st.stack, lambda s: _key(s, base, inkeys))
            ):
                self._run(w, st.steps, base, inkeys, errors)
        return errors

    def _run(self, w, steps, base, inkeys, errors) -> None:
        """The tight loop: :meth:`Worker._kernel` and :meth:`Worker._free` for steps."""
        store, poisoned, xp, big = w.store, w.poisoned, w.xp, self.big
        cons = w.backend.to_device
        ran = 0
        for st in steps:
            if type(st) is not _KernelStep:
                _RUN[type(st)](w, st, base, inkeys, errors)
                continue
            fast = st.fast
            if fast is not None and not (st.pooled and big[st.index]):
                # the short path (most steps of a program of small blocks: the general one
                # below costs about twice a tiny ufunc); a missing operand or a failing
                # kernel falls through to the general path, which records it as ever
                try:
                    vals = [
                        c if t == 0 else store[base + c] if t == 1 else store[c] for t, c in fast[0]
                    ]
                    r = st.fn(xp, *vals, **st.params)
                    store[base + fast[1]] = r if type(r) is np.ndarray else xp.asarray(r)
                    vals = r = None
                    ran += 1
                    continue
                except Exception:
                    vals = r = None
            fn, params, pooled, i, inplace = st.fn, st.params, st.pooled, st.index, st.inplace
            ran += 1
            keys = [
                base + o[1] if o[0] == _FRESH else o[1] if o[0] == _FIXED else inkeys[o[1]][o[2]]
                for o in st.outs
            ]
            if inplace and w.published_seen:
                w._detach(keys)
            vals = []
            try:
                for t, a, b, sl in st.args:
                    if t == 0:
                        vals.append(cons(a) if isinstance(a, np.ndarray) else a)
                        continue
                    k = base + a if t == _FRESH else a if t == _FIXED else inkeys[a][b]
                    arr = store.get(k)
                    if arr is None:
                        raise _Missing(k)
                    vals.append(arr if sl is None else arr[sl])
                if fn is None:
                    raise KeyError(st.kernel)
                if pooled and big[i]:
                    res = fn(xp, *vals, alloc=w._take, **params)
                else:
                    res = fn(xp, *vals, **params)
                if len(keys) == 1:
                    res = (res,)
                    if pooled and big[i]:
                        big[i] = getattr(res[0], "nbytes", 0) >= POOL_MIN_BYTES
                elif not keys:
                    res = ()
                for k, r in zip(keys, res):
                    if inplace:
                        if r is not store[k]:
                            store[k][...] = r
                    else:
                        store[k] = xp.asarray(r)
                vals = res = r = arr = None  # no stale references: freed blocks can be pooled
            except _Missing as m:
                cause = f"KeyError: shard {m.key} is not on worker {w.index}"
                rec = poisoned.get(m.key) or _record("read", w, cause)
                for k in keys:
                    poisoned[k] = rec
                errors.append(dict(rec, cascade=True))
            except Exception as e:  # reported to the driver, which raises it typed
                label = st.label or (st.kernel, None)
                failed(e, label, w.index, keys, inplace, store, poisoned, errors)
        w.commands_run += ran

    def _large(self, w, outside, base, inkeys) -> bool:
        """Whether a window might fuse: the broadcast of the shapes it reads from outside
        (every output's shape is at most that) holds ``fusion_min`` elements, or a shape is
        not known (a missing shard: the fusion path reports it as the unfused one would)."""
        keys, shapes = outside
        dims: list = []
        for s in keys:
            arr = w.store.get(_key(s, base, inkeys))
            if arr is None:
                return True
            _widen(dims, arr.shape if s[3] is None else arr[s[3]].shape)
        for shp in shapes:
            _widen(dims, shp)
        return math.prod(dims) >= w.fusion_min

    def _fused(self, w, win, base, inkeys, errors) -> None:
        """A window through :func:`.fusion.run_window`, its commands bound to keys."""
        cmds: list = [None] * win.end
        for j, s in zip(range(win.start, win.end), win.steps):
            kind = type(s)
            if kind is _FreeFresh:
                cmds[j] = Free([base + o for o in s.offsets])
            elif kind is _FreeKeys:
                cmds[j] = Free([_key(k, base, inkeys) for k in s.syms])
            else:
                c = self.cmds[j]
                args = tuple(
                    Key(_key(e, base, inkeys), e[3]) if e[0] else a for a, e in zip(c.args, s.args)
                )
                outs = tuple(_key(o, base, inkeys) for o in s.outs)
                cmds[j] = c._replace(args=args, outs=outs)
        # (a window of independent per-shard chains: each fused, on the pool; as Worker.run)
        if w.kernel_threads > 1 and not w._busy:
            if parallel.run_window(w, cmds[win.start : win.end], (), errors):
                return
        fusion.run_window(w, cmds, win.start, win.end, (), errors, _Index(self))


# ------------------------------------------------------------------ compiling, by command type
def _compile_tree(c, i, kernels):
    """``Worker._tree`` with its keys bound at each call."""
    spec = c.spec
    return _TreeStep(c.desc, spec, _sym(spec.start), tuple(_sym(o) for o in spec.outs))


def _compile_free(c, i, kernels):
    syms = [_sym(k) for k in c.keys]
    if all(s[0] == _FRESH for s in syms):
        return _FreeFresh(tuple(s[1] for s in syms))
    return _FreeKeys(tuple(syms))


def _compile_kernel(c, i, kernels):
    fn = kernels.get(c.kernel)
    enc = []
    for a in c.args:
        if type(a) is Key:
            enc.append(_sym(a.key) + (a.slices,))
        elif type(a) is Const:
            enc.append((0, a.value, 0, None))
        else:
            raise ValueError(f"a stored program cannot take operand {a!r} ({c.kernel})")
    pooled = fn is not None and getattr(fn, "pooled", False) and not c.inplace
    outs = tuple(_sym(k) for k in c.outs)
    step = _KernelStep(
        fn, tuple(enc), outs, c.params or {}, c.label, c.inplace, pooled, c.kernel, i, None
    )
    return step._replace(fast=_fast(step))


def _fast(st):
    """``(operands, output offset)`` of a kernel step the tight loop may run by its short
    path: one fresh output, not in place, operands unsliced keys of the call or fixed keys
    (``(1, offset)``, ``(2, key)``) and scalar constants (``(0, value)``); else None."""
    if st.fn is None or st.inplace or len(st.outs) != 1 or st.outs[0][0] != _FRESH:
        return None
    ops = []
    for how, a, _, sl in st.args:
        if how == 0 and not isinstance(a, np.ndarray):
            ops.append((0, a))
        elif how in (_FRESH, _FIXED) and sl is None:
            ops.append((1 if how == _FRESH else 2, a))
        else:
            return None
    return tuple(ops), st.outs[0][1]


_COMPILE = {Tree: _compile_tree, Free: _compile_free, Kernel: _compile_kernel}


# ------------------------------------------------------------------ running, by step type
def _run_free_fresh(w, st, base, inkeys, errors):
    w._free([base + o for o in st.offsets])


def _run_free_keys(w, st, base, inkeys, errors):
    w._free([_key(s, base, inkeys) for s in st.syms])


def _run_tree(w, st, base, inkeys, errors):
    outs = tuple(_key(o, base, inkeys) for o in st.outs)
    spec = st.spec._replace(start=_key(st.start, base, inkeys), outs=outs)
    w._tree(spec, set(w.mine(st.desc)), (), errors)


def _run_group(w, st, base, inkeys, errors):
    prog = st.prog
    if w.kernel_threads > 1 and not w._busy and w.xp is np:
        store = w.store
        sizes = (getattr(store.get(_key(s, base, inkeys)), "size", 0) for s in st.first)
        if max(sizes) >= w.par_min:  # (every operand: a convolution's first is its weight)

            def lane(step):
                errs: list = []
                prog._run(w, [step], base, inkeys, errs)
                return errs

            for errs in parallel.run_lanes(w, lane, st.steps, len(st.steps), st.blas):
                errors += errs
            return
    prog._run(w, st.steps, base, inkeys, errors)


_RUN = {
    _FreeFresh: _run_free_fresh,
    _FreeKeys: _run_free_keys,
    _TreeStep: _run_tree,
    _Group: _run_group,
}


class _Index:
    """:class:`.fusion.References` asked with bound keys, answered from the symbolic index
    (the key a command makes is its output symbol)."""

    def __init__(self, prog):
        self.prog = prog

    def internal(self, key, made_at, members) -> bool:
        sym = self.prog.cmds[made_at].outs[0]
        return self.prog.index.internal(sym, made_at, members)


class _Missing(Exception):
    """An operand's shard is not in the store (never made, freed, or poisoned)."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


def failed(e, label, index, outs, inplace, store, poisoned, errors) -> None:
    """Record command ``label`` = ``(op, shard)`` failing on worker ``index`` with ``e``: its
    outputs ``outs`` are dropped (kept when it wrote in place) and poisoned, so commands that
    read them fail as a cascade of this one, and the error goes to the driver's list."""
    op, shard = label
    rec = {"op": op, "shard": shard, "worker": index, "cause": f"{type(e).__name__}: {e}"}
    for k in outs:
        if not inplace:
            store.pop(k, None)
        poisoned[k] = rec
    errors.append(dict(rec, cascade=False))


def _record(op, w, cause) -> dict:
    return {"op": op, "shard": None, "worker": w.index, "cause": cause}


def _tree_reads(c):
    """A reduction tree command as a command reading its input's shards (all of them: for
    the fusion index, more reads only keep more keys); it names no kernel, so no fusion
    window holds it."""
    spec = c.spec
    n = c.desc.n if type(c.desc) is Mod else len(c.desc.workers)
    reads = tuple(Key(shift(spec.start, s), None) for s in range(n))
    ngroups = len(spec.groups)
    outs = tuple(o if type(o) is int else shift(o, g) for o in spec.outs for g in range(ngroups))
    return Kernel("tree", reads, outs, None, None, False)


def _key(s, base, inkeys):
    return base + s[1] if s[0] == _FRESH else s[1] if s[0] == _FIXED else inkeys[s[1]][s[2]]


def _encoded(stack):
    """A :class:`.stacked.Stack` with its symbols encoded (:func:`_sym`), or None."""
    if stack is None:
        return None
    return stack._replace(
        ins=[[_sym(k) for k in ins] for ins in stack.ins],
        keep=[(t, [None if k is None else _sym(k) for k in outs]) for t, outs in stack.keep],
        after=[_sym(k) for k in stack.after],
    )


def _widen(dims: list, shape) -> None:
    """``dims`` (right-aligned) widened to hold ``shape`` under broadcasting."""
    for j in range(1, len(shape) + 1):
        if j > len(dims):
            dims.insert(0, shape[-j])
        elif shape[-j] > dims[-j]:
            dims[-j] = shape[-j]


def _outside(cmds):
    """What a window reads from outside itself: ``(key symbols + slice, constant shapes)``."""
    made, keys, shapes = set(), [], []
    for c in cmds:
        if type(c) is Free:
            continue
        for a in c.args:
            if type(a) is Key and a.key not in made:
                s = _sym(a.key) + (a.slices,)
                if s not in keys:  # (a slice may not be hashable)
                    keys.append(s)
            elif type(a) is Const and isinstance(a.value, np.ndarray):
                shapes.append(a.value.shape)
        made.update(c.outs)
    return tuple(keys), tuple(shapes)
