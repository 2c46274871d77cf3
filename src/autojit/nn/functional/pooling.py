"""Pooling for autojit.nn.functional, over 1, 2 and 3 spatial dims, written as composites.

Max, average and power-average (LP) pooling read their windows as conv.py's
convolution does (ops/nn/windows.py): one strided slice of the padded input per kernel offset,
stacked on a last dim that the reduction runs over; windows that tile the input (stride equal
to the kernel, no padding or dilation) are a reshape that splits each spatial dim into
(outputs, kernel) instead (ops/nn/pooling.py). Max pooling gives the gradient to the first
maximal element of a window (row-major order), as torch does: it is ops/nn/pooling.py's
primitives, whose composite is three fusible reductions (`first_maximum`); with
`return_indices` that composite runs here, and the same rank gives the flat index into each
input plane, by integer arithmetic on the rank.
Adaptive pooling is in pooling_adaptive.py. Max unpooling writes each value at its
index with `index_put`, whose gradient is the gather torch's backward is. All is autojit ops,
so it differentiates twice and traces; the layers of nn/pooling/__init__.py call it.
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import elementwise as ew
from ...ops.autocast import FP32, autocast_op
from ...ops.elementwise.extra import rounded_division as div
from ...ops.elementwise.math_primitives import relu
from ...ops.indexing import index_put
from ...ops.indexing.checks import check_index
from ...ops.layout import stack
from ...ops.nn.pooling import first_maximum as _first_maximum
from ...ops.nn.pooling import is_tiling as _is_tiling
from ...ops.nn.pooling import max_pool
from ...ops.nn.pooling import tile_dims as _tile_dims
from ...ops.nn.pooling import tiles as _tiles
from ...ops.nn.pooling import window_ranks as _window_ranks
from ...ops.nn.windows import pad_spatial as _pad_spatial
from ...ops.nn.windows import windows as _windows
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.creation import arange, tensor, zeros
from ...tensor.tensor import Tensor
from .conv import _check_tensor

_COUNT_WORDS = {1: "one", 2: "two", 3: "three"}
_DILATION_NAMES = {2: ("H", "W"), 3: ("T", "H", "W")}


# ---- arguments and output sizes -----------------------------------------------------------------


def _tuple_message(name: str, argument: str, spatial: int, size: int) -> str:
    """torch's complaint about a kernel_size/stride/padding/dilation of the wrong length."""
    if name == "max_pool1d":
        what = {"stride": "None, an int, list of ints, or tuple of ints",
                "padding": "an int, list of ints, or tuple of ints"}.get(
                    argument, "an int, list of ints or tuple of ints")
        return f"max_pool1d() {argument} must be {what} of size 1 but got size {size}"
    if spatial == 1:
        return f"{name}() argument '{argument}' should contain one int (got {size})"
    count = _COUNT_WORDS[spatial]
    either = "" if name == "avg_pool3d" else "either "
    omitted = "omitted, " if argument == "stride" else ""
    return f"{name}: {argument} must {either}be {omitted}a single int, or a tuple of {count} ints"


def _pool_tuple(value, name: str, argument: str, spatial: int) -> tuple:
    if isinstance(value, int):
        return (value,) * spatial
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * spatial
    if len(values) != spatial:
        raise RuntimeError(_tuple_message(name, argument, spatial, len(values)))
    return values


def _check_pool_input(name: str, input: Tensor, spatial: int) -> None:  # noqa: A002
    """The input's rank, checked first, as torch checks it before the geometry."""
    _check_tensor(name, "input", input)
    low, high = spatial + 1, spatial + 2
    if input.ndim not in (low, high):
        if name == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                               f"0 dim batch size for input, but got:{list(input.shape)}")
        if spatial == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"{name})")
        raise RuntimeError(f"non-empty {low}D or {high}D (batch mode) tensor expected for input")


