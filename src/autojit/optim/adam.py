"""Adam: adaptive moment estimation, with L2 or decoupled weight decay, amsgrad and maximize.

The update, per parameter p with gradient g (negated when maximize), as torch defines it:

    t = t + 1
    g = g + weight_decay * p                  (Adam)    or   p = p * (1 - lr * weight_decay)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)                                   (amsgrad; v_max replaces v below)
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

The step count t is a tensor in the state, and the bias corrections are autojit ops on it: a
compiled training step reads no Python number that changes from step to step, so one trace
serves every step. Eagerly, the update runs as the same ufuncs on the arrays where it may
(eager_arrays.py). AdamW (adamw.py) is this class with decoupled weight decay.
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.creation import zeros, zeros_like
from . import eager_arrays
from .optimizer import Optimizer, check_betas, check_fused, check_lr, check_nonnegative


def step_count(param):
    """A fresh step-count tensor: float64 for float64 parameters, else float32; on the
    parameter's device, so a compiled step on the GPU keeps its bias corrections there (no
    copy to the host and back each step)."""
    dtype = dtypes.float64 if param.dtype is dtypes.float64 else dtypes.float32
    return zeros((), dtype=dtype, device=param.device)


class Adam(Optimizer):
    """Adam (torch.optim.Adam); `decoupled_weight_decay=True` makes it AdamW.

    >>> import autojit
    >>> w = autojit.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = autojit.optim.Adam([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # the first step moves each entry by lr against its sign
    tensor([ 0.9000, -1.9000])
    """

    def __init__(self, params, lr=1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon")
        check_betas(betas)
        check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _update(self, param, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        if not state:
            state["step"] = step_count(param)
            state["exp_avg"] = zeros_like(param)
            state["exp_avg_sq"] = zeros_like(param)
        if group["amsgrad"] and "max_exp_avg_sq" not in state:  # also after turning it on
            state["max_exp_avg_sq"] = zeros_like(param)
        step, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
        targets = [param, exp_avg, exp_avg_sq]
        if group["amsgrad"]:
            targets.append(state["max_exp_avg_sq"])
        arrays = eager_arrays.arrays_of(*targets, grad) if eager_arrays.numbers(
            lr, weight_decay, beta1, beta2, group["eps"]) else None
        # The bias corrections are ops on the step count: of another dtype than the
        # parameter, they would promote the array ops differently.
        if arrays is not None and step._payload.__class__ is np.ndarray and \
                step._payload.dtype == arrays[0].dtype:
            self._update_arrays(arrays, targets, step, group)
            return
        if group["maximize"]:
            grad = -grad
        step.add_(1)
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad + param * weight_decay
        exp_avg.add_((grad - exp_avg) * (1 - beta1))
        exp_avg_sq.mul_(beta2)
        exp_avg_sq.add_(grad * grad * (1 - beta2))
        # In float64, as torch computes them from the step count as a Python number.
        count = step.to(dtypes.float64)
        bias_correction1 = 1 - beta1 ** count
        bias_correction2_sqrt = (1 - beta2 ** count).sqrt()
        second = exp_avg_sq
        if group["amsgrad"]:
            second = state["max_exp_avg_sq"]
            second.maximum_(exp_avg_sq)
        denominator = second.sqrt() / bias_correction2_sqrt + group["eps"]
        param.sub_(exp_avg / denominator * (lr / bias_correction1))

    def _update_arrays(self, arrays: list, tensors: list, step, group: dict) -> None:
        """The update above, eagerly on the arrays (eager_arrays.py): the same ufuncs on the
        same operands in the same order, written in place, each write counted as its op's."""
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        eager_arrays.written(step)
        np.add(step._payload, 1, out=step._payload)
        bias_correction2_sqrt, scale = self._corrections(step, group)
        if eager_arrays.native_adam(arrays, tensors, group, bias_correction2_sqrt, scale):
            return
        param, exp_avg, exp_avg_sq, *maximum, grad = arrays
        written = eager_arrays.written
        with np.errstate(all="ignore"):
            if group["maximize"]:
                grad = np.negative(grad)
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    written(tensors[0])
                    np.multiply(param, 1 - lr * weight_decay, out=param)
                else:
                    grad = np.add(grad, np.multiply(param, weight_decay))
            work = np.subtract(grad, exp_avg, out=np.empty_like(param))
            np.multiply(work, 1 - beta1, out=work)
            written(tensors[1])
            np.add(exp_avg, work, out=exp_avg)
            written(tensors[2])
            np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
            np.multiply(grad, grad, out=work)
            np.multiply(work, 1 - beta2, out=work)
            written(tensors[2])
            np.add(exp_avg_sq, work, out=exp_avg_sq)
            second = exp_avg_sq
            if maximum:
                written(tensors[3])
                second = np.maximum(maximum[0], exp_avg_sq, out=maximum[0])
            np.sqrt(second, out=work)
            np.divide(work, bias_correction2_sqrt, out=work)
            np.add(work, group["eps"], out=work)
            np.divide(exp_avg, work, out=work)
            np.multiply(work, scale, out=work)
            written(tensors[0])
            np.subtract(param, work, out=param)

    def _corrections(self, step, group: dict) -> tuple:
        """(sqrt(1 - beta2**t), lr / (1 - beta1**t)) as 0-d arrays, computed by the ops of
        `_update` on the step count and kept for the group's next parameter: the parameters
        of a group share their step count's value, so the ops run once a step, not once a
        parameter."""
        key = (step._payload.item(), step._payload.dtype, *group["betas"], group["lr"])
        cached = getattr(self, "_correction_cache", None)
        if cached is None or cached[0] != key:
            beta1, beta2 = group["betas"]
            count = step.to(dtypes.float64)
            bias_correction1 = 1 - beta1 ** count
            bias_correction2_sqrt = (1 - beta2 ** count).sqrt()
            # Rounded to the parameters' dtype, as `_update`'s ops convert a 0-d operand.
            dtype = step._payload.dtype
            cached = (key, bias_correction2_sqrt._payload.astype(dtype),
                      (group["lr"] / bias_correction1)._payload.astype(dtype))
            self._correction_cache = cached
        return cached[1], cached[2]
