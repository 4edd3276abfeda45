from typing import Any

from sharded.optim import lr_scheduler as lr_scheduler

class Optimizer:
    """Holds parameter groups (``params`` or a list of dicts) and per-parameter state."""

    defaults: Any
    param_groups: Any
    state: Any
    def __init__(self, params, defaults) -> None: ...
    def load_state_dict(self, state_dict) -> None:
        """Take hyper-parameters and per-parameter state from ``state_dict`` (as made by
        :meth:`state_dict`, possibly through ``st.save``/``st.load``). State tensors are
        copied into the layout and dtype of their parameter, so steps after it run where the
        parameters live and equal those of an uninterrupted run."""
    def state_dict(self) -> dict:
        """torch's structure: ``{"state": {i: {...}}, "param_groups": [{..., "params": [i,
        ...]}]}``, parameters numbered across the groups in order; the state holds the live
        tensors (``st.save`` it, or ``load_state_dict`` copies it)."""
    def step(self) -> None: ...
    def zero_grad(self, set_to_none=...) -> None:
        """Reset the gradients of every parameter."""

class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``: ``sum += g²``, step ``clr * g / (sqrt(sum) + eps)``
    with ``clr = lr / (1 + (t - 1) lr_decay)``. The state exists from construction (``sum``
    starts at ``initial_accumulator_value``), as in torch. Like torch's, it has no
    ``capturable`` flag; a step traced by ``st.jit`` turns the count into a tensor (see
    :mod:`sharded.optim.capture`), so ``lr_decay`` replays too."""

    def __init__(
        self,
        params,
        lr=...,
        lr_decay=...,
        weight_decay=...,
        initial_accumulator_value=...,
        eps=...,
        foreach=...,
        *,
        maximize=...,
        differentiable=...,
        fused=...,
    ) -> None: ...
    def step(self) -> None: ...

class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``: bias-corrected moments, optional L2 ``weight_decay``
    (added to the gradient) and ``amsgrad`` (the running maximum of the second moment)."""

    def __init__(
        self,
        params,
        lr=...,
        betas=...,
        eps=...,
        weight_decay=...,
        amsgrad=...,
        *,
        foreach=...,
        maximize=...,
        capturable=...,
        differentiable=...,
        fused=...,
        decoupled_weight_decay=...,
    ) -> None: ...
    def step(self) -> None: ...

class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``: ``v = alpha v + (1 - alpha) g²``, step ``lr * g /
    (sqrt(v) + eps)`` (``centered``: the variance ``v - mean(g)²``; with ``momentum`` the
    step goes through a buffer). ``capturable=True`` counts steps in a tensor (as
    :class:`Adam`; a step traced by ``st.jit`` does so anyway)."""

    def __init__(
        self,
        params,
        lr=...,
        alpha=...,
        eps=...,
        weight_decay=...,
        momentum=...,
        centered=...,
        capturable=...,
        foreach=...,
        maximize=...,
        differentiable=...,
    ) -> None: ...
    def step(self) -> None: ...

class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``."""

    def __init__(
        self,
        params,
        lr=...,
        momentum=...,
        dampening=...,
        weight_decay=...,
        nesterov=...,
        *,
        maximize=...,
        foreach=...,
        differentiable=...,
        fused=...,
    ) -> None: ...
    def step(self) -> None: ...

class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``): each step first shrinks the
    parameter by ``lr * weight_decay``, then applies the Adam update (with ``amsgrad``, the
    running maximum of the second moment; ``capturable`` as for :class:`Adam`)."""

    def __init__(
        self,
        params,
        lr=...,
        betas=...,
        eps=...,
        weight_decay=...,
        amsgrad=...,
        *,
        maximize=...,
        foreach=...,
        capturable=...,
        differentiable=...,
        fused=...,
    ) -> None: ...
