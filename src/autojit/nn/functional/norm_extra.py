"""More normalization for autojit.nn.functional, as composites: instance_norm (batch norm of
each sample alone), rms_norm and local_response_norm. nn/normalization_extra.py's layers call
them; nn/functional/__init__.py re-exports them.

instance_norm normalizes every (sample, channel) plane over its spatial dims. With running
statistics it updates them in place under no_grad as torch does: each sample's mean and
unbiased variance move the running ones by `momentum`, averaged over the batch.
local_response_norm averages the squares over a window of neighbouring channels, zero-padded,
as torch's does through an average pool.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import no_grad
from ...ops.autocast import float32_inside
from ...ops.composite import rsqrt
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ...tensor.type_info import finfo
from .norm import _affine, _check_float, _per_channel, _statistics
from .padding import pad
from .pooling import avg_pool2d, avg_pool3d


@float32_inside(keep=("running_mean", "running_var"))
def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None,  # noqa: A002
                  bias=None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalize each channel of each sample of (N, C, *) over its spatial dims."""
    _check_float("instance_norm", input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    channels = input.shape[1]
    for argument, value in (("running_mean", running_mean), ("running_var", running_var),
                            ("weight", weight), ("bias", bias)):
        if value is not None and value.numel() != channels:
            raise RuntimeError(f"{argument} should contain {channels} elements not "
                               f"{value.numel()}")
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        mean = _per_channel(running_mean.to(input.dtype), input.ndim)
        variance = _per_channel(running_var.to(input.dtype), input.ndim)
        return _affine((input - mean) * rsqrt(variance + eps), weight, bias)
    dims = tuple(range(2, input.ndim))
    count = int(np.prod([input.shape[d] for d in dims]))
    if count == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{list(input.shape)}")
    mean, centered, variance = _statistics(input, dims)
    if running_mean is not None or running_var is not None:
        with no_grad():
            batch = input.shape[0]
            if running_mean is not None:
                sample_mean = sum_(mean.reshape(batch, channels), (0,)) / batch
                running_mean.copy_(running_mean * (1 - momentum)
                                   + sample_mean.to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = sum_(variance.reshape(batch, channels), (0,)) / batch * (
                    count / (count - 1))
                running_var.copy_(running_var * (1 - momentum)
                                  + unbiased.to(running_var.dtype) * momentum)
    return _affine(centered * rsqrt(variance + eps), weight, bias)


@float32_inside()
def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:  # noqa: A002
    """x / sqrt(mean(x^2) + eps) over the trailing normalized_shape dims, times weight; eps
    None is the machine epsilon of the input's dtype."""
    # torch's complex rms_norm squares (x * x), not |x|^2, as written here.
    _check_float("rms_norm", input, complex=True)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(n) for n in normalized_shape)
    count = len(normalized_shape)
    if count == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if input.ndim < count or tuple(input.shape[input.ndim - count:]) != \
            normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(normalized_shape)}")
    if eps is None:
        eps = finfo(input.dtype).eps
    dims = tuple(range(input.ndim - count, input.ndim))
    size = int(np.prod(normalized_shape))
    result = input * rsqrt(sum_(input * input, dims, keepdim=True) / size + eps)
    return result * weight if weight is not None else result


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4,  # noqa: A002
                        beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta."""
    # torch takes any numeric dtype: an integer input's window sums divide as integers (its
    # avg_pool truncates), and the normalized result is floating.
    if not isinstance(input, Tensor) or input.dtype is dtypes.bool_:
        _check_float("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    squares = (input * input).unsqueeze(1)
    if input.ndim == 3:
        squares = pad(squares, (0, 0, size // 2, (size - 1) // 2))
        average = avg_pool2d(squares, (size, 1), stride=1).squeeze(1)
    else:
        shape = tuple(input.shape)
        squares = squares.reshape(shape[0], 1, shape[1], shape[2], -1)
        squares = pad(squares, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        average = avg_pool3d(squares, (size, 1, 1), stride=1).squeeze(1).reshape(shape)
    return input / (average * alpha + k) ** beta
