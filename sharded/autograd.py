"""Reverse-mode autograd over sharded primitives.

Every primitive applied to a tensor that requires grad records a :class:`Node` (its
``grad_fn``). ``backward`` walks the nodes reachable from the targets in reverse topological
order and applies each primitive's vector-Jacobian product from the gradient table
(``gradients.py``). VJPs are written with sharded ops, so backward runs shard-parallel, and
every gradient is resharded to its primal's layout: the gradient of a replicated parameter
used with row-sharded data is a sum over all shards, combined by a tree reduction across the
workers and then broadcast back to every replica (an all-reduce, never via the driver).

torch's rules hold: in-place ops on a leaf that requires grad raise; each tensor carries a
version counter (shared with its views) and a node checks the versions of what it saved, so
modifying a saved tensor before backward raises; a graph is freed by ``backward`` unless
``retain_graph=True``.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import dtypes as D
from .core.dispatch import apply, hooks
from .core.registry import COMPOSITES, NONDIFF, PRIMITIVES, bind
from .errors import ArgumentError, AutogradError, ShapeError, ShardedError  # noqa: F401
from .grad_mode import (  # noqa: F401  (st.autograd.no_grad... as torch.autograd's)
    RemovableHandle,
    _alias,
    _state,
    detach,
    detach_,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    register_hook,
    retain_grad,
    set_grad_enabled,
)
from .ops.creation.prims import from_numpy, ones_like, tensor
from .tensor import ShardedTensor


class GradShapeError(AutogradError, ShapeError):
    """A ``gradient=`` whose shape differs from its output's (a RuntimeError, as in torch,
    and a ValueError)."""


# ------------------------------------------------------------------------------- nodes
class Node:
    """The record of one primitive application: how to send gradients to its inputs."""

    __slots__ = (
        "prim",
        "args",
        "params",
        "saved",
        "versions",
        "n_out",
        "freed",
        "hooks",
        "retain",
        "__weakref__",
    )

    def __init__(self, prim, args, params, saved, n_out, saves=()):
        self.prim, self.args, self.params, self.n_out = prim, args, params, n_out
        self.saved = saved
        read = [args[i] for i in saves if isinstance(args[i], ShardedTensor)]
        self.versions = [(t, t._vc[0]) for t in read] + [
            (t, t._vc[0]) for ts in saved.values() for t in ts if t is not None
        ]
        self.freed = False
        self.hooks = None  # {output index: {handle id: fn}} from register_hook on outputs
        self.retain = None  # {output index: weakref to the tensor that called retain_grad()}

    def name(self) -> str:
        """torch-style name, e.g. ``MulBackward0``."""
        camel = "".join(p.capitalize() for p in self.prim.rstrip("_").split("_"))
        return f"{camel}Backward0"

    @property
    def next_functions(self):
        return tuple(
            (a.grad_fn, a._out_index)
            if isinstance(a, ShardedTensor) and a.requires_grad
            else (None, 0)
            for a in self.args
        )

    def __repr__(self):
        return f"<{self.name()}>"


def _check_inplace(name, target):
    base = target._base
    if not is_grad_enabled() or not (
        target.requires_grad or (base is not None and base.requires_grad)
    ):
        return
    base = target._base
    if target.grad_fn is None or (base is not None and base.requires_grad and base.grad_fn is None):
        raise AutogradError(
            f"a leaf tensor that requires grad (or a view of one) is being "
            f"used in an in-place operation ({name}); wrap it in st.no_grad() "
            f"or use an out-of-place op"
        )
    rule = PRIMITIVES.get(name)
    if rule is not None and 0 in rule.saves:  # the rule reads the value about to be overwritten
        with no_grad():
            _state.old_value = target.clone()


def _record(name, args, params, out, target):
    if not _state.enabled:  # (is_grad_enabled, inline: every op passes here)
        return
    for a in args:  # (a loop: any() over a generator costs 0.13 us more, on every op)
        if isinstance(a, ShardedTensor) and a._requires_grad:
            break
    else:
        return
    rule = PRIMITIVES.get(name) or COMPOSITES.get(name)
    outs = out if isinstance(out, tuple) else (out,)
    if rule is not None and not rule.differentiable:
        return
    if target is not None:  # the op consumed target's old value: keep its graph position
        old = _state.old_value
        old = _alias(target) if old is None else old
        _state.old_value = None
        old.requires_grad, old.grad_fn = target.requires_grad, target.grad_fn
        old._out_index = target._out_index
        if target._retains_grad and old.grad_fn is not None and old.grad_fn.retain:
            old.grad_fn.retain.pop(target._out_index, None)  # it moves to the new version
        args = tuple(old if a is target else a for a in args)
    args = tuple(_snapshot(a) for a in args)
    saved = {}
    if rule is not None and rule.save_out:  # True: every output; a tuple: those positions
        keep = range(len(outs)) if rule.save_out is True else rule.save_out
        saved["out"] = tuple(_alias(o) if i in keep else None for i, o in enumerate(outs))
    node = Node(
        name,
        args,
        {k: v for k, v in params.items() if k != "target"},
        saved,
        len(outs),
        rule.saves if rule is not None else (),
    )
    for i, o in enumerate(outs):
        if D.category(o.dtype) >= 2:  # floating and complex results carry gradients
            o.requires_grad, o.grad_fn, o._out_index = True, node, i
    if target is not None and target._retains_grad:
        node.retain = {target._out_index: weakref.ref(target)}
    if target is not None and target._base is not None and target._view_chain:
        _copy_slices(target)


def _snapshot(a):
    """A non-leaf input as it is now: later in-place ops change the tensor's grad_fn, but this
    node's gradient must reach the node that produced the value it used."""
    if not isinstance(a, ShardedTensor) or a.grad_fn is None:
        return a
    s = _alias(a)
    s.requires_grad, s.grad_fn, s._out_index = a.requires_grad, a.grad_fn, a._out_index
    s._retains_grad, s._origin = a._retains_grad, a
    return s


