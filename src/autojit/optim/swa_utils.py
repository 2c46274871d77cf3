"""Stochastic weight averaging (torch.optim.swa_utils): AveragedModel, the averaging
functions, update_bn and SWALR.

AveragedModel keeps a running average (equal weights, or exponential) of a model's parameters
in a copy of the model, with the averaging function it is given (get_swa_avg_fn,
get_ema_avg_fn, or their in-place, list-wise multi forms); update_bn recomputes the BatchNorm
statistics of the averaged weights from a pass over the data; SWALR, a scheduler, anneals each
group's rate to a fixed one.

It sits in autojit.optim beside the optimizers and lr_scheduler.py; optim is the layer above
nn (pyproject.toml), so AveragedModel is an nn.Module and update_bn finds nn's batch norms.

    >>> import autojit
    >>> from autojit.optim.swa_utils import AveragedModel
    >>> model = autojit.nn.Linear(1, 1, bias=False)
    >>> averaged = AveragedModel(model)
    >>> for value in (1.0, 2.0, 6.0):
    ...     with autojit.no_grad():
    ...         _ = model.weight.fill_(value)
    ...     averaged.update_parameters(model)
    >>> averaged.module.weight.item(), averaged.n_averaged.item()
    (3.0, 3)
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from ..autograd import no_grad
from ..nn.module import Module
from ..nn.normalization import _BatchNorm
from ..tensor import dtypes
from ..tensor.creation import tensor
from ..tensor.tensor import Tensor
from .lr_scheduler import LRScheduler
from .lr_scheduler_cyclic import _format_param
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

# torch averages with its foreach kernels on these device types and tensor by tensor elsewhere
# (CPU); the two round differently, so the default average follows the same split.
_FOREACH_DEVICE_TYPES = ("cuda",)


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _is_float_or_complex(value: Tensor) -> bool:
    return value.is_floating_point() or value.is_complex()


# ---- averaging functions --------------------------------------------------------------------


def get_ema_multi_avg_fn(decay=0.999):
    """The exponential moving average, in place over lists of tensors (AveragedModel's
    `multi_avg_fn`): W_ema = decay * W_ema + (1 - decay) * W_model.

        >>> import autojit
        >>> averaged, current = [autojit.tensor([1.0])], [autojit.tensor([3.0])]
        >>> autojit.optim.swa_utils.get_ema_multi_avg_fn(0.75)(averaged, current, 1)
        >>> averaged[0]
        tensor([1.5000])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_tensors, current_tensors, _) -> None:
        # torch's foreach lerp takes only floating and complex tensors; other dtypes get the
        # weighted sum, truncated by copy_ as torch's is.
        if _is_float_or_complex(ema_tensors[0]):
            for ema_tensor, current_tensor in zip(ema_tensors, current_tensors):
                ema_tensor.lerp_(current_tensor, 1 - decay)
        else:
            for ema_tensor, current_tensor in zip(ema_tensors, current_tensors, strict=True):
                ema_tensor.copy_(ema_tensor * decay + current_tensor * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The equally weighted running average, in place over lists of tensors (AveragedModel's
    `multi_avg_fn`): W_swa += (W_model - W_swa) / (n + 1), n the models averaged so far."""

    @no_grad()
    def swa_update(averaged_tensors, current_tensors, num_averaged) -> None:
        if _is_float_or_complex(averaged_tensors[0]):
            weight = 1 / (num_averaged + 1)
            for averaged_tensor, current_tensor in zip(averaged_tensors, current_tensors):
                averaged_tensor.lerp_(current_tensor, weight)
        else:
            differences = [
                current_tensor - averaged_tensor
                for averaged_tensor, current_tensor in zip(averaged_tensors, current_tensors)
            ]
            for averaged_tensor, difference in zip(averaged_tensors, differences):
                if isinstance(num_averaged, Tensor):
                    averaged_tensor.addcdiv_(difference, num_averaged + 1)
                else:
                    averaged_tensor.add_(difference, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average of one tensor (AveragedModel's `avg_fn`): returns
    decay * W_ema + (1 - decay) * W_model.

        >>> import autojit
        >>> average = autojit.optim.swa_utils.get_ema_avg_fn(0.75)
        >>> average(autojit.tensor([1.0]), autojit.tensor([3.0]), 1)
        tensor([1.5000])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_tensor, current_tensor, num_averaged):
        return decay * ema_tensor + (1 - decay) * current_tensor

    return ema_update


def get_swa_avg_fn():
    """The equally weighted running average of one tensor (AveragedModel's `avg_fn`): returns
    W_swa + (W_model - W_swa) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_tensor, current_tensor, num_averaged):
        return averaged_tensor + (current_tensor - averaged_tensor) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged_tensors: list, current_tensors: list) -> dict:
    """{(device, dtype): ([averaged tensors], [model tensors])}, in the order first met; a
    multi_avg_fn is called once per group, as torch's foreach kernels need one of each."""
    groups: dict = {}
    for averaged_tensor, current_tensor in zip(averaged_tensors, current_tensors):
        key = (str(averaged_tensor.device), averaged_tensor.dtype)
        averaged_group, current_group = groups.setdefault(key, ([], []))
        averaged_group.append(averaged_tensor)
        current_group.append(current_tensor)
    return groups


# ---- AveragedModel --------------------------------------------------------------------------


