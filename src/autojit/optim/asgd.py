"""ASGD: averaged stochastic gradient descent (Polyak and Juditsky, 1992), as torch defines it.

The update, per parameter p with gradient g (negated when maximize), eta starting at lr and mu
at 1:

    t = t + 1
    g = g + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    ax = p                                  (mu == 1)
    ax = ax + mu * (p - ax)                 (otherwise)
    eta = lr / (1 + lambd * lr * t) ** alpha
    mu = 1 / max(1, t - t0)

ax is the running average of the parameter (the averaged iterate). step, eta and mu are
tensors in the state and the update is autojit ops on them (torch's capturable form), so a
compiled training step keeps one trace.
"""

from __future__ import annotations

from ..ops.elementwise import where
from ..tensor.creation import full, ones, zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_lr, check_nonnegative, scalar_dtype


class ASGD(Optimizer):
    """Averaged SGD (torch.optim.ASGD); the average is `optimizer.state[p]["ax"]`.

    >>> import autojit
    >>> w = autojit.tensor([1.0], requires_grad=True)
    >>> optimizer = autojit.optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> w.sum().backward()
    >>> optimizer.step()
    >>> print(w.detach(), optimizer.state[w]["ax"])
    tensor([0.9000]) tensor([0.9000])
    """

    def __init__(self, params, lr=1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check_lr(lr)
        check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = step_count(param)
            dtype = scalar_dtype()  # torch's: float32 unless float64 is the default dtype
            state["eta"] = full((), float(lr), dtype=dtype, device=param.device)
            state["mu"] = ones((), dtype=dtype, device=param.device)
            state["ax"] = zeros_like(param)
        step, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
        if group["maximize"]:
            grad = -grad
        step.add_(1)
        if group["weight_decay"] != 0:
            grad = grad + param * group["weight_decay"]
        eta_value = eta.to(param.dtype)  # torch reads it as a Python float
        param.mul_(1 - eta_value * lambd)
        param.sub_(grad * eta_value)
        ax.copy_(where(mu == 1, param, ax + (param - ax) * mu))
        eta.copy_(lr / (1 + step * (lambd * lr)) ** group["alpha"])
        mu.copy_(1 / (step - group["t0"]).clamp(min=1))
