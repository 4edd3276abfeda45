"""More of torch's schedulers: warm-up shapes (``ConstantLR``, ``LinearLR``), decays
(``MultiplicativeLR``, ``PolynomialLR``), ``CosineAnnealingWarmRestarts``, and the
combinators ``SequentialLR`` and ``ChainedScheduler``, with torch's recursive formulas."""

from __future__ import annotations

import bisect
import math

from ...errors import ArgumentError
from .core import LambdaLR, LRScheduler

__all__ = [
    "ConstantLR",
    "LinearLR",
    "MultiplicativeLR",
    "PolynomialLR",
    "CosineAnnealingWarmRestarts",
    "SequentialLR",
    "ChainedScheduler",
]


def _lrs(optimizer):
    return [g["lr"] for g in optimizer.param_groups]


class ConstantLR(LRScheduler):
    """Scale the learning rate by ``factor`` until epoch ``total_iters``, then restore it.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(3):
    ...     lrs.append(s.get_last_lr()[0]); opt.step(); s.step()
    >>> lrs + s.get_last_lr()
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ArgumentError(
                f"Constant multiplicative factor expected to be between 0 and 1, got {factor}"
            )
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in _lrs(self.optimizer)]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [lr * (1.0 / self.factor) for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        on = self.last_epoch >= self.total_iters
        return [b * (self.factor + on * (1 - self.factor)) for b in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(s.get_last_lr()[0]); opt.step(); s.step()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0]
    """

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        if start_factor > 1.0 or start_factor <= 0:
            raise ArgumentError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                f"equal to 1, got {start_factor}"
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ArgumentError(
                f"Ending multiplicative factor expected to be between 0 and 1, got {end_factor}"
            )
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if e == 0:
            return [lr * a for lr in _lrs(self.optimizer)]
        if self._is_initial or e > n:
            return _lrs(self.optimizer)
        return [lr * (1.0 + (b - a) / (n * a + (e - 1) * (b - a))) for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        e, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        return [base * (a + (b - a) * min(n, e) / n) for base in self.base_lrs]


class MultiplicativeLR(LambdaLR):
    """Multiply the learning rate by ``lr_lambda(epoch)`` every epoch (one function, or one
    per group).

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
    >>> opt.step(); s.step(); opt.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def get_lr(self):
        if self._is_initial:
            return _lrs(self.optimizer)
        return [lr * f(self.last_epoch) for f, lr in zip(self.lr_lambdas, _lrs(self.optimizer))]


class PolynomialLR(LRScheduler):
    """Decay the learning rate by ``(1 - epoch / total_iters) ** power`` until
    ``total_iters`` (then 0, or where it stopped).

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=1.0)
    >>> opt.step(); s.step(); s.get_last_lr()
    [0.75]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, n = self.last_epoch, self.total_iters
        if self._is_initial or e > n:
            return _lrs(self.optimizer)
        factor = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
        return [lr * factor for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        e, n = self.last_epoch, self.total_iters
        return [b * (1.0 - min(n, e) / n) ** self.power for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base rate to ``eta_min`` over ``T_i`` epochs, restarting
    at the base rate; the period starts at ``T_0`` and grows by ``T_mult`` per restart
    (SGDR). ``step(epoch)`` may take a fractional epoch.

    Examples
    --------
    >>> import sharded as st
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = st.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(s.get_last_lr()[0], 6)); opt.step(); s.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ArgumentError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ArgumentError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ArgumentError(f"Expected float or int eta_min, but got {eta_min!r}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lo, t = self.eta_min, math.cos(math.pi * self.T_cur / self.T_i)
        return [lo + (b - lo) * (1 + t) / 2 for b in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to (possibly fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ArgumentError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


def _check_members(name, optimizer, schedulers):
    if len(schedulers) < 1:
        raise ArgumentError(f"{name} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if type(s).__name__ == "ReduceLROnPlateau":
            raise ArgumentError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                f"additional kwargs to be specified when calling `step`, but got one at index {i}"
            )
        if s.optimizer is not optimizer:
            raise ArgumentError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(s).__name__} at index {i} with another one"
            )


def _nested_state(self):
    out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
    out["_schedulers"] = [s.state_dict() for s in self._schedulers]
    return out


def _load_nested(self, state_dict):
    state_dict = dict(state_dict)
    nested = state_dict.pop("_schedulers")
    self.__dict__.update(state_dict)
    for s, sd in zip(self._schedulers, nested):
        s.load_state_dict(sd)


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the epochs in ``milestones``
    (each new one restarts from the base rates).

    Examples
    --------
    >>> import sharded as st
    >>> M = st.optim.lr_scheduler
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> warm = M.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> s = M.SequentialLR(opt, [warm, M.ExponentialLR(opt, gamma=0.5)], milestones=[2])
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(s.get_last_lr()[0], 6)); opt.step(); s.step()
    >>> lrs
    [0.1, 0.1, 1.0, 0.5]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_members("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ArgumentError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo(self)  # the members' construction steps did not happen
        idx = bisect.bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    def _undo(self, sched):
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self):
        """Advance the scheduler of the current phase (a new phase starts at its epoch 0)."""
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()

    state_dict = _nested_state
    load_state_dict = _load_nested


class ChainedScheduler(LRScheduler):
    """Step every scheduler in ``schedulers`` on each ``step()`` (their factors compose).

    Examples
    --------
    >>> import sharded as st
    >>> M = st.optim.lr_scheduler
    >>> opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    >>> s = M.ChainedScheduler([M.ConstantLR(opt, 0.5, 1), M.ExponentialLR(opt, 0.5)])
    >>> s.get_last_lr(); opt.step(); s.step(); s.get_last_lr()
    [0.5]
    [0.5]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ArgumentError("ChainedScheduler expects at least one scheduler to be chained")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members("ChainedScheduler", optimizer, schedulers)
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = _lrs(self._schedulers[-1].optimizer)

    def step(self):
        """Step each chained scheduler in order."""
        for s in self._schedulers:
            s.step()
        self._last_lr = _lrs(self._schedulers[-1].optimizer)

    state_dict = _nested_state
    load_state_dict = _load_nested
