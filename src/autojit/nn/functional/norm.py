"""Normalization and the robust regression losses of autojit.nn.functional, as composites.

layer_norm, group_norm and batch_norm normalize with the biased variance over their dims and
apply an optional per-element (layer_norm) or per-channel affine map; batch_norm in training
mode is ops/nn/batch_norm.py's primitives (the batch statistics, the normalization with its
affine map, the running statistics' update). It also updates the running statistics in place,
under no_grad, the way torch does (the running variance takes the unbiased estimate); under
autojit.compile that write to a captured tensor becomes an update output of the graph.
smooth_l1_loss and huber_loss pick between a quadratic and a linear branch with `where`. All
of it is autojit ops, so it differentiates twice and traces. This module imports nothing from
nn/functional/__init__.py, which re-exports it.
"""

from __future__ import annotations

import math
import warnings

from ...autograd.grad_mode import no_grad
from ...ops import elementwise as ew
from ...ops.autocast import FP32, autocast_op, float32_inside
from ...ops.composite import mean, rsqrt
from ...ops.nn.batch_norm import batch_norm_training, batch_statistics, running_statistic
from ...ops.nn.normalization import normalize_trailing
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .common import legacy_reduction

_REDUCTIONS = ("none", "mean", "sum")


def _check_tensor(name: str, argument: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' must be Tensor, not "
                        f"{type(value).__name__}")


def _check_float(name: str, input: Tensor, complex: bool = False,  # noqa: A002
                 kernel: str | None = None) -> None:
    _check_tensor(name, "input", input)
    if not (input.dtype.is_floating_point or complex and input.dtype.is_complex):
        if kernel is not None:  # torch's kernel that refuses the dtype
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{dtypes.scalar_type_name(input.dtype)}'")
        raise NotImplementedError(f"{name}: expected a floating point input, got {input.dtype}")


def _statistics(x: Tensor, dims: tuple):
    """Mean and biased variance over `dims`, both kept as size-1 dims."""
    count = math.prod(x.shape[d] for d in dims)
    mean = sum_(x, dims, keepdim=True) / count
    centered = x - mean
    variance = sum_(centered * centered, dims, keepdim=True) / count
    return mean, centered, variance


# ---- normalization ------------------------------------------------------------------------------


@autocast_op(cuda=FP32)
@float32_inside()
def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None,  # noqa: A002
               eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the trailing `normalized_shape` dims, then w x + b."""
    _check_float("layer_norm", input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(n) for n in normalized_shape)
    count = len(normalized_shape)
    if count == 0 or input.ndim < count or tuple(input.shape[input.ndim - count:]) != \
            normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    for argument, value in (("weight", weight), ("bias", bias)):
        if value is not None and tuple(value.shape) != normalized_shape:
            raise RuntimeError(f"Expected {argument} to be of same shape as normalized_shape, "
                               f"but got {argument} of shape {list(value.shape)} and "
                               f"normalized_shape = {list(normalized_shape)}")
    result = normalize_trailing(input, count, eps)
    if weight is not None:
        result = result * weight
    if bias is not None:
        result = result + bias
    return result


def _per_channel(vector: Tensor, ndim: int) -> Tensor:
    """A (C,) vector shaped to broadcast over channels at dim 1 of an ndim-D input."""
    return vector.reshape((1, vector.shape[0]) + (1,) * (ndim - 2))


def _affine(result: Tensor, weight, bias) -> Tensor:
    if weight is not None:
        result = result * _per_channel(weight, result.ndim)
    if bias is not None:
        result = result + _per_channel(bias, result.ndim)
    return result


@float32_inside(keep=("running_mean", "running_var"))
def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) of (N, C, *) by batch statistics or running ones.

    In training mode the batch mean and biased variance normalize, and running_mean and
    running_var (when given) move towards the batch mean and unbiased variance by `momentum`.
    """
    _check_float("batch_norm", input)
    if input.numel() == 0 and input.ndim < 2:  # torch returns an empty input as a clone
        return input.clone()
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input of 2 or more dims (N, C, *), got "
                         f"input of size {list(input.shape)}")
    channels = input.shape[1]
    for argument, value in (("running_mean", running_mean), ("running_var", running_var),
                            ("weight", weight), ("bias", bias)):
        if value is not None and value.numel() != channels:
            raise RuntimeError(f"{argument} should contain {channels} elements not "
                               f"{value.numel()}")
    if training:
        count = input.numel() // channels if channels else 0
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size torch.Size({list(input.shape)})")
        if (running_mean is None) != (running_var is None):
            raise ValueError("running_mean and running_var must either both be None or neither "
                             "be None")
        statistics = batch_statistics(input)
        if running_mean is not None:
            with no_grad():
                running_mean.copy_(running_statistic(input, statistics, running_mean, momentum,
                                                     False))
                running_var.copy_(running_statistic(input, statistics, running_var, momentum,
                                                    True))
        return batch_norm_training(input, statistics, weight, bias, eps)
    for argument, value in (("running_mean", running_mean), ("running_var", running_var)):
        if value is None:
            raise RuntimeError(f"{argument} must be defined in evaluation mode")
    # torch's inference kernel: input * alpha + beta, with alpha = weight / sqrt(var + eps)
    # and beta = bias - mean * alpha per channel; two passes over the input where
    # normalizing and then scaling made four (a digits CNN's evaluation: 374 -> 150 us for a
    # batch norm of 450 x 16 x 8 x 8).
    ndim = input.ndim
    mean = _per_channel(running_mean.to(input.dtype), ndim)
    alpha = rsqrt(_per_channel(running_var.to(input.dtype), ndim) + eps)
    if weight is not None:
        alpha = alpha * _per_channel(weight, ndim)
    beta = -(mean * alpha) if bias is None else _per_channel(bias, ndim) - mean * alpha
    return input * alpha + beta


