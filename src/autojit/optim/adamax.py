"""Adamax: Adam with the infinity norm in place of the second moment, as torch defines it.

The update, per parameter p with gradient g (negated when maximize):

    t = t + 1
    g = g + weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1 ** t) * m / u

State: step (a tensor, so the bias correction is an autojit op and a compiled step keeps one
trace), exp_avg (m) and exp_inf (u).
"""

from __future__ import annotations

from ..tensor.creation import zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_betas, check_lr, check_nonnegative


class Adamax(Optimizer):
    """Adamax (torch.optim.Adamax).

    >>> import autojit
    >>> w = autojit.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = autojit.optim.Adamax([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # the first step moves each entry by lr against its sign
    tensor([ 0.9000, -1.9000])
    """

    def __init__(self, params, lr=2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon")
        check_betas(betas)
        check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = step_count(param)
            state["exp_avg"] = zeros_like(param)
            state["exp_inf"] = zeros_like(param)
        step, exp_avg, exp_inf = state["step"], state["exp_avg"], state["exp_inf"]
        if group["maximize"]:
            grad = -grad
        step.add_(1)
        if group["weight_decay"] != 0:
            grad = grad + param * group["weight_decay"]
        exp_avg.add_((grad - exp_avg) * (1 - beta1))
        exp_inf.mul_(beta2)
        exp_inf.maximum_(grad.abs() + group["eps"])
        param.sub_(exp_avg / exp_inf * (group["lr"] / (1 - beta1 ** step)))
