"""Fractional max pooling for autojit.nn.functional (Graham, 2014, arXiv:1412.6071), over 2 and
3 spatial dims, as composites: fractional_max_pool2d/3d and their `_with_indices` forms.

Each input plane (sample, channel) is pooled with windows of a fixed size whose starts step by
a random fraction: along a dim of n inputs, o outputs and kernel k, with the plane's random
sample u in [0, 1) and alpha = (n - k) / (o - 1), window i starts at
int((i + u) alpha) - int(u alpha), the last one at n - k (torch's generate_intervals, computed
in the input's dtype as torch computes it, so the windows are torch's for the same samples).
The samples are `_random_samples` (N, C, dims), drawn from autojit's generator when not given;
inside a compiled function they are a random graph input, drawn anew on every call. torch's
sample order: (W, H) for 2-d, (T, H, W) for 3-d.

The starts are tensors, so each plane's windows are gathered from the flattened plane at
computed positions (a gather, whose gradient is a scatter-add) and reduced by the first
maximum in row-major window order, as torch's kernel scans them; the indices are the chosen
positions (flat indices into the plane, what max_unpool takes). nn/pooling/fractional.py holds
the layers.
"""

from __future__ import annotations

import math

import numpy as np

from ...ops.indexing import gather
from ...ops.nn.pooling import first_maximum as _first_maximum
from ...tensor import dtypes
from ...tensor.creation import arange, rand, tensor
from ...tensor.tensor import Tensor
from .conv import _check_tensor
from .pooling import _plane_strides

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}
# Which sample of a plane's `dims` random samples steps along each spatial dim, as torch's
# kernels read them.
_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}


def _sizes(value, name: str, argument: str, spatial: int) -> tuple:
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) == 1:
        values = values * spatial
    if len(values) != spatial:
        what = "Ints" if spatial == 2 else "three Ints"
        raise RuntimeError(f"{name}: {argument} must either be a single Int or tuple of {what}")
    return tuple(int(v) for v in values)


def _check(name: str, input: Tensor, kernel: tuple, out_sizes: tuple,  # noqa: A002
           samples: Tensor, spatial: int) -> None:
    """torch's checks of the input, the sizes and the samples, in torch's order."""
    where = f"{name}()" if spatial == 2 else f"{name}_out()"
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{where}: Expected {spatial + 1}D or {spatial + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {dim} "
                               f"being empty.")
    sizes = tuple(input.shape[-spatial:])
    # The 2-d check allows a last window ending at the input's end, the 3-d one does not; 3-d
    # checks time, width, height in that order.
    order = range(spatial) if spatial == 2 else (0, 2, 1)
    for dim in order:
        reach = out_sizes[dim] + kernel[dim] - 1
        if reach > sizes[dim] or (spatial == 3 and reach == sizes[dim]):
            what = _NAMES[spatial][dim]
            raise RuntimeError(f"{where}: pool {what} {kernel[dim]} too large relative to input "
                               f"{what} {sizes[dim]}")
    if not isinstance(samples, Tensor):
        raise TypeError(f"{name}(): argument '_random_samples' must be Tensor, not "
                        f"{type(samples).__name__}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch = input.shape[0] if input.ndim == spatial + 2 else 1
    channels = input.shape[-spatial - 1]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != spatial:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {spatial}; got "
                           f"{samples.shape[2]}.")
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")


def _starts(sample: Tensor, n: int, o: int, k: int) -> Tensor:
    """(N, C, o) window starts along one dim from each plane's sample (N, C)."""
    position = arange(o, device=sample.device)
    if o > 1:
        # alpha in the input's dtype, as a tensor: a Python float would be rounded to the
        # dtype eagerly but could be multiplied in double precision by a compiled kernel.
        numpy_type = sample.dtype.numpy.type
        alpha = tensor(numpy_type(n - k) / numpy_type(o - 1), dtype=sample.dtype,
                       device=sample.device)
        u = sample.unsqueeze(-1)
        steps = ((position.to(sample.dtype) + u) * alpha).to(dtypes.int64) - \
            (u * alpha).to(dtypes.int64)
        return steps.where(position < o - 1, n - k)
    return (position + (n - k)).expand(*sample.shape, o)


def _fractional_max_pool(name: str, input: Tensor, kernel_size, output_size,  # noqa: A002
                         samples, spatial: int):
    _check_tensor(name, "input", input)
    kernel = _sizes(kernel_size, name, "kernel_size", spatial)
    out_sizes = _sizes(output_size, name, "output_size", spatial)
    _check(name, input, kernel, out_sizes, samples, spatial)
    batched = input.ndim == spatial + 2
    x = input if batched else input.unsqueeze(0)
    batch, channels, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    samples = samples[:batch]
    planes = _plane_strides(sizes)
    # Flat positions of every window's elements: (N, C, *out_sizes, *kernel), the window dims
    # last in row-major order.
    positions = None
    for dim in range(spatial):
        starts = _starts(samples[:, :, _SAMPLE_OF_DIM[spatial][dim]], sizes[dim],
                         out_sizes[dim], kernel[dim])
        along = (starts.unsqueeze(-1) + arange(kernel[dim], device=x.device)) * planes[dim]
        shape = [batch, channels] + [1] * (2 * spatial)
        shape[2 + dim], shape[2 + spatial + dim] = out_sizes[dim], kernel[dim]
        along = along.reshape(*shape)
        positions = along if positions is None else positions + along
    count = math.prod(kernel)
    positions = positions.expand(batch, channels, *out_sizes, *kernel).reshape(
        batch, channels, -1)
    windows = gather(x.reshape(batch, channels, -1), 2, positions).reshape(
        batch, channels, *out_sizes, count)
    ranks = tensor(np.arange(count), device=x.device)
    result, first = _first_maximum(windows, (-1,), ranks, count)
    indices = gather(positions.reshape(batch, channels, *out_sizes, count), -1, first)
    indices = indices.squeeze(-1)
    if not batched:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return result, indices


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None) -> tuple:
    """(the pooled planes, the flat index of each window's maximum in its plane)."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        ratio = _pair(output_ratio)
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = rand(n_batch, input.size(-3), 2, dtype=input.dtype,
                               device=input.device)
    return _fractional_max_pool("fractional_max_pool2d", input, kernel_size, output_size,
                                _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None) -> tuple:
    """(the pooled volumes, the flat index of each window's maximum in its volume)."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        ratio = _triple(output_ratio)
        output_size = [int(input.size(-3) * ratio[0]), int(input.size(-2) * ratio[1]),
                       int(input.size(-1) * ratio[2])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 4 else input.size(0)
        _random_samples = rand(n_batch, input.size(-4), 3, dtype=input.dtype,
                               device=input.device)
    return _fractional_max_pool("fractional_max_pool3d", input, kernel_size, output_size,
                                _random_samples, 3)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                          output_ratio=None, return_indices: bool = False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) planes to output_size (or
    output_ratio of the input's size); with return_indices, (result, indices)."""
    result = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                                return_indices, _random_samples)
    return result if return_indices else result[0]


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None,  # noqa: A002
                          output_ratio=None, return_indices: bool = False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) volumes to output_size (or
    output_ratio of the input's size); with return_indices, (result, indices)."""
    result = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                                return_indices, _random_samples)
    return result if return_indices else result[0]


def _pair(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def _triple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value, value)
