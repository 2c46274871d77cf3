"""CrossMapLRN2d: torch's legacy cross-channel local response normalization of (N, C, H, W)
inputs (the Lua-torch layer torch.nn keeps beside LocalResponseNorm), with torch's numerics.

output = input * scale ** -beta, scale = k + alpha / size * (sum of input ** 2 over a window of
channels). torch computes the window sums with a running sum that never takes channel 0 back
out, so every channel c >= (size - 1) // 2 + 1 counts channel 0's square as well; and its
hand-written backward reads the ratio g * output / scale over channels [c - ip, c - ip + size)
with ip = size - (size - 1) // 2 (an index shifted from the Lua original), which is not the
derivative of that forward. Programs trained with torch's layer saw both, so both are kept:
the layer is an autograd Function whose backward is torch's, in autojit ops (so it traces,
compiles and can be differentiated again). Window sums are sums of shifted slices of the
zero-padded channels, a handful of fusible elementwise ops.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from .functional.padding import pad
from .module import Module

__all__ = ["CrossMapLRN2d"]


def _window_sums(x: Tensor, before: int, width: int) -> Tensor:
    """out[:, c] = sum of x[:, c - before + j] for j in [0, width), zero outside [0, C)."""
    channels = x.shape[1]
    padded = pad(x, (0, 0, 0, 0, before, max(width - 1 - before, 0)))
    total = padded[:, 0:channels]
    for j in range(1, width):
        total = total + padded[:, j:j + channels]
    return total


class _CrossMapLRN2dFunction(Function):
    """torch.nn._functions.CrossMapLRN2d: its forward and its backward."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):  # noqa: A002
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        channels = input.shape[1]
        squares = input * input
        pre_pad = int((size - 1) / 2 + 1)
        sums = _window_sums(squares, pre_pad - 1, 2 * pre_pad - 1)
        if channels > pre_pad:  # the running sum keeps channel 0 from channel pre_pad on
            kept = squares[:, 0:1].expand(-1, channels - pre_pad, -1, -1)
            sums = sums + pad(kept, (0, 0, 0, 0, pre_pad, 0))
        scale = sums * (alpha / size) + k
        output = scale ** -beta * input
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors  # noqa: A001
        size = ctx.size
        inverse_pre_pad = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        accumulated = _window_sums(ratio, inverse_pre_pad, size)
        grad_input = scale ** -ctx.beta * grad_output - (
            2 * ctx.alpha * ctx.beta / size) * input * accumulated
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """Cross-channel local response normalization of (N, C, H, W) inputs, torch's legacy form
    (LocalResponseNorm is the general one).

        >>> import autojit
        >>> autojit.nn.CrossMapLRN2d(5, alpha=1e-3)
        CrossMapLRN2d(5, alpha=0.001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
