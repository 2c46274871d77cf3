"""NAdam: Adam with Nesterov momentum and a momentum schedule (Dozat, 2016), as torch defines it.

The update, per parameter p with gradient g (negated when maximize):

    t = t + 1
    g = g + weight_decay * p          or   p = p * (1 - lr * weight_decay)   (decoupled)
    mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    mu_product = mu_product * mu_t
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    d = sqrt(v / (1 - beta2 ** t)) + eps
    p = p - lr * (1 - mu_t) / (1 - mu_product) * g / d
          - lr * mu_next / (1 - mu_product * mu_next) * m / d

The step count and the running product of the momentum schedule (`mu_product`) are tensors
in the state, and everything above is autojit ops on them: a compiled training step reads no
Python number that changes from step to step. mu_product is float32 (float64 when that is the
default dtype) whatever the parameters' dtype, as torch keeps it.
"""

from __future__ import annotations

from ..tensor import dtypes
from ..tensor.creation import ones, zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_betas, check_lr, check_nonnegative, scalar_dtype


class NAdam(Optimizer):
    """NAdam (torch.optim.NAdam).

    >>> import autojit
    >>> w = autojit.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = autojit.optim.NAdam([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())
    tensor([ 0.8944, -1.8944])
    """

    def __init__(self, params, lr=2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon")
        check_betas(betas)
        check_nonnegative(weight_decay, "weight_decay")
        check_nonnegative(momentum_decay, "momentum_decay")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        if not state:
            state["step"] = step_count(param)
            state["mu_product"] = ones((), dtype=scalar_dtype(), device=param.device)
            state["exp_avg"] = zeros_like(param)
            state["exp_avg_sq"] = zeros_like(param)
        step, mu_product = state["step"], state["mu_product"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        if group["maximize"]:
            grad = -grad
        step.add_(1)
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad + param * weight_decay
        momentum_decay = group["momentum_decay"]
        # The schedule in float64, as torch computes it from Python numbers (the step count and
        # the product's value).
        count = step.to(dtypes.float64)
        mu = (1.0 - 0.5 * 0.96 ** (count * momentum_decay)) * beta1
        mu_next = (1.0 - 0.5 * 0.96 ** ((count + 1) * momentum_decay)) * beta1
        mu_product.mul_(mu)
        product = mu_product.to(dtypes.float64)
        exp_avg.add_((grad - exp_avg) * (1 - beta1))
        exp_avg_sq.mul_(beta2)
        exp_avg_sq.add_(grad * grad * (1 - beta2))
        denominator = (exp_avg_sq / (1 - beta2 ** count)).sqrt() + group["eps"]
        grad_weight = (1.0 - mu) / (1.0 - product) * -lr
        average_weight = mu_next / (1.0 - product * mu_next) * -lr
        param.add_(grad * grad_weight / denominator)
        param.add_(exp_avg * average_weight / denominator)