@autocast_op(cuda=FP32)
@float32_inside()
def group_norm(input: Tensor, num_groups: int, weight=None, bias=None,  # noqa: A002
               eps: float = 1e-5) -> Tensor:
    """Normalize (N, C, *) over each group of C / num_groups channels and the spatial dims."""
    _check_float("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for argument, value in (("weight", weight), ("bias", bias)):
        if value is not None and (value.ndim != 1 or value.shape[0] != channels):
            raise RuntimeError(f"Expected {argument} to be a vector of size equal to the number "
                               f"of channels in input, but got {argument} of shape "
                               f"{list(value.shape)} and input of shape {list(input.shape)}")
    # the group size spelled out: -1 is ambiguous in an empty batch
    grouped = input.reshape(input.shape[0], num_groups,
                            math.prod(input.shape[1:]) // num_groups)
    result = normalize_trailing(grouped, 1, eps).reshape(tuple(input.shape))
    return _affine(result, weight, bias)


# ---- robust regression losses -------------------------------------------------------------------


def _loss_operands(name: str, input: Tensor, target, reduction: str) -> Tensor:  # noqa: A002
    _check_float(name, input, kernel=name.replace("_loss", "_cpu"))
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_tensor(name, "target", target)
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)
    return input - target


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        # A float16 loss is summed in float32, as torch's reduction does (an empty loss gives
        # nan, 0 / 0, as in torch).
        return mean(loss)
    if reduction == "sum":
        return sum_(loss)
    return loss


@autocast_op(cpu=FP32, cuda=FP32)
def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None,  # noqa: A002
                   reduce=None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    difference = _loss_operands("smooth_l1_loss", input, target, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    magnitude = ew.abs(difference)
    if beta == 0:
        return _reduce(magnitude, reduction)
    quadratic = magnitude < beta
    near = _inside(quadratic, difference)
    loss = ew.where(quadratic, near * near * (0.5 / beta), magnitude - 0.5 * beta)
    return _reduce(loss, reduction)


def _inside(quadratic: Tensor, difference: Tensor) -> Tensor:
    # The square only sees the differences it is taken for: at an infinite difference the
    # unused square's gradient would be 0 * inf = NaN.
    return ew.where(quadratic, difference, 0)


@autocast_op(cpu=FP32, cuda=FP32)
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight=None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target)."""
    difference = _loss_operands("huber_loss", input, target, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    magnitude = ew.abs(difference)
    quadratic = magnitude < delta
    near = _inside(quadratic, difference)
    loss = ew.where(quadratic, near * near * 0.5, (magnitude - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)
