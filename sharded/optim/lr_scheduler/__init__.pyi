from typing import Any

class LRScheduler:
    """Base class: holds ``optimizer``, ``base_lrs`` (each group's ``initial_lr``) and
    ``last_epoch``; subclasses define ``get_lr``."""

    optimizer: Any
    base_lrs: Any
    last_epoch: Any
    def __init__(self, optimizer, last_epoch=...) -> None: ...
    def get_last_lr(self) -> Any:
        """The learning rates of the groups after the last ``step()``."""
    def get_lr(self) -> Any: ...
    def load_state_dict(self, state_dict) -> None:
        """Restore attributes from :meth:`state_dict`."""
    def state_dict(self) -> Any:
        """Every attribute but the optimizer (torch's structure)."""
    def step(self, epoch=...) -> None:
        """Advance one epoch (or, deprecated in torch, jump to ``epoch`` by the closed form) and
        write the new learning rates into the optimizer."""

class ChainedScheduler(LRScheduler):
    """Step every scheduler in ``schedulers`` on each ``step()`` (their factors compose)."""

    optimizer: Any
    def __init__(self, schedulers, optimizer=...) -> None: ...
    def load_state_dict(self, state_dict) -> None: ...
    def state_dict(self) -> Any: ...
    def step(self) -> None:  # type: ignore[override]
        """Step each chained scheduler in order."""

class ConstantLR(LRScheduler):
    """Scale the learning rate by ``factor`` until epoch ``total_iters``, then restore it."""

    factor: Any
    total_iters: Any
    def __init__(self, optimizer, factor=..., total_iters=..., last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...

class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base learning rate to ``eta_min`` over ``T_max`` epochs
    (torch's recursive form, which continues as a cosine wave past ``T_max``)."""

    T_max: Any
    eta_min: Any
    def __init__(self, optimizer, T_max, eta_min=..., last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...

class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base rate to ``eta_min`` over ``T_i`` epochs, restarting at the
    base rate; the period starts at ``T_0`` and grows by ``T_mult`` per restart (SGDR).
    ``step(epoch)`` may take a fractional epoch."""

    T_0: Any
    T_i: Any
    T_mult: Any
    eta_min: Any
    T_cur: Any
    def __init__(self, optimizer, T_0, T_mult=..., eta_min=..., last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...
    def step(self, epoch=...) -> None:
        """Advance one epoch, or go to (possibly fractional) ``epoch``."""

class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch."""

    gamma: Any
    def __init__(self, optimizer, gamma, last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...

class LambdaLR(LRScheduler):
    """Learning rate ``base_lr * lr_lambda(epoch)`` (one function, or one per group)."""

    optimizer: Any
    lr_lambdas: Any
    def __init__(self, optimizer, lr_lambda, last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...
    def load_state_dict(self, state_dict) -> None: ...
    def state_dict(self) -> Any:
        """As the base class, with ``lr_lambdas``: None for plain functions, the ``__dict__`` of
        callable objects (torch's rule)."""

class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs."""

    start_factor: Any
    end_factor: Any
    total_iters: Any
    def __init__(
        self, optimizer, start_factor=..., end_factor=..., total_iters=..., last_epoch=...
    ) -> None: ...
    def get_lr(self) -> Any: ...

class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch in ``milestones`` (a milestone
    listed twice multiplies by ``gamma**2``)."""

    milestones: Any
    gamma: Any
    def __init__(self, optimizer, milestones, gamma=..., last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...

class OneCycleLR(LRScheduler):
    """The 1cycle policy: the learning rate rises from ``max_lr / div_factor`` to ``max_lr``
    over the first ``pct_start`` of ``total_steps``, then anneals to ``initial_lr /
    final_div_factor`` (``three_phase``: back to the initial rate first); momentum (or Adam's
    beta1) cycles inversely between ``max_momentum`` and ``base_momentum``. Step it after
    every batch."""

    optimizer: Any
    total_steps: Any
    cycle_momentum: Any
    use_beta1: Any
    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=...,
        epochs=...,
        steps_per_epoch=...,
        pct_start=...,
        anneal_strategy=...,
        cycle_momentum=...,
        base_momentum=...,
        max_momentum=...,
        div_factor=...,
        final_div_factor=...,
        three_phase=...,
        last_epoch=...,
    ) -> None: ...
    def get_lr(self) -> Any: ...

class PolynomialLR(LRScheduler):
    """Decay the learning rate by ``(1 - epoch / total_iters) ** power`` until ``total_iters``
    (then 0, or where it stopped)."""

    total_iters: Any
    power: Any
    def __init__(self, optimizer, total_iters=..., power=..., last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...

class ReduceLROnPlateau(LRScheduler):
    """Multiply each group's learning rate by ``factor`` once the metric passed to
    ``step(metric)`` has not improved (by ``threshold``, relative or absolute) for more than
    ``patience`` epochs; then wait ``cooldown`` epochs; never below ``min_lr``."""

    factor: Any
    optimizer: Any
    default_min_lr: Any
    min_lrs: Any
    patience: Any
    cooldown: Any
    eps: Any
    last_epoch: Any
    def __init__(
        self,
        optimizer,
        mode=...,
        factor=...,
        patience=...,
        threshold=...,
        threshold_mode=...,
        cooldown=...,
        min_lr=...,
        eps=...,
    ) -> None: ...
    @property
    def in_cooldown(self) -> Any: ...
    def is_better(self, a, best) -> bool:
        """Whether metric ``a`` improves on ``best`` by more than the threshold."""
    def load_state_dict(self, state_dict) -> None:
        """Restore attributes from :meth:`state_dict`."""
    def step(self, metrics, epoch=...) -> None:  # type: ignore[override]
        """Record this epoch's ``metrics`` (a number or a 0-d tensor) and cut the rates when it
        has stalled for more than ``patience`` epochs."""

class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the epochs in ``milestones`` (each new
    one restarts from the base rates)."""

    last_epoch: Any
    optimizer: Any
    def __init__(self, optimizer, schedulers, milestones, last_epoch=...) -> None: ...
    def load_state_dict(self, state_dict) -> None: ...
    def state_dict(self) -> Any: ...
    def step(self) -> None:  # type: ignore[override]
        """Advance the scheduler of the current phase (a new phase starts at its epoch 0)."""

class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs."""

    step_size: Any
    gamma: Any
    def __init__(self, optimizer, step_size, gamma=..., last_epoch=...) -> None: ...
    def get_lr(self) -> Any: ...

class MultiplicativeLR(LambdaLR):
    """Multiply the learning rate by ``lr_lambda(epoch)`` every epoch (one function, or one per
    group)."""

    def get_lr(self) -> Any: ...
