"""RAdam: Adam with the variance of its adaptive rate rectified (Liu et al., 2019), as torch
defines it.

The update, per parameter p with gradient g (negated when maximize):

    t = t + 1
    g = g + weight_decay * p          or   p = p * (1 - lr * weight_decay)   (decoupled)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1 ** t)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 t beta2 ** t / (1 - beta2 ** t)
    r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
    p = p - lr * m_hat * r * sqrt(1 - beta2 ** t) / (sqrt(v) + eps)     (rho_t > 5)
    p = p - lr * m_hat                                                   (otherwise)

torch branches on rho_t > 5 in Python; here the choice is a `where` on the step-count tensor
(torch's capturable form), so every step runs the same operations and a compiled training step
keeps one trace.
"""

from __future__ import annotations

from ..ops.elementwise import where
from ..tensor import dtypes
from ..tensor.creation import zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_betas, check_lr, check_nonnegative


class RAdam(Optimizer):
    """RAdam (torch.optim.RAdam).

    >>> import autojit
    >>> w = autojit.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = autojit.optim.RAdam([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # the first steps are plain momentum: p - lr * m_hat
    tensor([ 0.8000, -1.6000])
    """

    def __init__(self, params, lr=1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon")
        check_betas(betas)
        check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        if not state:
            state["step"] = step_count(param)
            state["exp_avg"] = zeros_like(param)
            state["exp_avg_sq"] = zeros_like(param)
        step, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
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
        # In float64, as torch computes them from the step count as a Python number: rho_t in
        # float32 put the rectification 0.57% off at step 6.
        count = step.to(dtypes.float64)
        bias_correction1 = 1 - beta1 ** count
        bias_correction2 = 1 - beta2 ** count
        corrected_average = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - count * 2 * beta2 ** count / bias_correction2
        # Clamped at 0: where rho_t <= 5 the rectification is not used, and the clamp keeps
        # its square root from being NaN there.
        rectification = ((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t)).clamp(min=0).sqrt()
        adaptive = bias_correction2.sqrt() / (exp_avg_sq.sqrt() + group["eps"])
        scale = where(rho_t > 5.0, rectification * adaptive, 1.0)
        param.sub_(corrected_average * lr * scale)