def _copy_slices(view):
    """After an in-place op on ``view``, route the base's gradient through it: the base's new
    grad_fn sends the view's region to the view's graph and the rest to the base's old one
    (torch's CopySlices)."""
    base = view._base
    old = _alias(base)
    old.requires_grad, old.grad_fn, old._out_index = (
        base.requires_grad,
        base.grad_fn,
        base._out_index,
    )
    new_view = _alias(view)
    new_view.requires_grad, new_view.grad_fn = True, view.grad_fn
    new_view._out_index = view._out_index
    node = Node("copy_slices", (old, new_view), {"chain": view._view_chain}, {}, 1)
    base.requires_grad, base.grad_fn, base._out_index = True, node, 0


def replay(t, chain):
    """Apply a view's recorded steps to ``t`` (a tensor laid out like the view's base)."""
    for name, args, params in chain:
        t = apply(name, t, *args, **params)
    return t


def _copy_slices_vjp(gs, node):
    """The base's gradient after an in-place op on a view: the view's region goes to the
    view's graph, the rest (the overwritten region zeroed) to the base's old one."""
    g = gs[0]
    chain = node.params["chain"]
    old, _ = node.args
    rest = None
    if isinstance(old, ShardedTensor) and old.requires_grad:
        rest = g.clone()
        replay(rest, chain).zero_()
    return rest, replay(g, chain)


# gradient rules of nodes the engine makes itself (not primitives)
_ENGINE_RULES = {"copy_slices": _copy_slices_vjp}

hooks.check_inplace = _check_inplace
hooks.record = _record