def _check_pool_sizes(name: str, input: Tensor, spatial: int) -> None:  # noqa: A002
    """No empty dim but the batch's, checked after the geometry, as torch checks it."""
    low, high = spatial + 1, spatial + 2
    if any(n == 0 for n in input.shape[input.ndim - spatial - 1:]):
        if spatial == 3:  # torch's words, its "dimension 0" whatever the dim
            where = {"max_pool3d": "max_pool3d_with_indices_out_cpu_template"}.get(name, name)
            raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have "
                               f"positive length, but input has a shape of "
                               f"{list(input.shape)} and non-batch dimension 0 has length zero!")
        shown = f"{name}: " if name == "max_pool1d" else ""
        if name != "max_pool1d":  # torch runs 1-d average pooling as 2-d pooling
            low, high = max(low, 3), max(high, 4)
        raise RuntimeError(f"{shown}Expected {low}D or {high}D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(input.shape)}")


def _half_toward_zero(value: int) -> int:
    """value / 2 as C's integer division rounds it (toward zero), as torch's checks compute."""
    return value // 2 if value >= 0 else -(-value // 2)


def _pool_geometry(name, input, kernel_size, stride, padding, dilation, ceil_mode,  # noqa: A002
                   spatial, indices: bool = False):
    """Checked (kernel, stride, padding, dilation) tuples, output sizes and right-side extras.

    `extra` is the padding beyond `padding` that ceil_mode needs on the right of each dim.
    `indices`: max_pool1d with return_indices, which torch runs as 2-d max pooling, with its
    checks and messages.
    """
    _check_pool_input(name, input, spatial)
    kernel = _pool_tuple(kernel_size, name, "kernel_size", spatial)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pool_tuple(stride, name, "stride", spatial)
    padding = _pool_tuple(padding, name, "padding", spatial)
    dilation = _pool_tuple(dilation, name, "dilation", spatial)
    one_d_max = name == "max_pool1d" and not indices
    if one_d_max:
        _check_max_pool1d(kernel, stride, padding, dilation)
    else:
        # torch's order: each dim's output size checks its stride and padding, then the shape
        # check its kernel, stride and dilation signs and the input's empty dims.
        for k, s, p, d in zip(kernel, stride, padding, dilation, strict=True):
            if s == 0:
                raise RuntimeError("stride should not be zero")
            if p < 0:
                raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
            if p > _half_toward_zero(d * (k - 1) + 1):
                raise RuntimeError(f"pad should be at most half of effective kernel size, but "
                                   f"got pad={p}, kernel_size={k} and dilation={d}")
        if any(s < 0 for s in stride):
            raise RuntimeError("stride should not be zero")
        if any(k <= 0 for k in kernel):
            raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got "
                               f"kernel_size={list(kernel)}")
        if any(d <= 0 for d in dilation):
            if spatial == 1:
                raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got "
                                   f"{dilation[0]}")
            shown = " ".join(f"dilation{axis}: {d}"
                             for axis, d in zip(_DILATION_NAMES[spatial], dilation, strict=True))
            raise RuntimeError(f"dilation should be greater than zero, but got {shown}")
    _check_pool_sizes(name, input, spatial)
    sizes = tuple(input.shape[input.ndim - spatial:])
    out_sizes, extra = [], []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation, strict=True):
        span = n + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + p:  # the last window must start inside the input
            out -= 1
        out_sizes.append(out)
        extra.append(max((out - 1) * s + d * (k - 1) + 1 - (n + 2 * p), 0))
    if any(o <= 0 for o in out_sizes):
        _raise_too_small(name, input, sizes, kernel, padding, out_sizes)
    return kernel, stride, padding, dilation, tuple(out_sizes), tuple(extra)


def _check_max_pool1d(kernel, stride, padding, dilation) -> None:
    """max_pool1d's own checks, in its order."""
    if kernel[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got "
                           f"{kernel[0]}")
    if stride[0] <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {stride[0]}")
    if padding[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding[0]}")
    if padding[0] > kernel[0] // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={padding[0]} and kernel_size={kernel[0]}")
    if dilation[0] <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got "
                           f"{dilation[0]}")


