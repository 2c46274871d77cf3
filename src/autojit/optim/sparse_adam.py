"""SparseAdam: Adam that updates only the entries a gradient holds (the "lazy" Adam for
embeddings), as torch defines it.

autojit has no sparse tensors, so SparseAdam takes dense gradients (torch refuses them) and
reads a dense gradient as the sparse one holding its nonzero entries: only where g != 0 are
the moments and the parameter updated, the rest is left as it is. For the gradient of an
embedding lookup, whose rows not looked up are zero, that is torch's SparseAdam over
`Embedding(sparse=True)`. Per parameter p with gradient g (negated when maximize), t counting
every step:

    t = t + 1
    where g != 0:
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t) * m / (sqrt(v) + eps)

The step count is a tensor (torch keeps a Python int), so a compiled training step keeps one
trace; a torch state dict's int step is taken as it is and becomes a tensor on the next step.
"""

from __future__ import annotations

from ..ops.elementwise import where
from ..tensor.creation import zeros_like
from ..tensor.tensor import Tensor
from .adam import step_count
from .optimizer import Optimizer, check_betas


class SparseAdam(Optimizer):
    """SparseAdam (torch.optim.SparseAdam), over dense gradients: zero entries are absent.

    >>> import autojit
    >>> w = autojit.tensor([1.0, -2.0, 3.0], requires_grad=True)
    >>> optimizer = autojit.optim.SparseAdam([w], lr=0.1)
    >>> (w * autojit.tensor([1.0, 0.0, -1.0])).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # the entry with a zero gradient is not touched
    tensor([ 0.9000, -2.0000,  3.1000])
    """

    def __init__(self, params, lr=1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {float(lr)}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = step_count(param)
            state["exp_avg"] = zeros_like(param)
            state["exp_avg_sq"] = zeros_like(param)
        elif not isinstance(state["step"], Tensor):  # torch's int, from a loaded state dict
            state["step"] = step_count(param).fill_(state["step"])
        step, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
        if group.get("maximize", False):
            grad = -grad
        step.add_(1)
        present = grad != 0
        new_exp_avg = exp_avg + (grad - exp_avg) * (1 - beta1)
        new_exp_avg_sq = exp_avg_sq + (grad * grad - exp_avg_sq) * (1 - beta2)
        exp_avg.copy_(where(present, new_exp_avg, exp_avg))
        exp_avg_sq.copy_(where(present, new_exp_avg_sq, exp_avg_sq))
        step_size = (1 - beta2 ** step).sqrt() / (1 - beta1 ** step) * group["lr"]
        update = new_exp_avg / (new_exp_avg_sq.sqrt() + group["eps"]) * step_size
        param.sub_(where(present, update, 0.0))
