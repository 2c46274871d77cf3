"""Learning-rate schedulers: LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR,
LinearLR, ExponentialLR, CosineAnnealingLR, PolynomialLR, with torch.optim.lr_scheduler's names
and formulas; their base class LRScheduler (lr_scheduler_base.py), SequentialLR,
ChainedScheduler and ReduceLROnPlateau (lr_scheduler_composite.py), CyclicLR, OneCycleLR and
CosineAnnealingWarmRestarts (lr_scheduler_cyclic.py) are re-exported here, their public path.

A scheduler runs outside the training step, once per epoch (or per step) after
`optimizer.step()`: `scheduler.step()` counts `last_epoch` up and writes the new learning rate
into each parameter group. A group's `lr` may be a Python number or a one-element Tensor; a
Tensor is filled in place, so a compiled training step that captured it reads the new value
without tracing again, and a float that changes between calls becomes a runtime float of the
compiled step (docs/compiler.md), which does not retrace either.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter

from .lr_scheduler_base import LRScheduler, _group_values
from .optimizer import Optimizer


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch); one function, or one per parameter group.

        >>> import autojit
        >>> optimizer = autojit.optim.SGD([autojit.nn.Parameter(autojit.zeros(2))], lr=1.0)
        >>> scheduler = autojit.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5 ** epoch)
        >>> for epoch in range(2):
        ...     optimizer.step()
        ...     scheduler.step()
        >>> scheduler.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base_lr * function(self.last_epoch)
                for function, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]

    def state_dict(self) -> dict:
        """As the base, with the lambdas replaced by the attributes of callable objects (plain
        functions are not saved)."""
        result = {key: value for key, value in self.__dict__.items()
                  if key not in ("optimizer", "lr_lambdas")}
        result["lr_lambdas"] = [None if isinstance(function, types.FunctionType)
                                else function.__dict__.copy() for function in self.lr_lambdas]
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for function, saved in zip(self.lr_lambdas, lambdas, strict=True):
            if saved is not None:
                function.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiply the rate by gamma every step_size epochs.

        >>> import autojit
        >>> optimizer = autojit.optim.SGD([autojit.nn.Parameter(autojit.zeros(2))], lr=1.0)
        >>> scheduler = autojit.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        >>> rates = []
        >>> for epoch in range(4):
        ...     optimizer.step()
        ...     scheduler.step()
        ...     rates.append(scheduler.get_last_lr()[0])
        >>> rates
        [1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by gamma at each milestone epoch."""

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rate to eta_min over T_max epochs (and back up).

    Computed recursively from the current rate, as torch does, so that a rate changed by hand
    between steps carries on:

        lr_t = eta_min + (lr_{t-1} - eta_min) * (1 + cos(pi t / T)) / (1 + cos(pi (t-1) / T))

    with T = T_max; untouched, this equals the closed form
    eta_min + (lr_0 - eta_min) * (1 + cos(pi t / T)) / 2.

        >>> import autojit
        >>> optimizer = autojit.optim.SGD([autojit.nn.Parameter(autojit.zeros(2))], lr=1.0)
        >>> scheduler = autojit.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
        >>> rates = []
        >>> for epoch in range(4):
        ...     optimizer.step()
        ...     scheduler.step()
        ...     rates.append(round(scheduler.get_last_lr()[0], 4))
        >>> rates
        [0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


# ---- factor schedules: MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR ----------------

def _lambdas_for(optimizer: Optimizer, lr_lambda) -> list:
    """One function per parameter group (LambdaLR's and MultiplicativeLR's argument)."""
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class MultiplicativeLR(LRScheduler):
    """Multiply the rate by lr_lambda(epoch) every epoch (one function, or one per group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_for(optimizer, lr_lambda)
        for function in self.lr_lambdas:
            if not callable(function):
                raise TypeError(f"lr_lambda should be a function, but got "
                                f"{type(function).__name__}")
        super().__init__(optimizer, last_epoch)

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self) -> list:
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * function(self.last_epoch)
                for function, group in zip(self.lr_lambdas, self.optimizer.param_groups,
                                           strict=True)]


class ConstantLR(LRScheduler):
    """The rate times `factor` until epoch `total_iters`, then the rate itself."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters)
                           * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """The rate's factor goes linearly from start_factor to end_factor over total_iters."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor
                                + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, then constant (0)."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


# The schedulers built on LRScheduler in their own modules: this module is their public path.
from .lr_scheduler_composite import (  # noqa: E402
    ChainedScheduler,
    ReduceLROnPlateau,
    SequentialLR,
)
from .lr_scheduler_cyclic import (  # noqa: E402
    CosineAnnealingWarmRestarts,
    CyclicLR,
    OneCycleLR,
)


class _LRScheduler(LRScheduler):
    """LRScheduler under its older name, which libraries still subclass (as torch keeps it)."""

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR"]
