"""AdamW: Adam with decoupled weight decay (p = p * (1 - lr * weight_decay) before the step).

The update itself lives in adam.py; this module only sets torch's AdamW defaults
(weight_decay=1e-2) and the decoupled form.
"""

from __future__ import annotations

from .adam import Adam


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW).

    >>> import autojit
    >>> w = autojit.tensor([1.0], requires_grad=True)
    >>> optimizer = autojit.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())          # 1 * (1 - 0.1 * 0.5) - 0.1
    tensor([0.8500])
    """

    def __init__(self, params, lr=1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
