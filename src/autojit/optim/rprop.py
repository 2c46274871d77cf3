"""Rprop: resilient backpropagation, steps that grow while the gradient keeps its sign and
shrink when it flips (Riedmiller and Braun, 1993), as torch defines it.

The update, per parameter p with gradient g (negated when maximize), step sizes starting at
lr:

    s = sign(g * prev)
    f = etaplus where s > 0, etaminus where s < 0, 1 where s == 0
    step_size = clamp(step_size * f, step_size_min, step_size_max)
    g = 0 where f == etaminus                    (a sign flip: no step, and no flip next time)
    p = p - sign(g) * step_size
    prev = g

torch writes the three cases with boolean-mask assignments; here they are `where`s, the same
values, so that every step runs the same operations and a compiled training step keeps one
trace.
"""

from __future__ import annotations

from ..ops.elementwise import where
from ..tensor.creation import full_like, ones_like, zeros_like
from .adam import step_count
from .optimizer import Optimizer, check_lr


class Rprop(Optimizer):
    """Rprop (torch.optim.Rprop).

    >>> import autojit
    >>> w = autojit.tensor([1.0, -1.0], requires_grad=True)
    >>> optimizer = autojit.optim.Rprop([w], lr=0.5)
    >>> (w * autojit.tensor([3.0, -0.5])).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # each entry moves by the step size against its gradient
    tensor([ 0.5000, -0.5000])
    """

    def __init__(self, params, lr=1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        if not state:
            state["step"] = step_count(param)
            state["prev"] = zeros_like(param)
            # Made from the parameter, not the (traced) gradient: a factory on a traced tensor
            # lands on the CPU inside a compiled step, whatever the gradient's device.
            state["step_size"] = full_like(param, float(group["lr"]), dtype=grad.dtype)
        prev, step_size = state["prev"], state["step_size"]
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        sign = (grad * prev).sign()
        # Built on a tensor of ones, so the etas take the gradient's dtype (as torch's masked
        # writes into the sign tensor do), not the default dtype of bare Python numbers.
        factor = where(sign > 0, etaplus, where(sign < 0, etaminus, ones_like(grad)))
        step_size.mul_(factor)
        step_size.clamp_(step_size_min, step_size_max)
        grad = where(factor == etaminus, 0.0, grad)
        param.sub_(grad.sign() * step_size)
        prev.copy_(grad)
