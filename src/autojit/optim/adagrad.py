"""Adagrad: gradients scaled by the root of their accumulated squares, with lr decay.

The update, per parameter p with gradient g (negated when maximize), as torch defines it:

    t = t + 1
    g = g + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g
    p = p - clr * g / (sqrt(s) + eps)

The state (step, sum) is made when the optimizer is built, as torch does, with `sum` filled by
initial_accumulator_value; the step count is a tensor, so a compiled step reads no changing
Python number.
"""

from __future__ import annotations

from ..tensor.creation import full_like
from .adam import step_count
from .optimizer import Optimizer, check_fused, check_lr, check_nonnegative


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad).

    >>> import autojit
    >>> w = autojit.tensor([1.0], requires_grad=True)
    >>> optimizer = autojit.optim.Adagrad([w], lr=0.5)
    >>> (2 * w).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # 1 - 0.5 * 2 / sqrt(4)
    tensor([0.5000])
    """

    def __init__(self, params, lr=1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        check_lr(lr)
        check_nonnegative(lr_decay, "lr_decay")
        check_nonnegative(weight_decay, "weight_decay")
        check_nonnegative(initial_accumulator_value, "initial_accumulator_value")
        check_nonnegative(eps, "epsilon")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for param in group["params"]:
                self._init_state(param, self.state[param], group)

    @staticmethod
    def _init_state(param, state: dict, group: dict) -> None:
        state["step"] = step_count(param)
        state["sum"] = full_like(param, group["initial_accumulator_value"])

    def _update(self, param, grad, state, group) -> None:
        if not state:  # a parameter added with add_param_group after construction
            self._init_state(param, state, group)
        step, accumulated = state["step"], state["sum"]
        if group["maximize"]:
            grad = -grad
        step.add_(1)
        if group["weight_decay"] != 0:
            grad = grad + param * group["weight_decay"]
        rate = group["lr"]
        if group["lr_decay"] != 0:
            rate = rate / (1 + (step - 1) * group["lr_decay"])
        accumulated.add_(grad * grad)
        param.sub_(grad / (accumulated.sqrt() + group["eps"]) * rate)
