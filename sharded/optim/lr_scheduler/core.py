"""Learning-rate schedulers with torch's formulas (``st.optim.lr_scheduler``).

Each scheduler sets ``group["lr"]`` of its optimizer's parameter groups at construction
(epoch 0) and on every ``step()``; like torch's, the step rules are recursive (they scale
the current ``lr``), so schedulers can be chained, and ``step(epoch)`` uses the closed
form where torch has one. Nothing here touches tensors: learning rates are Python floats.
A training step jitted with ``st.jit`` bakes in the rates it was traced with (its step
counts do advance, see :mod:`sharded.optim.capture`): call the jitted function's
``reset()`` after ``scheduler.step()`` changes them (it traces twice before it replays
again, so a rate that changes on every step gains nothing from ``st.jit``).
"""

from __future__ import annotations

import bisect
import collections
import math
import types

from ...errors import ArgumentError
from ..optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LambdaLR",
    "OneCycleLR",
]


class LRScheduler:
    """Base class: holds ``optimizer``, ``base_lrs`` (each group's ``initial_lr``) and
    ``last_epoch``; subclasses define ``get_lr``.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> sched = st.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for _ in range(4):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr(), sched.last_epoch
    ([0.25], 4)
    """

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        f"resuming scheduler with last_epoch={last_epoch} >= 0"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The construction-time step (epoch 0), which keeps the current rates' scale."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        """The learning rates of the groups after the last ``step()``."""
        return list(self._last_lr)

    def step(self, epoch=None):
        """Advance one epoch (or, deprecated in torch, jump to ``epoch`` by the closed form)
        and write the new learning rates into the optimizer."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Every attribute but the optimizer (torch's structure).

        Examples
        --------
        >>> import sharded as st
        >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
        >>> sd = st.optim.lr_scheduler.ExponentialLR(opt, 0.5).state_dict()
        >>> sd["last_epoch"], sd["base_lrs"], sd["gamma"]
        (0, [1.0], 0.5)
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore attributes from :meth:`state_dict`."""
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(s.get_last_lr()[0]); opt.step(); s.step()
    >>> [round(v, 6) for v in lrs]
    [1.0, 1.0, 0.1, 0.1, 0.01]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if int(step_size) != step_size or step_size <= 0:
            raise ArgumentError(f"StepLR: step_size must be a positive integer, got {step_size}")
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch in ``milestones`` (a
    milestone listed twice multiplies by ``gamma**2``).

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(s.get_last_lr()[0]); opt.step(); s.step()
    >>> lrs
    [1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = collections.Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return [g["lr"] for g in self.optimizer.param_groups]
        k = self.milestones[self.last_epoch]
        return [g["lr"] * self.gamma**k for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect.bisect_right(ms, self.last_epoch) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); s.step(); opt.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base learning rate to ``eta_min`` over ``T_max`` epochs
    (torch's recursive form, which continues as a cosine wave past ``T_max``).

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> opt.step(); s.step(); round(s.get_last_lr()[0], 6)
    0.5
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max <= 0:
            raise ArgumentError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups, e, T, lo = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [
                g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                for b, g in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (g["lr"] - lo)
            + lo
            for g in groups
        ]

    def _get_closed_form_lr(self):
        lo, e, T = self.eta_min, self.last_epoch, self.T_max
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / T)) / 2 for b in self.base_lrs]


class LambdaLR(LRScheduler):
    """Learning rate ``base_lr * lr_lambda(epoch)`` (one function, or one per group).

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=2.0)
    >>> s = st.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
    >>> opt.step(); s.step(); s.get_last_lr()
    [1.0]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * n
        else:
            if len(lr_lambda) != n:
                raise ArgumentError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        for f in self.lr_lambdas:
            if not callable(f):
                raise TypeError(f"lr_lambda should be a function, but got {type(f).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self):
        """As the base class, with ``lr_lambdas``: None for plain functions, the ``__dict__``
        of callable objects (torch's rule)."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [
            None if isinstance(f, types.FunctionType) else f.__dict__.copy()
            for f in self.lr_lambdas
        ]
        return out

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for f, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                f.__dict__.update(saved)


def _per_group(name, optimizer, value):
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ArgumentError(f"expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the learning rate rises from ``max_lr / div_factor`` to
    ``max_lr`` over the first ``pct_start`` of ``total_steps``, then anneals to
    ``initial_lr / final_div_factor`` (``three_phase``: back to the initial rate first);
    momentum (or Adam's beta1) cycles inversely between ``max_momentum`` and
    ``base_momentum``. Step it after every batch.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=0.1, momentum=0.9)
    >>> s = st.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> lrs = []
    >>> for _ in range(10):
    ...     lrs.append(s.get_last_lr()[0]); opt.step(); s.step()
    >>> round(lrs[0], 6), round(max(lrs), 6), round(lrs[-1], 8)
    (0.04, 1.0, 4e-06)
    """

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ArgumentError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ArgumentError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ArgumentError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ArgumentError(
                "You must define either total_steps OR (epochs AND steps_per_epoch)"
            )
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ArgumentError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ArgumentError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        total = self.total_steps
        first = float(pct_start * total) - 1
        if three_phase:
            phases = [
                (first, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * total) - 2, "max_lr", "initial_lr", "base_momentum",
                 "max_momentum"),
                (total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]  # fmt: skip
        else:
            phases = [
                (first, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, p)) for p in phases]
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ArgumentError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option "
                    f"enabled ({type(optimizer).__name__} has neither)"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            maxs = _per_group("max_momentum", optimizer, max_momentum)
            bases = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for mx, bs, group in zip(maxs, bases, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (mx, *group["betas"][1:])
                    else:
                        group["momentum"] = mx
                    group["max_momentum"], group["base_momentum"] = mx, bs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ArgumentError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == last:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[ph["start_lr"]], group[ph["end_lr"]], pct)
                    mom = self._anneal(
                        group[ph["start_momentum"]] if self.cycle_momentum else 0.0,
                        group[ph["end_momentum"]] if self.cycle_momentum else 0.0,
                        pct,
                    )
                    break
                start = end
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (mom, *group["betas"][1:])
                else:
                    group["momentum"] = mom
        return lrs
