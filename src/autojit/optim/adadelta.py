"""Adadelta: steps scaled by the ratio of running RMS of updates and of gradients (Zeiler,
2012), as torch defines it.

The update, per parameter p with gradient g (negated when maximize):

    g = g + weight_decay * p
    s = rho * s + (1 - rho) * g * g
    delta = sqrt(a + eps) / sqrt(s + eps) * g
    a = rho * a + (1 - rho) * delta * delta
    p = p - lr * delta

State: step (a tensor, counted as torch does), square_avg (s) and acc_delta (a).
"""

from __future__ import annotations

from ..tensor.creation import zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_lr, check_nonnegative


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta).

    >>> import autojit
    >>> w = autojit.tensor([1.0], requires_grad=True)
    >>> optimizer = autojit.optim.Adadelta([w], rho=0.5, eps=0.25)
    >>> w.sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # 1 - sqrt(0.25) / sqrt(0.5 + 0.25)
    tensor([0.4226])
    """

    def __init__(self, params, lr=1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(eps, "epsilon")
        check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = step_count(param)
            state["square_avg"] = zeros_like(param)
            state["acc_delta"] = zeros_like(param)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"].add_(1)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + param * group["weight_decay"]
        square_avg.mul_(rho)
        square_avg.add_(grad * grad * (1 - rho))
        delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * grad
        acc_delta.mul_(rho)
        acc_delta.add_(delta * delta * (1 - rho))
        param.sub_(delta * group["lr"])
