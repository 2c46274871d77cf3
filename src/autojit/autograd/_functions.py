"""torch.autograd._functions: the old autograd Functions torch still ships, Resize and Type,
as custom Functions on autojit's ops."""

from __future__ import annotations

import math

from .function import Function


class Resize(Function):
    """A view of `tensor` with `sizes` (the same number of elements), its gradient viewed back."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in "
                f"total), but the given tensor has a size of "
                f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the "
                "number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes).clone()

    @staticmethod
    def backward(ctx, grad_output):
        assert grad_output.numel() == ctx.numel
        return grad_output.contiguous().view(ctx.input_sizes), None


class Type(Function):
    """A cast to `dest_type`, its gradient cast back to the input's dtype."""

    @staticmethod
    def forward(ctx, i, dest_type):
        ctx.input_type = i.type()
        return i.type(dest_type)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.type(ctx.input_type), None
