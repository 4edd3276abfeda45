"""Optimizer base class and SGD (Adam and the adaptive optimizers: :mod:`.adaptive`)."""

from __future__ import annotations

from ..autograd import no_grad
from ..errors import ArgumentError
from ..ops.creation.prims import zeros_like
from ..tensor import ShardedTensor
from .capture import load_step


class Optimizer:
    """Holds parameter groups (``params`` or a list of dicts) and per-parameter state."""

    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ArgumentError("optimizer got an empty parameter list")
        self.defaults = dict(defaults)
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        for g in groups:
            g = dict(g)
            g["params"] = list(g["params"])
            for k, v in defaults.items():
                g.setdefault(k, v)
            self.param_groups.append(g)
        self.state = {}

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad = p.grad.detach().zero_()

    def step(self):
        raise NotImplementedError

    def state_dict(self) -> dict:
        """torch's structure: ``{"state": {i: {...}}, "param_groups": [{..., "params":
        [i, ...]}]}``, parameters numbered across the groups in order; the state holds the
        live tensors (``st.save`` it, or ``load_state_dict`` copies it).

        Examples
        --------
        >>> import sharded as st
        >>> w = st.nn.Parameter(st.ones(2))
        >>> opt = st.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward(); opt.step()
        >>> sd = opt.state_dict()
        >>> list(sd["state"][0]), sd["param_groups"][0]["params"]
        (['momentum_buffer'], [0])
        """
        index, groups = {}, []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {
            index[id(p)]: dict(self.state[id(p)])
            for g in self.param_groups
            for p in g["params"]
            if self.state.get(id(p))  # torch keeps no entry for a stateless parameter
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict) -> None:
        """Take hyper-parameters and per-parameter state from ``state_dict`` (as made by
        :meth:`state_dict`, possibly through ``st.save``/``st.load``). State tensors are
        copied into the layout and dtype of their parameter, so steps after it run where
        the parameters live and equal those of an uninterrupted run.

        Examples
        --------
        >>> import sharded as st
        >>> w = st.nn.Parameter(st.ones(2))
        >>> opt = st.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step()
        >>> opt2 = st.optim.Adam([w], lr=0.5)
        >>> opt2.load_state_dict(opt.state_dict())
        >>> opt2.param_groups[0]["lr"], opt2.state[id(w)]["step"]
        (0.1, 1)
        """
        saved = list(state_dict["param_groups"])
        if len(saved) != len(self.param_groups):
            raise ArgumentError(
                "loaded state dict has a different number of parameter groups "
                f"({len(saved)}, the optimizer has {len(self.param_groups)})"
            )
        for g, s in zip(self.param_groups, saved):
            if len(g["params"]) != len(s["params"]):
                raise ArgumentError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group ({len(s['params'])} parameters, expected "
                    f"{len(g['params'])})"
                )
        by_index = {
            i: p for g, s in zip(self.param_groups, saved) for i, p in zip(s["params"], g["params"])
        }
        # hyper-parameters a saved group lacks (one saved before an option existed) keep
        # this optimizer's defaults
        groups = [
            {**self.defaults, **s, "params": g["params"]} for g, s in zip(self.param_groups, saved)
        ]
        group_of = {id(p): g for g in groups for p in g["params"]}
        state = {}
        for i, values in state_dict["state"].items():
            p = by_index.get(i)
            if p is not None:
                state[id(p)] = {k: _load(p, group_of[id(p)], k, v) for k, v in values.items()}
        self.state = state
        self.param_groups = groups

    def _params(self):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    yield g, p, self.state.setdefault(id(p), {})


def _load(p, g, key, v):
    """Saved state value ``v`` of parameter ``p`` (in group ``g``) as this optimizer keeps it."""
    if key == "step":  # a count: a Python int, or a step tensor on p's workers (capturable)
        return load_step(p, v, bool(g.get("capturable")))
    return _like(p, v) if isinstance(v, ShardedTensor) else v


def _like(p, v):
    """A copy of state tensor ``v`` with parameter ``p``'s layout and dtype."""
    if v.layout == p.layout and v.dtype == p.dtype:
        return v.detach().clone()
    return zeros_like(p).copy_(v)


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.Parameter(st.ones(2))
    >>> opt = st.optim.SGD([w], lr=0.5)
    >>> (w * w).sum().backward(); opt.step(); w.tolist()
    [0.0, 0.0]
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0.0,
        dampening=0.0,
        weight_decay=0.0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ArgumentError(
                f"invalid SGD hyper-parameters lr={lr}, momentum={momentum}, "
                f"weight_decay={weight_decay}"
            )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ArgumentError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                foreach=foreach,
                differentiable=differentiable,
                fused=fused,
            ),
        )

    @no_grad()
    def step(self):
        for g, p, state in self._params():
            d = -p.grad if g.get("maximize") else p.grad
            if g["weight_decay"]:
                d = d + g["weight_decay"] * p
            if g["momentum"]:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = d.clone()
                else:
                    buf.mul_(g["momentum"]).add_(d, alpha=1 - g["dampening"])
                d = d + g["momentum"] * buf if g["nesterov"] else buf
            p.sub_(d * g["lr"])
