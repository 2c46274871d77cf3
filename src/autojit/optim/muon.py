"""Muon: momentum SGD whose update of a weight matrix is orthogonalized, as torch defines it
(torch.optim.Muon, for the 2-D parameters of hidden layers; biases and embeddings go to
another optimizer).

The update, per matrix parameter p with gradient g:

    B = B + (1 - momentum) (g - B)               (B, the momentum buffer, starts at 0)
    U = g + momentum (B - g) if nesterov, else B
    O = NS(U): U in bfloat16, transposed when it has more rows than columns, divided by
        max(|U|, eps), then ns_steps times  G = O O^T;  O = a O + (b G + c G G) O
    p = p (1 - lr weight_decay) - adjusted lr * O

where the adjusted lr is lr * sqrt(max(1, rows / columns)) ("original", the default) or
lr * 0.2 * sqrt(max(rows, columns)) ("match_rms_adamw"). The Newton-Schulz iterations are
torch's bfloat16 ones, computed in float32 and rounded to bfloat16 where torch's ops round
(once per product and per addmm, whose CPU kernels accumulate in float32; once per norm, clamp
and division): float32 and float64 parameters follow torch's to float32's rounding
(tests/test_optim_matrix_torch.py), bfloat16 ones to about one bfloat16 rounding (their
momentum buffers to the bit).

State: momentum_buffer.
"""

from __future__ import annotations

import math

from ..ops.linalg.products import addmm
from ..tensor import dtypes
from ..tensor.creation import zeros_like
from ..tensor.tensor import Tensor
from .optimizer import Optimizer

_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def orthogonalized(grad: Tensor, coefficients: tuple, steps: int, eps: float) -> Tensor:
    """torch's _zeropower_via_newtonschulz: the quintic Newton-Schulz iteration towards the
    orthogonal factor of the matrix `grad`, in bfloat16."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = grad.size(0) > grad.size(1)
    if grad.dtype is dtypes.bfloat16:
        grad.div_(grad.norm().clamp(min=eps))  # torch's bfloat16() is the gradient itself
        ortho = grad.float()
    else:
        # computed in float32, rounded to bfloat16 where torch's bfloat16 ops round: once
        # per product and per addmm (its CPU kernels accumulate in float32), once per norm,
        # clamp and division
        ortho = _rounded(grad.float())
        ortho = _rounded(ortho / _rounded(_rounded(ortho.norm()).clamp(min=eps)))
    if tall:
        ortho = ortho.T
    for _ in range(steps):
        gram = _rounded(ortho @ ortho.T)
        ortho = _rounded(addmm(ortho, _rounded(addmm(gram, gram, gram, beta=b, alpha=c)),
                               ortho, beta=a))
    ortho = ortho.bfloat16()
    return ortho.T if tall else ortho


def _rounded(x: Tensor) -> Tensor:
    """A float32 tensor rounded to bfloat16's precision, kept in float32."""
    return x.bfloat16().float()


def adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    """The learning rate scaled for a matrix of this shape (torch's _adjust_lr)."""
    rows, columns = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / columns))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, columns))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon (torch.optim.Muon), for 2-D parameters.

    >>> import autojit
    >>> w = autojit.tensor([[3.0, 0.0], [0.0, 1.0]], requires_grad=True)
    >>> optimizer = autojit.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w ** 2).sum().backward()
    >>> optimizer.step()
    >>> print(w.detach())  # steps near lr in both directions, though one gradient is 3x
    tensor([[2.9250, 0.0000],
            [0.0000, 0.8867]])
    """

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple = _COEFFICIENTS, eps: float = 1e-7,
                 ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                if param.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {param.size()}")

    def _update(self, param, grad, state, group) -> None:
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = zeros_like(grad)
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buffer, momentum = state["momentum_buffer"], group["momentum"]
        buffer.lerp_(grad, 1 - momentum)
        update = grad.lerp(buffer, momentum) if group["nesterov"] else buffer
        update = orthogonalized(update, group["ns_coefficients"], group["ns_steps"],
                                group["eps"])
        lr = group["lr"]  # a tensor lr stays one, as in torch
        param.mul_(1 - lr * group["weight_decay"])
        param.add_(update, alpha=-adjusted_lr(lr, group["adjust_lr_fn"], param.shape))

    def _update_complex(self, param, grad, state, group) -> None:
        raise RuntimeError("Muon does not support complex parameters")
