"""torch's aten entry points of nn's normalizations and resizing, which programs and libraries
call by their aten names: `torch.native_layer_norm`, `native_group_norm` and
`native_batch_norm` (with `_native_batch_norm_legit` and its no-training form, and
`torch.ops.aten._batch_norm_with_update`), which return the normalization's saved statistics
beside its result, and `torch.ops.aten._upsample_bilinear2d_aa`, interpolate's antialiased
bilinear mode with aten's explicit sizes and scales.

Each result is nn.functional's op (layer_norm, group_norm, batch_norm, interpolate's
antialiasing), so its values, gradients and compiled code are that op's; the statistics beside
it are computed as torch saves them: layer norm's mean and reciprocal standard deviation per
normalized row (shaped to broadcast against the input) and batch norm's per channel, neither
differentiable, as in torch; group norm's per (sample, group), differentiable, as torch's are.
Batch norm in training updates the running statistics in place, as nn.functional.batch_norm
does. The functions are registered in the aten namespace (ops/aten_namespace.py) when this
module is imported, which the namespace asks for the first time it misses a name.
"""

from __future__ import annotations

import math

from ..ops.aten_namespace import register
from ..ops.composite import rsqrt
from ..ops.nn.batch_norm import batch_statistics
from ..ops.out_argument import write_results
from ..tensor import dtypes
from ..tensor.creation import empty
from ..tensor.tensor import Tensor
from . import functional as F
from .functional.interpolation import antialiased

# ---- layer norm and group norm ------------------------------------------------------------------

def native_layer_norm(input: Tensor, normalized_shape, weight, bias,  # noqa: A002
                      eps: float):
    """(layer_norm's result, mean, rstd): the mean and 1 / sqrt(biased variance + eps) of
    each row normalized over the trailing `normalized_shape` dims, of shape
    `input.shape[:-len(normalized_shape)] + (1,) * len(normalized_shape)`."""
    normalized_shape = tuple(int(n) for n in normalized_shape)
    if not normalized_shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    output = F.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean, rstd = _statistics(input.detach(), dims, eps)
    return output, mean, rstd


def _statistics(x: Tensor, dims: tuple, eps: float):
    """The mean and 1 / sqrt(biased variance + eps) over dims, kept as size-1 dims."""
    if x.numel() == 0:
        shape = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
        return (empty(shape, dtype=x.dtype, device=x.device),
                empty(shape, dtype=x.dtype, device=x.device))
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    variance = (centered * centered).mean(dims, keepdim=True)
    return mean, rsqrt(variance + eps)


def native_group_norm(input: Tensor, weight, bias, N: int, C: int, HxW: int,  # noqa: A002, N803
                      group: int, eps: float):
    """(group_norm's result, mean, rstd): the mean and 1 / sqrt(biased variance + eps) of
    each (sample, group), of shape (N, group); all three differentiable, as torch's are."""
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.")
    output = F.group_norm(input, group, weight, bias, eps)
    if input.numel() == 0:
        shape = (int(N), group)
        return (output, empty(shape, dtype=input.dtype, device=input.device),
                empty(shape, dtype=input.dtype, device=input.device))
    grouped = input.reshape(int(N), group, math.prod(input.shape[1:]) // group)
    mean, rstd = _statistics(grouped, (2,), eps)
    return output, mean.squeeze(2), rstd.squeeze(2)


# ---- batch norm ---------------------------------------------------------------------------------

def native_batch_norm(input: Tensor, weight, bias, running_mean, running_var,  # noqa: A002
                      training: bool, momentum: float, eps: float, *, out=None):
    """(batch_norm's result, save_mean, save_invstd): in training, the batch mean and
    1 / sqrt(biased variance + eps) of each channel (the running statistics, when given, are
    updated in place); in evaluation, two empty tensors (torch's CPU kernel's). `out`: a tuple
    of three tensors the results are written into, as torch's."""
    if out is not None:
        results = native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                    momentum, eps)
        return write_results("native_batch_norm", out, results, (None, None, None))
    output = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                          eps)
    if not training:
        return (output, empty((0,), dtype=input.dtype, device=input.device),
                empty((0,), dtype=input.dtype, device=input.device))
    statistics = batch_statistics(input.detach())
    return output, statistics[0], rsqrt(statistics[1] + eps)


def _native_batch_norm_legit(input: Tensor, weight, bias, running_mean, running_var,  # noqa: A002
                             training=None, momentum=None, eps=None):
    """native_batch_norm with running statistics that must be given
    (`_native_batch_norm_legit(input, weight, bias, running_mean, running_var, training,
    momentum, eps)`), or with none (`(input, weight, bias, training, momentum, eps)`, the
    no_stats overload)."""
    if isinstance(running_mean, bool):  # the no_stats overload: (training, momentum, eps)
        return _native_batch_norm_legit_no_stats(input, weight, bias, running_mean,
                                                 running_var, training)
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)


