"""A stored ``st.jit`` program, compiled once on the worker so that a call is a tight loop.

A program (``("progdef", pid, cmds)``, see :mod:`sharded.jit.recorder`) is this worker's per-shard
commands with keys written as symbols: ``("f", offset)`` (made by the call: ``base +
offset``), ``("i", input, shard)`` (an input's key) or a plain key (captured). Run through the
generic batch path, every call would rebuild the commands with their keys bound, look for
fusable windows, and dispatch each command through :meth:`Worker._step` and
:meth:`Worker._kernel` (about 8 us a command: the 200-op chain of issue 17 spent 3.2 ms of
worker time a call on it). :class:`Compiled` does that work once, at definition:

* each kernel command becomes a step with its kernel function looked up, its operand and
  output symbols encoded as small tuples, its constants already on the device;
* the fusion windows (:func:`.fusion.windows`) and the reference index that decides which
  keys stay internal to a fused group (:class:`.fusion.References`, over the symbols: a key
  made by the call has exactly one symbol) are computed once. A call runs a window fused
  only when the operands it reads from outside could make an output as large as the
  worker's ``fusion_min`` (the broadcast of their shapes bounds every output's); otherwise
  (tiny tensors) its commands run in the loop like the others, exactly as the unfused path
  would run them;
* a pooled kernel (one that may write into a recycled block) is offered the pool only while
  its output is large enough to be pooled at all (the pool holds blocks of at least
  ``POOL_MIN_BYTES``; asking costs a broadcast of the shapes per command).

Results and error records are those of the generic path: the same kernels with the same
arguments in the same order; a missing or poisoned operand poisons the outputs, a failing
kernel records its error, and the call goes on.
"""

from __future__ import annotations

import math

import numpy as np

from . import fusion

POOL_MIN_BYTES = 1 << 20  # the worker's pool keeps no smaller block (worker.POOL_MIN_BYTES)
_FRESH, _INPUT, _FIXED = 1, 2, 3  # how a key symbol binds (a constant operand is 0)


def _sym(k):
    """``(how, a, b)`` for key symbol ``k`` (see the module docstring)."""
    if type(k) is tuple:
        return (_FRESH, k[1], 0) if k[0] == "f" else (_INPUT, k[1], k[2])
    return (_FIXED, k, 0)