def _raise_too_small(name, input, sizes, kernel, padding, out_sizes):  # noqa: A002
    if name == "max_pool1d":
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out_sizes[0]}")
    if name == "avg_pool3d" and any(n + 2 * p < k for n, k, p in zip(sizes, kernel, padding,
                                                                     strict=True)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller "
                           f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    channels = input.shape[input.ndim - len(sizes) - 1]
    given, calculated = list(sizes), list(out_sizes)
    if len(sizes) == 1:  # torch runs 1-d average pooling as 2-d pooling of height 1
        given, calculated = [1, *given], [1, *calculated]
    raise RuntimeError(f"Given input size: ({'x'.join(map(str, [channels, *given]))}). "
                       f"Calculated output size: ({'x'.join(map(str, [channels, *calculated]))})."
                       " Output size is too small")


def _batched(input: Tensor, spatial: int) -> tuple:  # noqa: A002
    """(N, C, *spatial) input and whether the caller's input had the batch dim."""
    batched = input.ndim == spatial + 2
    return (input if batched else input.unsqueeze(0)), batched


def _unbatch(result: Tensor, batched: bool) -> Tensor:
    return result if batched else result.squeeze(0)


def _plane_strides(sizes) -> list:
    return [math.prod(sizes[j + 1:]) for j in range(len(sizes))]


def _flat_indices(first: Tensor, sizes, kernel, stride, padding, dilation, out_sizes) -> Tensor:
    """Each window's chosen element as a flat index into its input plane, from its rank."""
    planes = _plane_strides(sizes)
    base = np.zeros(tuple(out_sizes), dtype=np.int64)
    for j, (o, s, p) in enumerate(zip(out_sizes, stride, padding, strict=True)):
        shape = [1] * len(out_sizes)
        shape[j] = o
        base = base + ((np.arange(o) * s - p) * planes[j]).reshape(shape)
    offsets = None
    for j, (k, d) in enumerate(zip(kernel, dilation, strict=True)):
        inner = math.prod(kernel[j + 1:])
        along = ew.remainder(ew.floor_divide(first, inner), k) if j else \
            ew.floor_divide(first, inner)
        term = along * (d * planes[j])
        offsets = term if offsets is None else offsets + term
    return offsets + tensor(base, device=first.device)


# ---- max pooling --------------------------------------------------------------------------------


def _max_pool(name, input, kernel_size, stride, padding, dilation, ceil_mode,  # noqa: A002
              return_indices, spatial):
    kernel, stride, padding, dilation, out_sizes, extra = _pool_geometry(
        name, input, kernel_size, stride, padding, dilation, ceil_mode, spatial, return_indices)
    x, batched = _batched(input, spatial)
    amounts = [(p, p + e) for p, e in zip(padding, extra, strict=True)]
    if not return_indices and x.dtype is not dtypes.bool_:
        return _unbatch(max_pool(x, kernel, stride, dilation, amounts, out_sizes), batched)
    sizes = tuple(x.shape[2:])
    count = math.prod(kernel)
    if _is_tiling(kernel, stride, padding, dilation, extra):
        windows, dims = _tiles(x, kernel, out_sizes), _tile_dims(spatial)
        shape = []
        for k in kernel:
            shape.extend((k, 1))
        ranks = arange(count, device=x.device).reshape(*shape[:-1])
    else:
        fill = -math.inf if x.dtype.is_floating_point else int(np.iinfo(x.dtype.numpy).min)
        ranks = tensor(_window_ranks(sizes, kernel, stride, dilation, amounts, out_sizes),
                       device=x.device)
        x = _pad_spatial(x, amounts, value=fill)
        windows, dims = stack(_windows(x, kernel, stride, dilation, out_sizes), -1), (-1,)
    result, first = _first_maximum(windows, dims, ranks, count)
    result = _unbatch(result, batched)
    if not return_indices:
        return result
    first = first.reshape(first.shape[0], first.shape[1], *out_sizes)
    indices = _flat_indices(first, sizes, kernel, stride, padding, dilation, out_sizes)
    return result, _unbatch(indices, batched)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False, return_indices: bool = False):
    """max_pool1d's (values, indices): indices are flat positions in each input plane."""
    return _max_pool("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     True, 1)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False, return_indices: bool = False):
    """max_pool2d's (values, indices): indices are flat positions in each input plane."""
    return _max_pool("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     True, 2)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False, return_indices: bool = False):
    """max_pool3d's (values, indices): indices are flat positions in each input volume."""
    return _max_pool("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     True, 3)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum over each kernel window of (N, C, L) or (C, L); padding is -inf."""
    return _max_pool("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 1)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum over each kernel window of (N, C, H, W) or (C, H, W); padding is -inf."""
    return _max_pool("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 2)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum over each kernel window of (N, C, D, H, W) or (C, D, H, W)."""
    # Under autocast on the CPU torch's max_pool3d runs in float32, its form with indices
    # (max_pool3d_with_indices) in the input's dtype.
    pool = _max_pool if return_indices else _max_pool_float32
    return pool("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices, 3)


_max_pool_float32 = autocast_op(cpu=FP32)(_max_pool)


# ---- average and power-average pooling ----------------------------------------------------------


def _average_divisor(sizes, kernel, stride, padding, out_sizes, count_include_pad) -> np.ndarray:
    """(*out_sizes) counts of the elements each window averages, as torch counts them.

    With count_include_pad a window counts its padding but not what lies beyond it (ceil_mode's
    extra right columns); without, only input elements count.
    """
    counts = []
    for n, k, s, p, out in zip(sizes, kernel, stride, padding, out_sizes, strict=True):
        starts = np.arange(out) * s - p
        stops = np.minimum(starts + k, n + p)
        if not count_include_pad:
            starts, stops = np.maximum(starts, 0), np.minimum(stops, n)
        counts.append(stops - starts)
    divisor = counts[0]
    for count in counts[1:]:
        divisor = np.multiply.outer(divisor, count)
    return divisor


def _avg_pool(name, input, kernel_size, stride, padding, ceil_mode,  # noqa: A002
              count_include_pad, divisor_override, spatial):
    kernel, stride, padding, dilation, out_sizes, extra = _pool_geometry(
        name, input, kernel_size, stride, padding, 1, ceil_mode, spatial)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype.is_complex:
        # torch's kernels, after its checks of the geometry (1-d pooling runs as 2-d)
        kernel_name = "avg_pool3d_out_frame" if spatial == 3 else "avg_pool2d"
        raise NotImplementedError(f'"{kernel_name}" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    x, batched = _batched(input, spatial)
    if _is_tiling(kernel, stride, padding, dilation, extra):
        total = sum_(_tiles(x, kernel, out_sizes), _tile_dims(spatial))
    else:
        amounts = [(p, p + e) for p, e in zip(padding, extra, strict=True)]
        x = _pad_spatial(x, amounts)
        total = sum_(stack(_windows(x, kernel, stride, dilation, out_sizes), -1), -1)
    # torch divides an integer sum as C++ does, truncating, and keeps the input's dtype.
    mode = None if total.dtype.is_floating_point else "trunc"
    if divisor_override is not None:
        result = div(total, divisor_override, rounding_mode=mode)
    else:
        divisor = _average_divisor(tuple(input.shape[input.ndim - spatial:]), kernel, stride,
                                   padding, out_sizes, count_include_pad)
        if (divisor == divisor.flat[0]).all():
            result = div(total, int(divisor.flat[0]), rounding_mode=mode)
        else:
            # in the sum's dtype itself: NumPy has no bfloat16 (its stand-in is float32)
            result = div(total, tensor(divisor.astype(total.dtype.numpy), dtype=total.dtype,
                                       device=total.device), rounding_mode=mode)
    if result.dtype is not input.dtype and not input.dtype.is_floating_point:
        result = result.to(input.dtype)
    return _unbatch(result, batched)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean over each kernel window of (N, C, L) or (C, L); padding counts as 0."""
    return _avg_pool("avg_pool1d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None, 1)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None) -> Tensor:
    """The mean over each kernel window of (N, C, H, W) or (C, H, W); padding counts as 0."""
    return _avg_pool("avg_pool2d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override, 2)


@autocast_op(cpu=FP32)
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None) -> Tensor:
    """The mean over each kernel window of (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool("avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override, 3)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, spatial):  # noqa: A002
    # torch's formula, step for step (so the derivatives at 0 are its own): (sum of x^p over
    # the window) ^ (1 / p), the sum taken as an average times the window size.
    kernel = _pool_tuple(kernel_size, f"avg_pool{spatial}d", "kernel_size", spatial)
    average = _avg_pool(f"avg_pool{spatial}d", input ** norm_type, kernel, stride, 0,
                        ceil_mode, True, None, spatial)
    total = ew.sign(average) * relu(ew.abs(average)) * math.prod(kernel)
    return total ** (1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """(sum over each window of x^p)^(1/p) of (N, C, L) or (C, L); p = norm_type."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """(sum over each window of x^p)^(1/p) of (N, C, H, W) or (C, H, W); p = norm_type."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """(sum over each window of x^p)^(1/p) of (N, C, D, H, W) or (C, D, H, W)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _type_name(dtype) -> str:
    return dtypes.scalar_type_name(dtype)


# ---- max unpooling ------------------------------------------------------------------------------


def _unpool_output_size(input, kernel, stride, padding, output_size) -> tuple:  # noqa: A002
    spatial = len(kernel)
    default = [(input.shape[input.ndim - spatial + d] - 1) * stride[d] + kernel[d]
               - 2 * padding[d] for d in range(spatial)]
    if output_size is None:
        return tuple(default)
    output_size = tuple(int(s) for s in output_size)
    if len(output_size) == spatial + 2:
        output_size = output_size[2:]
    if len(output_size) != spatial:
        raise ValueError(f"output_size should be a sequence containing {spatial} or "
                         f"{spatial + 2} elements, but it has a length of '{len(output_size)}'")
    for d in range(spatial):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{low} and {high})")
    return output_size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size,  # noqa: A002
                spatial):
    name = f"max_unpool{spatial}d"
    _check_tensor(name, "input", input)
    _check_tensor(name, "indices", indices)
    kernel = _pool_tuple(kernel_size, name, "kernel_size", spatial)
    stride = kernel if stride is None else _pool_tuple(stride, name, "stride", spatial)
    padding = _pool_tuple(padding, name, "padding", spatial)
    out_sizes = _unpool_output_size(input, kernel, stride, padding, output_size)
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    x, batched = _batched(input, spatial)
    index, _ = _batched(indices, spatial)
    planes = x.shape[0] * x.shape[1]
    plane = math.prod(out_sizes)
    index = index.reshape(planes, -1)
    if not index.is_symbolic:
        values = index._host("max_unpool")
        bad = (values < 0) | (values >= plane)
        if bad.any():
            # torch unpools 1-d input as 2-d input of width 1, and says so.
            shown = [*out_sizes, 1] if spatial == 1 else out_sizes
            raise RuntimeError(f"Found an invalid max index: {int(values[bad][0])} (output "
                               f"volumes are of size {'x'.join(map(str, shown))})")
    index = check_index(index, plane, "gather", dim=1)
    # One flat index per element over all planes: plane number * plane size + its index.
    offsets = arange(planes, dtype=dtypes.int64, device=x.device).reshape(planes, 1) * plane
    flat = (index + offsets).reshape(1, -1)
    canvas = zeros((planes * plane,), dtype=x.dtype, device=x.device)
    result = index_put(canvas, x.reshape(-1), flat, (0,))
    return _unbatch(result.reshape(x.shape[0], x.shape[1], *out_sizes), batched)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None,  # noqa: A002
                 padding=0, output_size=None) -> Tensor:
    """The inverse of max_pool1d: each value written at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@autocast_op(cpu=FP32)
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None,  # noqa: A002
                 padding=0, output_size=None) -> Tensor:
    """The inverse of max_pool2d: each value written at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


@autocast_op(cpu=FP32)
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None,  # noqa: A002
                 padding=0, output_size=None) -> Tensor:
    """The inverse of max_pool3d: each value written at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)