class AveragedModel(Module):
    """A copy of `model` holding the running average of its parameters (Stochastic Weight
    Averaging, or an exponential moving average with `get_ema_multi_avg_fn`).

    `update_parameters(model)` first copies the model's parameters, then averages them in with
    `avg_fn(averaged, current, n_averaged)` (returning the new value), or
    `multi_avg_fn(averaged_list, current_list, n_averaged)` (updating the lists in place, once
    per device and dtype), or by default with equal weights. With `use_buffers=True` the
    buffers are averaged the same way; otherwise they are copied from the model at each update.
    The count of updates is the long buffer `n_averaged` (in the state dict; the functions are
    not). Calling the averaged model calls its copy.

    Args:
        model (Module): the model to average (deep-copied).
        device: where the copy is kept, if given.
        avg_fn: the averaging function for one tensor (default: the equal-weight average).
        multi_avg_fn: the in-place averaging function for lists of tensors; at most one of
            avg_fn and multi_avg_fn may be given.
        use_buffers (bool): average the buffers as well (default: False).
    """

    n_averaged: Tensor

    def __init__(
        self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model) -> None:
        """Copy `model`'s parameters (the first call) or average them into the copy's."""
        if self.use_buffers:
            averaged_tensors = itertools.chain(self.module.parameters(), self.module.buffers())
            model_tensors = itertools.chain(model.parameters(), model.buffers())
        else:
            averaged_tensors = self.parameters()
            model_tensors = model.parameters()
        averaged_detached, model_detached = [], []
        copy_model = bool(self.n_averaged == 0)
        # Not strict, as torch's: a model with fewer tensors averages the ones that pair up.
        for averaged_tensor, model_tensor in zip(averaged_tensors, model_tensors):
            model_value = model_tensor.detach().to(averaged_tensor.device)
            averaged_detached.append(averaged_tensor.detach())
            model_detached.append(model_value)
            if copy_model:
                averaged_tensor.detach().copy_(model_value)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                self._average_groups(averaged_detached, model_detached)
            else:
                for averaged_tensor, model_value in zip(
                    averaged_detached, model_detached, strict=True
                ):
                    n_averaged = self.n_averaged.to(averaged_tensor.device)
                    averaged_tensor.copy_(self.avg_fn(averaged_tensor, model_value, n_averaged))

        if not self.use_buffers:
            # Buffers that are not averaged follow the model, so the copy's running
            # statistics are the model's latest.
            for averaged_buffer, model_buffer in zip(
                self.module.buffers(), model.buffers(), strict=True
            ):
                averaged_buffer.detach().copy_(model_buffer.detach().to(averaged_buffer.device))
        self.n_averaged += 1

    def _average_groups(self, averaged_tensors: list, model_tensors: list) -> None:
        """Average with multi_avg_fn, or the default, one device and dtype at a time."""
        groups = _group_by_device_and_dtype(averaged_tensors, model_tensors)
        for averaged_group, model_group in groups.values():
            device = averaged_group[0].device
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged_group, model_group, n_averaged)
            elif device.type in _FOREACH_DEVICE_TYPES:
                get_swa_multi_avg_fn()(averaged_group, model_group, n_averaged)
            else:
                average = get_swa_avg_fn()
                for averaged_tensor, model_value in zip(averaged_group, model_group, strict=True):
                    averaged_tensor.copy_(average(averaged_tensor, model_value, n_averaged))


# ---- update_bn ------------------------------------------------------------------------------


@no_grad()
def update_bn(loader, model, device=None) -> None:
    """Recompute the running mean and variance of every BatchNorm layer in `model` from one
    pass over `loader`.

    Each layer's statistics are reset and its momentum set to None (a cumulative average of
    every batch) for the pass, in training mode; the momenta and the model's mode are restored
    after it. Each batch is a tensor, or a list or tuple whose first element is the input;
    with `device`, inputs are moved there first.

        >>> import autojit
        >>> model = autojit.nn.BatchNorm1d(1)
        >>> loader = [autojit.tensor([[1.0], [3.0]]), [autojit.tensor([[5.0], [7.0]]), 0]]
        >>> autojit.optim.swa_utils.update_bn(loader, model)
        >>> model.running_mean
        tensor([4.])
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return

    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


# ---- SWALR ----------------------------------------------------------------------------------


class SWALR(LRScheduler):
    """Anneal each group's rate from its current value to `swa_lr` over `anneal_epochs`
    epochs, by a cosine ("cos") or a straight line ("linear"), then hold it there.

    `swa_lr` is one rate for every group or a list with one per group; it is stored in each
    group as "swa_lr". Like torch's, the rate is computed from the group's current rate, so
    SWALR can take over from another scheduler partway through training.

        >>> import autojit
        >>> optimizer = autojit.optim.SGD([autojit.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = autojit.optim.swa_utils.SWALR(
        ...     optimizer, swa_lr=0.1, anneal_epochs=3, anneal_strategy="linear"
        ... )
        >>> rates = []
        >>> for epoch in range(4):
        ...     optimizer.step()
        ...     scheduler.step()
        ...     rates.append(round(scheduler.get_last_lr()[0], 4))
        >>> rates
        [0.7, 0.4, 0.1, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float,
        anneal_epochs=10,
        anneal_strategy="cos",
        last_epoch=-1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for group_swa_lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = group_swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(fraction):
        return fraction

    @staticmethod
    def _cosine_anneal(fraction):
        return (1 - math.cos(math.pi * fraction)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The rate annealing started from, given the rate `lr` reached at fraction `alpha`."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """The rates for this step: each group's start rate, recovered from its current rate,
        moved towards its swa_lr by the anneal function of the fraction of anneal_epochs done.
        """
        if not getattr(self, "_get_lr_called_within_step", False):
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous_fraction = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        previous_alpha = self.anneal_func(previous_fraction)
        start_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], previous_alpha)
            for group in self.optimizer.param_groups
        ]
        fraction = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(fraction)
        return [
            group["swa_lr"] * alpha + start_lr * (1 - alpha)
            for group, start_lr in zip(self.optimizer.param_groups, start_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict:
        """Every attribute but the optimizer and the anneal function (rebuilt on load from
        `_anneal_strategy`)."""
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

