"""SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

The update, per parameter p with gradient g (negated when maximize), as torch defines it:

    g = g + weight_decay * p
    b = g                                (first step)
    b = momentum * b + (1 - dampening) * g   (later steps)
    g = g + momentum * b   (nesterov)   or   g = b
    p = p - lr * g

Written in autojit ops, run under no_grad by Optimizer.step, so a compiled training step
captures it. The momentum buffer starts as zeros: with no dampening, `momentum * 0 + g` is the
first step's `b = g` exactly, so every step runs the same operations and one trace serves all.
"""

from __future__ import annotations

from ..tensor.creation import zeros_like
from .optimizer import Optimizer, check_fused, check_lr, check_nonnegative


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (torch.optim.SGD).

    >>> import autojit
    >>> w = autojit.tensor([1.0, -1.0], requires_grad=True)
    >>> optimizer = autojit.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     optimizer.step()
    >>> print(w.detach())
    tensor([ 0.4600, -0.4600])
    """

    def __init__(self, params, lr=1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None):
        check_lr(lr)
        check_nonnegative(momentum, "momentum")
        check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _update(self, param, grad, state, group) -> None:
        momentum, dampening = group["momentum"], group["dampening"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + param * group["weight_decay"]
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            first = buffer is None
            if first:
                buffer = zeros_like(param, dtype=grad.dtype)
                state["momentum_buffer"] = buffer
                if dampening != 0:
                    # The first step is b = g, not the dampened rule: different operations
                    # from every later step, so a compiled step must trace the next one anew.
                    buffer.copy_(grad.detach())
                    self._state_generation += 1
                    buffer = None
            if buffer is not None:
                buffer.mul_(momentum)
                if first:  # torch's first buffer is a detached copy (seen with differentiable)
                    buffer.add_(grad.detach())
                else:
                    buffer.add_(grad if dampening == 0 else grad * (1 - dampening))
            buffer = state["momentum_buffer"]
            grad = grad + buffer * momentum if group["nesterov"] else buffer
        param.sub_(grad * group["lr"])
