"""RMSprop: gradients scaled by a running root mean square, with momentum and centering.

The update, per parameter p with gradient g (negated when maximize), as torch defines it:

    g = g + weight_decay * p
    s = alpha * s + (1 - alpha) * g * g
    a = alpha * a + (1 - alpha) * g;  d = sqrt(s - a * a) + eps     (centered)
                                      d = sqrt(s) + eps              (otherwise)
    b = momentum * b + g / d;  p = p - lr * b                       (momentum > 0)
    p = p - lr * g / d                                               (otherwise)

State: step (a tensor, counted as torch does), square_avg, and momentum_buffer and grad_avg
when those options are on; every step runs the same autojit ops, so one compiled trace serves.
"""

from __future__ import annotations

from ..tensor.creation import zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_lr, check_nonnegative


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop).

    >>> import autojit
    >>> w = autojit.tensor([3.0], requires_grad=True)
    >>> optimizer = autojit.optim.RMSprop([w], lr=0.01, alpha=0.75)
    >>> w.sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # 3 - 0.01 * 1 / sqrt(0.25)
    tensor([2.9800])
    """

    def __init__(self, params, lr=1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon")
        check_nonnegative(momentum, "momentum")
        check_nonnegative(weight_decay, "weight_decay")
        check_nonnegative(alpha, "alpha")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        if not state:
            state["step"] = step_count(param)
            state["square_avg"] = zeros_like(param)
        # Checked apart from the rest, so that an option turned on later finds its state.
        if momentum > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = zeros_like(param)
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = zeros_like(param)
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad + param * group["weight_decay"]
        square_avg = state["square_avg"]
        square_avg.mul_(alpha)
        square_avg.add_(grad * grad * (1 - alpha))
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.add_((grad - grad_avg) * (1 - alpha))
            average = (square_avg - grad_avg * grad_avg).sqrt()
        else:
            average = square_avg.sqrt()
        average = average + group["eps"]
        if momentum > 0:
            buffer = state["momentum_buffer"]
            buffer.mul_(momentum)
            buffer.add_(grad / average)
            param.sub_(buffer * group["lr"])
        else:
            param.sub_(grad / average * group["lr"])
