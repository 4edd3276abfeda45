"""How the reductions of one shipment link its batches (``Executor.submit_tree``).

A reduction queued as one ``Tree`` layout command (:mod:`sharded.core.tree`) names, per group,
the workers of its fan-in tree. When a flush ships, each child's batch returns its partials as
extra values and its parent's batch takes them as refs, so children must be dispatched before
their parents and no set of trees may close a cycle (a batch would wait for its own result).
With mailboxes (:mod:`.mailbox`) the parent takes them from its mailbox instead and the refs
form is what the recovery log keeps: the same links, the same order.
"""

from __future__ import annotations

import collections

from ..commands import Tree

_WIRED: dict = {}


def wired(bc, order):
    """:func:`_wire`, cached by the trees' group tuples (the planner's cached objects: the
    cache keeps them alive, so their ids stay theirs) and the workers shipped to."""
    trees = [c.spec for c in bc if type(c) is Tree]
    key = (tuple((id(t.groups), len(t.outs), t.fan) for t in trees), tuple(order))
    hit = _WIRED.get(key)
    if hit is not None and all(a is t.groups for a, t in zip(hit[0], trees)):
        return hit[1]
    if len(_WIRED) > 256:
        _WIRED.clear()
    out = _wire(bc, order)
    _WIRED[key] = ([t.groups for t in trees], out)
    return out


def _wire(bc, order):
    """How the trees among layout commands ``bc`` link the batches of one shipment:
    ``(order, kids, nout)`` = the workers in an order that puts every child before its
    parent, ``kids[v]`` the worker whose next partial each ref of ``v``'s batch is (in the
    order ``v``'s trees take them) and ``nout[v]`` the partials ``v``'s batch returns."""
    kids, nout = {}, {}
    for c in bc:
        if type(c) is not Tree:
            continue
        spec = c.spec
        nparts, fan = len(spec.outs), spec.fan
        for group in spec.groups:
            parts = group.parts
            for p in range(1, len(parts)):  # ascending: the order the parent takes them
                k, n = parts[p], nout.get(parts[p], 0)
                kids.setdefault(parts[(p - 1) // fan], []).extend((k, n + i) for i in range(nparts))
                nout[k] = n + nparts
    # children first: a depth-first post-order over the child -> parent edges (acyclic),
    # iterative (the trees of one shipment may chain many workers)
    done, out = set(), []
    for v0 in order:
        stack = [(v0, False)]
        while stack:
            v, ready = stack.pop()
            if ready:
                out.append(v)
            elif v not in done:
                done.add(v)
                stack.append((v, True))
                stack += [(k, False) for k, _ in reversed(kids.get(v, ())) if k not in done]
    return out, kids, nout


def feeding(workers, kids) -> list:
    """``workers`` and the workers whose partials their batches took (transitively)."""
    out = dict.fromkeys(workers)
    todo = list(out)
    while todo and kids:
        for k, _ in kids.get(todo.pop(), ()):
            if k not in out:
                out[k] = None
                todo.append(k)
    return list(out)


def cycle(edges, new=()) -> bool:
    """Whether ``edges`` (child -> parents) with the ``new`` ``(child, parent)`` pairs have a
    cycle (a batch would wait for its own result). Kahn's algorithm: a graph is acyclic iff
    repeatedly removing the nodes nothing points to removes them all.

    Examples
    --------
    >>> cycle({0: {1}}, [(1, 2)]), cycle({0: {1}}, [(1, 0)])
    (False, True)
    """
    graph = collections.defaultdict(set)
    for c, ps in edges.items():
        graph[c] |= set(ps)
    for c, p in new:
        graph[c].add(p)
    indeg = collections.Counter(p for ps in graph.values() for p in ps)
    free = [v for v in graph if not indeg[v]]
    seen = 0
    while free:
        v = free.pop()
        seen += 1
        for p in graph.get(v, ()):
            indeg[p] -= 1
            if not indeg[p]:
                free.append(p)
    nodes = set(graph) | set(indeg)
    return seen < len(nodes)


def has_cycle(pairs) -> bool:
    """Whether the ``(child, parent)`` ``pairs`` have a cycle.

    Examples
    --------
    >>> has_cycle([(1, 0), (2, 1)]), has_cycle([(1, 0), (0, 1)])
    (False, True)
    """
    return cycle({}, pairs)
