"""Copies between devices: Tensor.to(device), .cuda(), .cpu(), differentiable.

`move(x, device)` copies x's data to `device` (host to device, device to host) and, when x
requires grad, records a node whose backward moves the gradient back to x's device, so a CPU
leaf used on the GPU gets a CPU .grad and the reverse. The node is an autograd Function, so
its backward is itself differentiable (create_graph). ops/tensor_methods.py calls this.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..tensor.device import CPU
from ..tensor.tensor import Tensor


def _copy_data(data, device):
    """The data copied to `device` (an ndarray for the CPU, a CudaArray for a GPU)."""
    from .array import CudaArray

    if device.type == "cpu":
        return data if data.__class__ is np.ndarray else data.to_host()
    if data.__class__ is np.ndarray:
        return CudaArray.from_host(data, device.index or 0)
    if data.device_index != (device.index or 0):
        return CudaArray.from_host(data.to_host(), device.index or 0)
    return data


class ToCopy(Function):
    @staticmethod
    def forward(ctx, x, device):
        ctx.source = x.device
        return Tensor._make(_copy_data(x._concrete("Tensor.to(device)"), device), x._dtype)

    @staticmethod
    def backward(ctx, grad):
        return move(grad, ctx.source), None


def move(x: Tensor, device) -> Tensor:
    """x on `device`; x itself when it is there already (as torch's Tensor.to)."""
    if x.device == device:
        return x
    if x._requires_grad:
        return ToCopy.apply(x, device)
    return Tensor._make(_copy_data(x._concrete("Tensor.to(device)"), device), x._dtype)


def cpu(x: Tensor) -> Tensor:
    return move(x, CPU)