# ------------------------------------------------------------------------------ backward
def _topo(roots):
    """Nodes reachable from ``roots`` in topological order (inputs before users)."""
    order, seen = [], set()
    for r in roots:
        if r is None or id(r) in seen:
            continue
        stack = [(r, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for a in node.args:
                if (
                    isinstance(a, ShardedTensor)
                    and a.grad_fn is not None
                    and id(a.grad_fn) not in seen
                ):
                    stack.append((a.grad_fn, False))
    return order


def _accumulate(old, new):
    return new if old is None else old + new


# Complex gradients: the engine carries the conjugate of torch's gradient (JAX's cotangent),
# in which a holomorphic op's rule is the real chain rule ``g * f'(z)``, so every rule written
# for reals holds for complex too. What users see and give (``.grad``, ``autograd.grad``,
# ``backward(gradient=)``) is torch's ``dL/d(re) + i dL/d(im)``: conjugated at the boundary.
def _user(g):
    """A gradient between the engine's convention and the user's (conj; reals unchanged)."""
    return g.conj() if g is not None and g.dtype.is_complex else g


def _conform(g, t, prim):
    """Check a gradient against its primal and lay it out like the primal."""
    if tuple(g.shape) != tuple(t.shape):
        raise AutogradError(
            f"the gradient rule of '{prim}' returned shape {tuple(g.shape)} "
            f"for an input of shape {tuple(t.shape)}"
        )
    if g.dtype.is_complex and not t.dtype.is_complex:
        g = g.real  # a real input of a complex op: d/d(re) only, as torch
    if g.dtype != t.dtype:
        g = g.to(t.dtype)
    if g.layout != t.layout:  # e.g. a replicated parameter: all-reduce its partial sums
        g = g.reshard(layout=t.layout)
    return g


def _run(roots, root_grads, retain_graph, create_graph, capture=None):
    """Backpropagate; returns captured gradients for the tensors in ``capture``."""
    captured = {} if capture is None else {id(t): None for t in capture}
    pending = {}  # id(node) -> list of output grads
    leaves = {}  # id(leaf) -> [leaf, summed grad]: its hooks see the total, as torch's

    def send(t, g):
        if t.grad_fn is None:
            if id(t) in captured or (capture is None and t.requires_grad):
                entry = leaves.setdefault(id(t), [t, None])
                entry[1] = _accumulate(entry[1], g)
            return
        slot = pending.setdefault(id(t.grad_fn), [None] * t.grad_fn.n_out)
        slot[t._out_index] = _accumulate(slot[t._out_index], g)

    for r, g in zip(roots, root_grads):
        send(r, g)
    nodes = _topo([r.grad_fn for r in roots])
    targets = {(id(t.grad_fn), t._out_index): t for t in (capture or []) if t.grad_fn}
    for node in reversed(nodes):
        gouts = pending.pop(id(node), None)
        if gouts is None or all(g is None for g in gouts):
            continue
        if node.hooks:  # register_hook on an output: it may replace the output's gradient
            with set_grad_enabled(create_graph):
                gouts = [
                    _hooked(g, node.hooks.get(i)) if g is not None else g
                    for i, g in enumerate(gouts)
                ]
        for i, ref in (node.retain or {}).items():  # retain_grad: after the hooks, as torch
            t = ref()
            if t is not None and gouts[i] is not None:
                t.grad = _accumulate(t.grad, _user(gouts[i]))
        for i, g in enumerate(gouts):
            t = targets.get((id(node), i))
            if t is not None and g is not None:
                captured[id(t)] = _accumulate(captured[id(t)], g)
        if node.freed:
            raise AutogradError(
                f"trying to backward through the graph a second time (through "
                f"{node.name()}); its saved tensors were freed. Specify "
                f"retain_graph=True the first time"
            )
        for t, v in node.versions:
            if t._vc[0] != v:
                raise AutogradError(
                    f"one of the tensors needed for gradient computation has "
                    f"been modified by an inplace operation: it was saved by "
                    f"{node.name()} at version {v} and is now at version "
                    f"{t._vc[0]}"
                )
        rule = (
            _ENGINE_RULES.get(node.prim) or (PRIMITIVES.get(node.prim) or COMPOSITES[node.prim]).vjp
        )
        if rule is None or rule == NONDIFF:
            raise AutogradError(f"the derivative of '{node.prim}' is not implemented")
        # a rule that reads the saved output (exp's g * out) must differentiate through it
        # under create_graph: link the saved output to this node only while the rule runs
        # (a lasting link would be a node <-> tensor cycle that frees shards late)
        linked = [
            (i, o)
            for i, o in enumerate(node.saved.get("out", ()) if create_graph else ())
            if o is not None and D.category(o.dtype) >= 2
        ]
        for i, o in linked:
            o.requires_grad, o.grad_fn, o._out_index = True, node, i
        try:
            with set_grad_enabled(create_graph):
                gins = rule(gouts, node)
        finally:
            for _, o in linked:
                o.grad_fn, o.requires_grad = None, False
        if len(gins) != len(node.args):
            raise AutogradError(
                f"the gradient rule of '{node.prim}' returned {len(gins)} "
                f"gradients for {len(node.args)} inputs"
            )
        for a, g in zip(node.args, gins):
            if g is None or not isinstance(a, ShardedTensor) or not a.requires_grad:
                continue
            with set_grad_enabled(create_graph):
                g = _conform(g, a, node.prim)
            send(a, g)
        if not retain_graph:
            node.freed = True
            node.saved = {}
    for t, g in leaves.values():
        if t._hooks:
            with set_grad_enabled(create_graph):
                g = _hooked(g, t._hooks)
        if id(t) in captured:
            captured[id(t)] = g
            continue
        g = _user(g)
        t.grad = (
            g.clone()
            if t.grad is None and (g._readonly or g._base is not None)
            else _accumulate(t.grad, g)
        )
    return [_user(captured[id(t)]) for t in capture] if capture is not None else None


def _hooked(g, hooks):
    """``g`` after the tensor hooks (in registration order); each sees and returns torch's
    convention, a ``None`` result keeps the gradient."""
    for fn in list((hooks or {}).values()):
        out = fn(_user(g))
        if out is not None:
            g = _user(out if isinstance(out, ShardedTensor) else tensor(out, dtype=g.dtype))
    return g


def _root_grads(outputs, grad_outputs):
    out = []
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(o, ShardedTensor) or not o.requires_grad:
            raise AutogradError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if o.dtype.is_complex:
                raise AutogradError(
                    f"grad can be implicitly created only for real scalar outputs but got "
                    f"{o.dtype.name}"
                )
            if o.numel() != 1:
                raise AutogradError(
                    f"grad can be implicitly created only for scalar outputs "
                    f"(got shape {tuple(o.shape)}); pass gradient="
                )
            g = ones_like(o)
        elif not isinstance(g, ShardedTensor):
            g = tensor(g, dtype=o.dtype)
        if tuple(g.shape) != tuple(o.shape):
            raise GradShapeError(
                f"mismatch in shape: grad_output[{i}] has a shape of "
                f"{tuple(g.shape)} and output[{i}] has a shape of "
                f"{tuple(o.shape)}"
            )
        out.append(_user(g))
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (only of
    ``inputs`` when given).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0], requires_grad=True)
    >>> st.autograd.backward(-(x * x).sum()); x.grad.tolist()
    [-2.0]
    """
    tensors = [tensors] if isinstance(tensors, ShardedTensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, ShardedTensor):
        grad_tensors = [grad_tensors]
    gs = _root_grads(tensors, grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is None:
        _run(tensors, gs, retain, create_graph)
        return
    inputs = [inputs] if isinstance(inputs, ShardedTensor) else list(inputs)
    if not inputs:
        raise ArgumentError("backward: inputs= cannot be empty")
    for t, g in zip(inputs, _run(tensors, gs, retain, create_graph, capture=inputs)):
        if g is not None:  # as torch: the gradient goes to .grad of these tensors only
            t.grad = g.clone() if t.grad is None else _accumulate(t.grad, g)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    materialize_grads=False,
):
    """Gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left alone), a tuple
    with one entry per input; an unused input is an error unless ``allow_unused`` (then
    ``None``, or zeros with ``materialize_grads=True``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([3.0], requires_grad=True)
    >>> st.autograd.grad((x * x).sum(), x)[0].tolist()
    [6.0]
    """
    if materialize_grads and allow_unused is False:
        raise ArgumentError(
            "Expected allow_unused to be True or not passed when materialize_grads=True"
        )
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    outputs = [outputs] if isinstance(outputs, ShardedTensor) else list(outputs)
    single = isinstance(inputs, ShardedTensor)
    inputs = [inputs] if single else list(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, ShardedTensor) or not t.requires_grad:
            raise AutogradError(f"input {i} of grad() does not require grad")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, ShardedTensor):
        grad_outputs = [grad_outputs]
    gs = _root_grads(outputs, grad_outputs)
    res = _run(
        outputs,
        gs,
        create_graph if retain_graph is None else retain_graph,
        create_graph,
        capture=inputs,
    )
    for i, r in enumerate(res):
        if r is None and not allow_unused:
            raise AutogradError(
                f"one of the differentiated tensors (input {i}) appears to "
                f"not have been used in the graph; set allow_unused=True if "
                f"this is the desired behavior"
            )
    if materialize_grads:
        res = [r if r is not None else t.detach().new_zeros(t.shape) for r, t in zip(res, inputs)]
    return tuple(res)


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Compare the autograd Jacobian of ``fn`` with central finite differences.

    ``inputs`` are float64 or complex128 tensors that require grad; ``fn`` returns a tensor
    (or a tuple, of which every floating or complex output is checked). Complex values count
    as their (real, imaginary) pairs: the gradient of each real coordinate of an output is
    compared in torch's convention (``d/d(re) + i d/d(im)``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([0.3, 0.7], dtype=st.float64, requires_grad=True)
    >>> st.autograd.gradcheck(lambda t: (t * t).exp(), (x,))
    True
    >>> z = st.tensor([1 + 2j], dtype=st.complex128, requires_grad=True)
    >>> st.autograd.gradcheck(lambda t: (t * t).exp(), (z,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, ShardedTensor) else tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, ShardedTensor) and t.requires_grad]
    for i in diff:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            raise ArgumentError(
                f"gradcheck expects float64 or complex128 inputs, input {i} is "
                f"{inputs[i].dtype.name}"
            )

    def outs(args):
        o = fn(*args)
        o = o if isinstance(o, tuple) else (o,)
        return [t for t in o if isinstance(t, ShardedTensor) and D.category(t.dtype) >= 2]

    def coords(v):  # real coordinates: complex values as (re, im) pairs
        v = np.asarray(v).reshape(-1)
        return np.concatenate([v.real, v.imag]) if v.dtype.kind == "c" else v

    base = outs(inputs)
    for k, out in enumerate(base):
        cplx_out = out.dtype.is_complex
        for i in diff:
            x = inputs[i]
            xv = x.detach().numpy()
            steps = [1.0, 1j] if xv.dtype.kind == "c" else [1.0]
            numeric = []
            for step in steps:
                for j in range(xv.size):
                    vals = []
                    for sgn in (1, -1):
                        pert = xv.copy().reshape(-1)
                        pert[j] += sgn * eps * step
                        args = list(inputs)
                        with no_grad():
                            args[i] = from_numpy(pert.reshape(xv.shape), layout=x.layout)
                            vals.append(coords(outs(args)[k].detach().numpy()))
                    numeric.append((vals[0] - vals[1]) / (2 * eps))
            numeric = np.stack(numeric, axis=1)
            analytic = np.zeros_like(numeric)
            for r in range(numeric.shape[0]):  # seed 1 picks re(out_r), 1j picks im(out_r)
                e = np.zeros(out.numel(), out.dtype.np)
                e[r % out.numel()] = 1j if cplx_out and r >= out.numel() else 1.0
                go = from_numpy(e.reshape(tuple(out.shape)), layout=out.layout)
                g = grad(out, x, grad_outputs=go, retain_graph=True, allow_unused=True)[0]
                if g is not None:
                    analytic[r] = coords(g.detach().numpy())
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                if raise_exception:
                    raise AutogradError(
                        f"Jacobian mismatch for output {k} with respect to input {i}:\n"
                        f"numerical:{numeric}\nanalytical:{analytic}"
                    )
                return False
    return True


# ------------------------------------------------------------------ tensor methods
@bind("backward")
def _backward_method(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` is required
    unless ``self`` has one element).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.ones(4, requires_grad=True)
    >>> (a * 5).sum().backward(); a.grad.tolist()
    [5.0, 5.0, 5.0, 5.0]
    """
    backward(self, gradient, retain_graph, create_graph, inputs)