class Compiled:
    """Worker ``w``'s part of one program, ready to run with :meth:`run`.

    Examples
    --------
    >>> from sharded.runtime.worker.core import Worker
    >>> w = Worker(0)
    >>> w.store[7] = np.zeros(3)
    >>> x1 = ("add", (("k", ("i", 0, 0), None), ("c", 1.0)), (("f", 0),), {}, None, False)
    >>> x2 = ("mul", (("k", ("f", 0), None), ("c", 3.0)), (("f", 1),), {}, None, False)
    >>> p = Compiled([x1, x2, ("free", [("f", 0)])], w.kernels)
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
        """Steps: runs of plain steps (``("p", steps)``) and fusion windows (``("w", start,
        end, what it reads from outside, its commands as plain steps)``)."""
        cmds = self.cmds
        # a reduction tree reads every shard of its input: for the fusion index, a command
        # that reads them (a group's output it reads is then never internal to the group)
        seen = [_tree_reads(c) if c[0] == "tree" else c for c in cmds]
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
                steps.append(("p", plain))
                plain = []
            inner = [self._step(j, kernels) for j in range(i, end)]
            steps.append(("w", i, end, _outside(cmds[i:end]), inner))
            i = end
        if plain:
            steps.append(("p", plain))
        self.steps = steps

    def _step(self, i, kernels):
        c = self.cmds[i]
        if c[0] == "tree":  # (desc, spec): Worker._tree with its keys bound
            spec = c[2]
            return ("T", c[1], spec, _sym(spec[4]), tuple(_sym(o) for o in spec[5]))
        if c[0] == "free":
            syms = [_sym(k) for k in c[1]]
            if all(s[0] == _FRESH for s in syms):
                return ("F", tuple(s[1] for s in syms))
            return ("FK", tuple(syms))
        head, args, outs, params, label, inplace = c
        fn = kernels.get(head)
        enc = []
        for a in args:
            if a[0] == "k":
                enc.append(_sym(a[1]) + (a[2],))
            elif a[0] == "c":
                enc.append((0, a[1], 0, None))
            else:
                raise ValueError(f"a stored program cannot take operand {a[0]!r} ({head})")
        pooled = fn is not None and getattr(fn, "pooled", False) and not inplace
        outs = tuple(_sym(k) for k in outs)
        return ("K", fn, tuple(enc), outs, params or {}, label, inplace, pooled, head, i)

    # ------------------------------------------------------------------ running
    def run(self, w, base, inkeys) -> list:
        """Run on worker ``w`` with the fresh keys from ``base`` and the inputs' keys
        ``inkeys``; returns the error records."""
        if self.steps is None:
            self._compile(w.kernels)
        errors: list = []
        fuse = w.fusion and w.xp is np
        for st in self.steps:
            if st[0] == "p":
                self._run(w, st[1], base, inkeys, errors)
            elif fuse and self._large(w, st[3], base, inkeys):
                self._fused(w, st, base, inkeys, errors)
            else:
                self._run(w, st[4], base, inkeys, errors)
        return errors

    def _run(self, w, steps, base, inkeys, errors) -> None:
        """The tight loop: :meth:`Worker._kernel` and :meth:`Worker._free` for steps."""
        store, poisoned, xp, big = w.store, w.poisoned, w.xp, self.big
        cons = w.backend.to_device
        ran = 0
        for st in steps:
            tag = st[0]
            if tag == "F":
                w._free([base + o for o in st[1]])
                continue
            if tag == "FK":
                w._free([_key(s, base, inkeys) for s in st[1]])
                continue
            if tag == "T":
                _, desc, spec, start, outs = st
                outs = tuple(_key(o, base, inkeys) for o in outs)
                spec = spec[:4] + (_key(start, base, inkeys), outs) + spec[6:]
                w._tree(spec, set(w.mine(desc)), (), errors)
                continue
            _, fn, args, outs, params, label, inplace, pooled, head, i = st
            ran += 1
            keys = [
                base + o[1] if o[0] == _FRESH else o[1] if o[0] == _FIXED else inkeys[o[1]][o[2]]
                for o in outs
            ]
            if inplace and w.published_seen:
                w._detach(keys)
            vals = []
            try:
                for t, a, b, sl in args:
                    if t == 0:
                        vals.append(cons(a) if isinstance(a, np.ndarray) else a)
                        continue
                    k = base + a if t == _FRESH else a if t == _FIXED else inkeys[a][b]
                    arr = store.get(k)
                    if arr is None:
                        raise _Missing(k)
                    vals.append(arr if sl is None else arr[sl])
                if fn is None:
                    raise KeyError(head)
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
                failed(e, label or (head, None), w.index, keys, inplace, store, poisoned, errors)
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

    def _fused(self, w, st, base, inkeys, errors) -> None:
        """A window through :func:`.fusion.run_window`, its commands bound to keys."""
        _, start, end, _, inner = st
        cmds: list = [None] * end
        for j, s in zip(range(start, end), inner):
            if s[0] == "F":
                cmds[j] = ("free", [base + o for o in s[1]])
            elif s[0] == "FK":
                cmds[j] = ("free", [_key(k, base, inkeys) for k in s[1]])
            else:
                c = self.cmds[j]
                args = tuple(
                    ("k", _key(e, base, inkeys), e[3]) if e[0] else a for a, e in zip(c[1], s[2])
                )
                outs = tuple(_key(o, base, inkeys) for o in s[3])
                cmds[j] = (c[0], args, outs, c[3], c[4], c[5])
        fusion.run_window(w, cmds, start, end, (), errors, _Index(self))


class _Index:
    """:class:`.fusion.References` asked with bound keys, answered from the symbolic index
    (the key a command makes is its output symbol)."""

    def __init__(self, prog):
        self.prog = prog

    def internal(self, key, made_at, members) -> bool:
        sym = self.prog.cmds[made_at][2][0]
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
    rec = {"op": label[0], "shard": label[1], "worker": index, "cause": f"{type(e).__name__}: {e}"}
    for k in outs:
        if not inplace:
            store.pop(k, None)
        poisoned[k] = rec
    errors.append(dict(rec, cascade=False))


def _record(op, w, cause) -> dict:
    return {"op": op, "shard": None, "worker": w.index, "cause": cause}


def _tree_reads(c) -> tuple:
    """A reduction tree command as a command reading its input's shards (all of them: for
    the fusion index, more reads only keep more keys)."""
    spec, n = c[2], len(c[1])
    start = spec[4]
    reads = tuple(
        ("k", start + s if type(start) is int else start[:-1] + (start[-1] + s,), None)
        for s in range(n)
    )
    outs = tuple(
        o if type(o) is int else ("f", o[1] + g) for o in spec[5] for g in range(len(spec[9]))
    )
    return ("tree", reads, outs, None, None, False)


def _key(s, base, inkeys):
    return base + s[1] if s[0] == _FRESH else s[1] if s[0] == _FIXED else inkeys[s[1]][s[2]]


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
        if c[0] == "free":
            continue
        for a in c[1]:
            if a[0] == "k" and a[1] not in made:
                s = _sym(a[1]) + (a[2],)
                if s not in keys:  # (a slice may not be hashable)
                    keys.append(s)
            elif a[0] == "c" and isinstance(a[1], np.ndarray):
                shapes.append(a[1].shape)
        made.update(c[2])
    return tuple(keys), tuple(shapes)
