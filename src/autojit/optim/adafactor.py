"""Adafactor: Adam-like steps from a factored second moment, as torch defines it
(torch.optim.Adafactor).

The update, per parameter p with gradient g (negated when maximize), at step t:

    beta2 term  b = t ** beta2_decay,   rho = min(lr, 1 / sqrt(t)),
    alpha = max(eps2, rms(p)) * rho              (rms: the 2-norm over sqrt(numel))
    p = p (1 - lr weight_decay)
    a matrix (or more dims), factored over its last two:
        R = R + b (mean of g^2 over the last dim - R)      (row variances, last dim 1)
        C = C + b (mean of g^2 over the dim before - C)    (column variances)
        V = R C / max(mean of R over its rows, eps1)
    a vector or a scalar:
        V = V + b (g^2 - V)
    U = g / sqrt(max(V, eps1^2)),   p = p - alpha / max(1, rms(U) / d) * U

eps1 defaults to the machine epsilon of p's dtype. Like torch's, the step reads three values
(the step count and two norms) as Python numbers, so a compiled step reads them back.

State: step (a tensor), and row_var and col_var, or variance.
"""

from __future__ import annotations

from ..tensor.creation import zeros, zeros_like
from ..tensor.tensor import Tensor
from ..tensor.type_info import finfo
from .optimizer import Optimizer, scalar_dtype


class Adafactor(Optimizer):
    """Adafactor (torch.optim.Adafactor).

    >>> import autojit
    >>> w = autojit.tensor([[1.0, -2.0], [0.5, 4.0]], requires_grad=True)
    >>> optimizer = autojit.optim.Adafactor([w], lr=0.01)
    >>> (w ** 2).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())
    tensor([[ 0.9639, -1.9820],
            [ 0.4900,  3.9800]])
    """

    def __init__(self, params, lr=1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group) -> None:
        if not state:
            state["step"] = zeros((), dtype=scalar_dtype())
            if grad.dim() > 1:
                state["row_var"] = grad.new_zeros((*grad.shape[:-1], 1))
                state["col_var"] = grad.new_zeros((*grad.shape[:-2], 1, grad.shape[-1]))
            else:
                state["variance"] = zeros_like(grad)
        if group["maximize"]:
            grad = -grad
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = finfo(param.dtype).eps
        step = state["step"]
        step.add_(1)
        count = step.item()
        beta2_term = count ** group["beta2_decay"]
        lr = group["lr"]  # a tensor lr stays one, as in torch: alpha is then a float32 tensor
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * \
            min(lr, 1 / (count ** 0.5))
        if group["weight_decay"] != 0:
            param.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            # the means of g^2 over the last dim and the one before, as torch forms them
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                          beta2_term)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                          beta2_term)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, beta2_term)
            estimate = variance.clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denominator = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        param.add_(update, alpha=-alpha / denominator)

    def _update_complex(self, param, grad, state, group) -> None:
        raise RuntimeError("Adafactor does not support complex parameters")