def _native_batch_norm_legit_default(input: Tensor, weight, bias, running_mean,  # noqa: A002
                                     running_var, training: bool, momentum: float,
                                     eps: float):
    """native_batch_norm with its running statistics (updated in training)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)


def _native_batch_norm_legit_no_stats(input: Tensor, weight, bias,  # noqa: A002
                                      training: bool, momentum: float, eps: float):
    """native_batch_norm without running statistics."""
    return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


def _native_batch_norm_legit_no_training(input: Tensor, weight, bias,  # noqa: A002
                                         running_mean: Tensor, running_var: Tensor,
                                         momentum: float, eps: float):
    """native_batch_norm in evaluation mode, by the running statistics."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, False, momentum,
                             eps)


def _batch_norm_with_update(input: Tensor, weight, bias, running_mean: Tensor,  # noqa: A002
                            running_var: Tensor, momentum: float, eps: float):
    """(result, save_mean, save_invstd, reserve): batch norm in training, the running
    statistics updated in place; `reserve` is cuDNN's workspace, empty (uint8) here, as on
    torch's CPU."""
    output, mean, invstd = native_batch_norm(input, weight, bias, running_mean, running_var,
                                             True, momentum, eps)
    return output, mean, invstd, empty((0,), dtype=dtypes.uint8, device=input.device)


# ---- antialiased bilinear resizing --------------------------------------------------------------

def _upsample_check(input: Tensor, output_size) -> None:  # noqa: A002
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size "
                           f"{len(output_size)}")
    if input.ndim != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {input.ndim}")
    height, width = (int(s) for s in input.shape[2:])
    if not (height > 0 and width > 0 and output_size[0] > 0 and output_size[1] > 0):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(H: {height}, W: {width}) output (H: {output_size[0]}, W: "
                           f"{output_size[1]})")


def _upsample_bilinear2d_aa_default(input: Tensor, output_size, align_corners: bool,  # noqa: A002
                                    scales_h=None, scales_w=None) -> Tensor:
    """(N, C, H, W) resized to `output_size` with the antialiasing triangle filter; scales_h
    and scales_w, where given, set the coordinate scale (1 / scale) in place of the sizes'
    ratio (unless align_corners)."""
    output_size = tuple(int(s) for s in output_size)
    _upsample_check(input, output_size)
    return antialiased(input, output_size, (scales_h, scales_w), "bilinear", bool(align_corners))


def _upsample_bilinear2d_aa_vec(input: Tensor, output_size, align_corners: bool,  # noqa: A002
                                scale_factors) -> Tensor:
    """(N, C, H, W) resized to `output_size`, or by `scale_factors` (exactly one given), with
    the antialiasing triangle filter."""
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        return _upsample_bilinear2d_aa_default(input, output_size, align_corners)
    if input.ndim != 4 or len(scale_factors) != 2:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {input.ndim}")
    sizes = tuple(int(math.floor(int(n) * float(s)))
                  for n, s in zip(input.shape[2:], scale_factors, strict=True))
    _upsample_check(input, sizes)
    return antialiased(input, sizes, tuple(float(s) for s in scale_factors), "bilinear",
                       bool(align_corners))


def _upsample_bilinear2d_aa(input: Tensor, output_size, align_corners: bool,  # noqa: A002
                            *args, **kwargs) -> Tensor:
    """aten._upsample_bilinear2d_aa: by output_size and optional scales_h and scales_w, or
    (the vec overload) by output_size or scale_factors."""
    if "scale_factors" in kwargs or (args and isinstance(args[0], (list, tuple))) or (
            not args and not kwargs and output_size is None):
        return _upsample_bilinear2d_aa_vec(input, output_size, align_corners, *args, **kwargs)
    return _upsample_bilinear2d_aa_default(input, output_size, align_corners, *args, **kwargs)


register("native_layer_norm", default=native_layer_norm)
register("native_group_norm", default=native_group_norm)
register("native_batch_norm", default=native_batch_norm)
register("_native_batch_norm_legit", call=_native_batch_norm_legit,
         default=_native_batch_norm_legit_default, no_stats=_native_batch_norm_legit_no_stats)
register("_native_batch_norm_legit_no_training", default=_native_batch_norm_legit_no_training)
register("_batch_norm_with_update", default=_batch_norm_with_update)
register("_upsample_bilinear2d_aa", call=_upsample_bilinear2d_aa,
         default=_upsample_bilinear2d_aa_default, vec=_upsample_bilinear2d_aa_vec)
