"""LRScheduler, the base class of every learning-rate scheduler (lr_scheduler.py,
lr_scheduler_composite.py, lr_scheduler_cyclic.py), and the reads and writes of a parameter
group's value (a Python number, or a one-element Tensor filled in place) they share.
torch.optim.lr_scheduler's public path for it is lr_scheduler.py.
"""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .optimizer import Optimizer


def _group_values(optimizer: Optimizer, key: str) -> list:
    """group[key] of every group; Tensors are cloned so the list never aliases the groups."""
    return [group[key].clone() if isinstance(group[key], Tensor) else group[key]
            for group in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value) -> None:
    if isinstance(group[key], Tensor):
        group[key].fill_(float(value) if isinstance(value, Tensor) else value)
    else:
        group[key] = value


class LRScheduler:
    """Base class: subclasses define `get_lr()` from `last_epoch` and the current rates.

    Building a scheduler records each group's `initial_lr` and takes the first step (epoch 0).
    """

    _is_initial = False  # True during the first step (some get_lr keep the rates then)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial = group["lr"]
                group.setdefault("initial_lr", initial.clone() if isinstance(initial, Tensor)
                                 else initial)
        else:
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}]"
                                   " when resuming scheduler with last_epoch >= 0.")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step a new scheduler takes (SequentialLR repeats it at each milestone)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates for `last_epoch` (called by step)."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last step set, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (call it after optimizer.step()) and set the groups' rates."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """Count the epoch (or jump to `epoch`, through the closed form where there is one)
        and write the rates into the groups."""
        # Set while get_lr runs, as torch's (its state dicts carry the key).
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, value in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", value)
        self._last_lr = _group_values(self.optimizer, "lr")

    def state_dict(self) -> dict:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
