"""Adaptive optimizers with torch's update rules: ``Adam``, ``AdamW``, ``RMSprop``,
``Adagrad``.

Like ``SGD`` the updates run in place on the parameters' shards; state tensors are made
``zeros_like`` the parameter, so they live where the parameter lives. Step counts follow
:mod:`.capture`: Python ints, or 0-d tensors advanced in place when ``capturable`` or traced
by ``st.jit``, so that a jitted training step replays.
"""

from __future__ import annotations

from ..autograd import no_grad
from ..errors import ArgumentError
from ..ops.creation.prims import full_like, zeros_like
from ..ops.elementwise.prims.binary_math import maximum
from .capture import advance, bias_corrections
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW", "RMSprop", "Adagrad"]


def _check(name, **values):
    bad = {k: v for k, v in values.items() if not v >= 0}
    if bad:
        raise ArgumentError(f"invalid {name} hyper-parameters: " + ", ".join(
            f"{k}={v}" for k, v in bad.items()))  # fmt: skip


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``: bias-corrected moments, optional L2 ``weight_decay``
    (added to the gradient) and ``amsgrad`` (the running maximum of the second moment).

    ``capturable=True`` keeps the step count as a tensor on the parameter's workers and
    computes the bias corrections with tensor ops, so every step queues the same commands and
    a training step under :func:`sharded.jit.api` replays; a step traced by ``st.jit`` does so
    whatever the flag says (see :mod:`sharded.optim.capture`). The two routes agree to float
    rounding, as torch's do.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.Parameter(st.ones(2))
    >>> opt = st.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); [round(v, 4) for v in w.tolist()]
    [0.9, 0.9]
    >>> opt = st.optim.Adam([w], lr=0.1, capturable=True)
    >>> (w * w).sum().backward(); opt.step(); opt.state[id(w)]["step"].item()
    1.0
    """

    _decoupled = False  # AdamW: weight decay shrinks the parameter instead of the gradient

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0.0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        name = type(self).__name__
        _check(name, lr=lr, eps=eps, weight_decay=weight_decay)
        if not all(0 <= b < 1 for b in betas):
            raise ArgumentError(f"invalid {name} betas {tuple(betas)}: each must be in [0, 1)")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        defaults.update(amsgrad=amsgrad, maximize=maximize, foreach=foreach)
        defaults.update(capturable=capturable, differentiable=differentiable, fused=fused)
        decoupled = decoupled_weight_decay or self._decoupled
        super().__init__(params, dict(defaults, decoupled_weight_decay=decoupled))

    @no_grad()
    def step(self):
        for g, p, state in self._params():
            grad = -p.grad if g.get("maximize") else p.grad
            if g["weight_decay"]:
                if g.get("decoupled_weight_decay", self._decoupled):
                    p.mul_(1 - g["lr"] * g["weight_decay"])
                else:
                    grad = grad + g["weight_decay"] * p
            if not state:
                state["step"] = 0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if g["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p)
            b1, b2 = g["betas"]
            t = advance(g, p, state)  # an int, or the step tensor (capturable / traced)
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m.mul_(b1).add_(grad, alpha=1 - b1)
            v.mul_(b2).add_(grad * grad, alpha=1 - b2)
            if g["amsgrad"]:
                state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], v))
                v = state["max_exp_avg_sq"]
            bc1, bc2_sqrt = bias_corrections(b1, b2, t)
            denom = v.sqrt() / bc2_sqrt + g["eps"]
            p.sub_(m / denom * (g["lr"] / bc1))


class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``): each step first shrinks
    the parameter by ``lr * weight_decay``, then applies the Adam update (with ``amsgrad``,
    the running maximum of the second moment; ``capturable`` as for :class:`Adam`).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.Parameter(st.ones(2))
    >>> opt = st.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward(); opt.step(); [round(v, 4) for v in w.tolist()]
    [0.85, 0.85]
    """

    _decoupled = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``: ``v = alpha v + (1 - alpha) g²``, step
    ``lr * g / (sqrt(v) + eps)`` (``centered``: the variance ``v - mean(g)²``; with
    ``momentum`` the step goes through a buffer). ``capturable=True`` counts steps in a
    tensor (as :class:`Adam`; a step traced by ``st.jit`` does so anyway).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.Parameter(st.ones(2))
    >>> opt = st.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step(); [round(v, 4) for v in w.tolist()]
    [0.9, 0.9]
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0.0,
        momentum=0.0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check("RMSprop", lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum)
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                capturable=capturable,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
            ),
        )

    @no_grad()
    def step(self):
        for g, p, state in self._params():
            grad = -p.grad if g.get("maximize") else p.grad
            if not state:
                state["step"] = 0
                state["square_avg"] = zeros_like(p)
                if g["momentum"] > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if g["centered"]:
                    state["grad_avg"] = zeros_like(p)
            advance(g, p, state)  # counted only (a tensor when capturable or traced)
            if g["weight_decay"]:
                grad = grad + g["weight_decay"] * p
            a = g["alpha"]
            sq = state["square_avg"]
            sq.mul_(a).add_(grad * grad, alpha=1 - a)
            if g["centered"]:
                ga = state["grad_avg"]
                ga.mul_(a).add_(grad, alpha=1 - a)
                avg = (sq - ga * ga).sqrt() + g["eps"]
            else:
                avg = sq.sqrt() + g["eps"]
            if g["momentum"] > 0:
                buf = state["momentum_buffer"]
                buf.mul_(g["momentum"]).add_(grad / avg)
                p.sub_(buf * g["lr"])
            else:
                p.sub_(grad / avg * g["lr"])


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``: ``sum += g²``, step ``clr * g / (sqrt(sum) +
    eps)`` with ``clr = lr / (1 + (t - 1) lr_decay)``. The state exists from construction
    (``sum`` starts at ``initial_accumulator_value``), as in torch. Like torch's, it has no
    ``capturable`` flag; a step traced by ``st.jit`` turns the count into a tensor (see
    :mod:`sharded.optim.capture`), so ``lr_decay`` replays too.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.Parameter(st.ones(2))
    >>> opt = st.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); [round(v, 4) for v in w.tolist()]
    [0.9, 0.9]
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0.0,
        weight_decay=0.0,
        initial_accumulator_value=0.0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _check(
            "Adagrad",
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                eps=eps,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                fused=fused,
            ),
        )
        for g in self.param_groups:
            for p in g["params"]:
                self.state[id(p)] = {
                    "step": 0,
                    "sum": full_like(p, g["initial_accumulator_value"]).detach(),
                }

    @no_grad()
    def step(self):
        for g, p, state in self._params():
            grad = -p.grad if g.get("maximize") else p.grad
            t = advance(g, p, state)  # an int, or the step tensor once traced by st.jit
            if g["weight_decay"]:
                grad = grad + g["weight_decay"] * p
            clr = g["lr"]
            if g["lr_decay"]:  # the decayed rate: a 0-d tensor for a step tensor
                clr = clr / (1 + (t - 1) * g["lr_decay"])
            state["sum"].add_(grad * grad)
            std = state["sum"].sqrt() + g["eps"]
            p.sub_(grad / std * clr)
