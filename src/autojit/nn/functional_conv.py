"""Convolution, pooling and constant padding for autojit.nn.functional, written as composites.

Every function here is built from layout, reduction and matmul primitives, so autograd,
double backward and tracing for compile come from their rules. The shared step is window
extraction: for each offset inside the kernel, one strided slice of the (padded) input reads
the element at that offset for every output position at once. Stacking those slices gives the
im2col matrix, and convolution is then one matmul with the reshaped weight; pooling reduces
over the stacked kernel dim instead (for max pooling, the window's first maximum, which alone
gets the gradient, as in torch; a sum and a divisor for average pooling). Pooling whose
windows tile the input (stride equal to the kernel, no padding or dilation) skips the slices:
a reshape that splits each spatial dim into (outputs, kernel), and the reductions run over
the kernel dims. Padding is `embed_slice` (zero padding, the adjoint of slicing) or `cat` with
constant blocks for other values.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..ops import elementwise as ew
from ..ops.layout import cat, embed_slice, slice_dims, stack
from ..ops.linalg import matmul
from ..ops.reduction import amax, amin, sum_
from ..tensor.creation import arange, full, tensor
from ..tensor.tensor import Tensor

# torch names dtypes by their C++ scalar type in conv errors ("expected scalar type Double").
_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int",
                      "int64": "Long", "bool": "Bool", "bfloat16": "BFloat16"}
_C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int",
                 "int64": "long int", "bool": "bool", "bfloat16": "c10::BFloat16"}


def _check_tensor(name: str, argument: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' must be Tensor, not "
                        f"{type(value).__name__}")


def _conv_tuple(value, count: int, argument: str) -> tuple:
    """An int or a sequence of `count` ints (a 1-sequence repeats), with conv's error."""
    if isinstance(value, int):
        return (value,) * count
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise RuntimeError(f"expected {argument} to be a single integer value or a list of "
                           f"{count} values to match the convolution dimensions, but got "
                           f"{argument}={list(values)}")
    return values


def _pool_tuple(value, name: str, argument: str, message: str) -> tuple:
    """An int or a 1- or 2-sequence of ints, as pooling takes them."""
    if isinstance(value, int):
        return (value, value)
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * 2
    if len(values) != 2:
        raise RuntimeError(f"{name}: {argument} must {message}")
    return values


# ---- padding ------------------------------------------------------------------------------------


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:  # noqa: A002
    """Pad the last len(pad) // 2 dims: pad = (last_left, last_right, previous_left, ...).

    Negative amounts crop. Only mode='constant' is implemented.
    """
    _check_tensor("pad", "input", input)
    if mode != "constant":
        raise NotImplementedError(f"pad: mode '{mode}' is not implemented; autojit supports "
                                  "mode='constant'")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    shape = tuple(input.shape)
    amounts = [(0, 0)] * input.ndim
    for index in range(len(pad) // 2):
        amounts[input.ndim - 1 - index] = (pad[2 * index], pad[2 * index + 1])
    crop, grown, placed = [], [], []
    for dim, (extent, (left, right)) in enumerate(zip(shape, amounts, strict=True)):
        start, stop = max(-left, 0), extent - max(-right, 0)
        if stop - start + max(left, 0) + max(right, 0) < 0 or stop < start:
            raise RuntimeError(f"The input size {extent}, plus negative padding {left} and "
                               f"{right} resulted in a negative output size, which is invalid. "
                               f"Check dimension {dim} of your input.")
        crop.append((start, stop, 1))
        inner = stop - start
        grown.append(inner + max(left, 0) + max(right, 0))
        placed.append((max(left, 0), max(left, 0) + inner, 1))
    x = slice_dims(input, crop)
    if tuple(grown) == tuple(x.shape):
        return x
    fill = 0 if value is None else value
    if fill == 0:
        return embed_slice(x, tuple(grown), placed)
    # A non-zero fill: constant blocks concatenated on each padded dim in turn.
    for dim, (start, stop, _) in enumerate(placed):
        before, after = start, grown[dim] - stop
        if not before and not after:
            continue
        pieces = []
        for extent in (before, None, after):
            if extent is None:
                pieces.append(x)
            elif extent:
                block_shape = list(x.shape)
                block_shape[dim] = extent
                pieces.append(full(tuple(block_shape), fill, dtype=x.dtype, device=x.device))
        x = cat(pieces, dim)
    return x


def _pad_spatial(x: Tensor, amounts, value=None) -> Tensor:
    """x padded on its trailing spatial dims by (left, right) per dim, in dim order."""
    flat = []
    for left, right in reversed(amounts):
        flat.extend((left, right))
    if not any(flat):
        return x
    return pad(x, flat, value=value)


# ---- window extraction --------------------------------------------------------------------------


def _output_sizes(padded, kernel, stride, dilation) -> tuple:
    return tuple((n - d * (k - 1) - 1) // s + 1
                 for n, k, s, d in zip(padded, kernel, stride, dilation, strict=True))


def _windows(x: Tensor, kernel, stride, dilation, out_sizes) -> list:
    """One (N, C, *out_sizes) slice of x per kernel offset, offsets in row-major order."""
    leading = [(0, n, 1) for n in x.shape[:2]]
    pieces = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        slices = list(leading)
        for o, s, d, out in zip(offset, stride, dilation, out_sizes, strict=True):
            slices.append((o * d, o * d + s * (out - 1) + 1, s))
        pieces.append(slice_dims(x, slices))
    return pieces


# ---- convolution --------------------------------------------------------------------------------


def _conv_padding(padding, kernel, dilation, stride, spatial: int) -> list:
    """(left, right) per spatial dim; 'same' puts an odd extra element on the right."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * spatial
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        amounts = []
        for k, d in zip(kernel, dilation, strict=True):
            total = d * (k - 1)
            amounts.append((total // 2, total - total // 2))
        return amounts
    values = _conv_tuple(padding, spatial, "padding")
    if any(p < 0 for p in values):
        raise RuntimeError("negative padding is not supported")
    return [(p, p) for p in values]


def _check_conv(name, input, weight, bias, groups, spatial) -> bool:  # noqa: A002
    """torch's checks on shapes and dtypes; returns whether the input is batched."""
    _check_tensor(name, "input", input)
    _check_tensor(name, "weight", weight)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                           f"input to {name}, but got input of size: {list(input.shape)}")
    if weight.ndim != spatial + 2:
        raise RuntimeError(f"{name}: expected a {spatial + 2}-D weight (out_channels, "
                           f"in_channels / groups, *kernel_size), but got weight of size "
                           f"{list(weight.shape)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    batched = input.ndim == spatial + 2
    shape = list(input.shape) if batched else [1, *input.shape]
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    if shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{shape} to have {weight.shape[1] * groups} channels, "
                           f"but got {shape[1]} channels instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR_TYPE_NAMES[input.dtype.name]} but "
                           f"found {_SCALAR_TYPE_NAMES[weight.dtype.name]}")
    if bias is not None:
        _check_tensor(name, "bias", bias)
        if bias.ndim != 1 or bias.shape[0] != weight.shape[0]:
            raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                               f"1-dimensional with {weight.shape[0]} elements, but got bias of "
                               f"size {list(bias.shape)} instead")
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({_C_TYPE_NAMES.get(input.dtype.name)}) and bias "
                               f"type ({_C_TYPE_NAMES.get(bias.dtype.name)}) should be the same")
    return batched


def _conv(name, input, weight, bias, stride, padding, dilation, groups, spatial):  # noqa: A002
    batched = _check_conv(name, input, weight, bias, groups, spatial)
    stride = _conv_tuple(stride, spatial, "stride")
    dilation = _conv_tuple(dilation, spatial, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    kernel = tuple(weight.shape[2:])
    amounts = _conv_padding(padding, kernel, dilation, stride, spatial)
    x = input if batched else input.unsqueeze(0)
    padded = tuple(n + left + right for n, (left, right) in zip(x.shape[2:], amounts,
                                                                strict=True))
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True))
    if any(p < e for p, e in zip(padded, effective, strict=True)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, effective))}). Kernel size can't be greater "
                           "than actual input size")
    x = _pad_spatial(x, amounts)
    out_sizes = _output_sizes(padded, kernel, stride, dilation)
    batch, channels = x.shape[0], x.shape[1]
    out_channels = weight.shape[0]
    positions = math.prod(out_sizes)
    taps = math.prod(kernel)
    # (N, C, taps, *out): channel-major, then kernel offset, as the weight's (C, *kernel) flattens.
    columns = stack(_windows(x, kernel, stride, dilation, out_sizes), 2)
    if groups == 1:
        columns = columns.reshape(batch, channels * taps, positions)
        result = matmul(weight.reshape(out_channels, channels * taps), columns)
    else:
        per_group = channels // groups * taps
        columns = columns.reshape(batch, groups, per_group, positions)
        kernels = weight.reshape(groups, out_channels // groups, per_group)
        result = matmul(kernels, columns)
    result = result.reshape(batch, out_channels, *out_sizes)
    if bias is not None:
        result = result + bias.reshape(out_channels, *([1] * spatial))
    return result if batched else result.squeeze(0)


def conv1d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0,  # noqa: A002
           dilation=1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of (N, C_in, L) with weight (C_out, C_in / groups, k)."""
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0,  # noqa: A002
           dilation=1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of (N, C_in, H, W) with weight (C_out, C_in / groups, kH, kW)."""
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


# ---- pooling ------------------------------------------------------------------------------------


def _pool_geometry(name, input, kernel_size, stride, padding, dilation, ceil_mode):  # noqa: A002
    """Checked (kernel, stride, padding, dilation) pairs, output sizes and right-side extras.

    `extra` is the padding beyond `padding` that ceil_mode needs on the right of each dim.
    """
    _check_tensor(name, "input", input)
    if input.ndim not in (3, 4) or input.numel() == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel = _pool_tuple(kernel_size, name, "kernel_size",
                         "either be a single int, or a tuple of two ints")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pool_tuple(stride, name, "stride",
                         "either be omitted, a single int, or a tuple of two ints")
    padding = _pool_tuple(padding, name, "padding", "either be a single int, or a tuple of two "
                          "ints")
    dilation = _pool_tuple(dilation, name, "dilation", "either be a single int, or a tuple of "
                           "two ints")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got "
                           f"kernel_size={list(kernel)}")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for k, p, d in zip(kernel, padding, dilation, strict=True):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    sizes = tuple(input.shape[-2:])
    out_sizes, extra = [], []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation, strict=True):
        span = n + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + p:  # the last window must start inside the input
            out -= 1
        out_sizes.append(out)
        extra.append(max((out - 1) * s + d * (k - 1) + 1 - (n + 2 * p), 0))
    if any(o <= 0 for o in out_sizes):
        channels = input.shape[-3]
        raise RuntimeError(f"Given input size: ({channels}x{sizes[0]}x{sizes[1]}). Calculated "
                           f"output size: ({channels}x{out_sizes[0]}x{out_sizes[1]}). Output "
                           "size is too small")
    return kernel, stride, padding, dilation, tuple(out_sizes), tuple(extra)


def _tiles(x: Tensor, kernel, out_sizes) -> Tensor:
    """(N, C, oH, kH, oW, kW) when the windows tile x: crop the remainder, split each dim."""
    used = [(0, n, 1) for n in x.shape[:2]] + [(0, o * k, 1) for o, k in zip(out_sizes, kernel,
                                                                           strict=True)]
    cropped = slice_dims(x, used)
    return cropped.reshape(x.shape[0], x.shape[1], out_sizes[0], kernel[0], out_sizes[1],
                           kernel[1])


def _is_tiling(kernel, stride, padding, dilation, extra) -> bool:
    return (tuple(kernel) == tuple(stride) and not any(padding) and not any(extra)
            and all(d == 1 for d in dilation))


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    """The maximum over each kernel window of (N, C, H, W) or (C, H, W); padding is -inf."""
    if return_indices:
        raise NotImplementedError("max_pool2d: return_indices=True is not implemented")
    kernel, stride, padding, dilation, out_sizes, extra = _pool_geometry(
        "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    count = kernel[0] * kernel[1]
    if _is_tiling(kernel, stride, padding, dilation, extra):
        # (N, C, oH, kH, oW, kW): a window's offset is kH index * kW + kW index.
        windows, dims = _tiles(x, kernel, out_sizes), (3, 5)
        ranks = arange(count, device=x.device).reshape(kernel[0], 1, kernel[1])
    else:
        fill = -math.inf if x.dtype.is_floating_point else int(np.iinfo(x.dtype.numpy).min)
        amounts = [(p, p + e) for p, e in zip(padding, extra, strict=True)]
        ranks = tensor(_window_ranks(x.shape[2:], kernel, stride, dilation, amounts,
                                     out_sizes), device=x.device)
        x = _pad_spatial(x, amounts, value=fill)
        windows, dims = stack(_windows(x, kernel, stride, dilation, out_sizes), -1), (-1,)
    result = _first_maximum(windows, dims, ranks, count)
    return result if batched else result.squeeze(0)


def _window_ranks(sizes, kernel, stride, dilation, amounts, out_sizes) -> np.ndarray:
    """(oH, oW, kH * kW): each window offset's rank in row-major order, or kH * kW where it
    reads padding: torch's max pooling scans the input only, so a window of -inf gives its
    gradient to its first input element, never to the padding."""
    count = kernel[0] * kernel[1]
    valid = np.pad(np.ones(tuple(sizes), dtype=bool), amounts)
    ranks = []
    for rank, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        index = tuple(slice(o * d, o * d + s * (out - 1) + 1, s)
                      for o, s, d, out in zip(offset, stride, dilation, out_sizes, strict=True))
        ranks.append(np.where(valid[index], rank, count))
    return np.stack(ranks, -1)


def _first_maximum(windows: Tensor, dims: tuple, ranks: Tensor, count: int) -> Tensor:
    """The maximum over `dims`, its gradient going to the window's first maximal element (the
    lowest rank) only, as torch's max pooling does; amax would share it among ties. Three
    fusible reductions: the maximum, the first rank holding it (or a NaN), and the sum that
    keeps that one element."""
    peak = amax(windows, dims, keepdim=True)
    hit = (windows == peak) | ew.isnan(windows)
    first = amin(ew.where(hit, ranks, count), dims, keepdim=True)
    return sum_(ew.where(ranks == first, windows, 0), dims)


def _average_divisor(sizes, kernel, stride, padding, out_sizes, count_include_pad) -> np.ndarray:
    """(oH, oW) counts of the elements each window averages, as torch counts them.

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
    return np.outer(counts[0], counts[1])


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None) -> Tensor:
    """The mean over each kernel window of (N, C, H, W) or (C, H, W); padding counts as 0."""
    kernel, stride, padding, dilation, out_sizes, extra = _pool_geometry(
        "avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    if _is_tiling(kernel, stride, padding, dilation, extra):
        total = sum_(_tiles(x, kernel, out_sizes), (3, 5))
    else:
        amounts = [(p, p + e) for p, e in zip(padding, extra, strict=True)]
        x = _pad_spatial(x, amounts)
        total = sum_(stack(_windows(x, kernel, stride, dilation, out_sizes), -1), -1)
    if divisor_override is not None:
        result = total / divisor_override
    else:
        divisor = _average_divisor(tuple(input.shape[-2:]), kernel, stride, padding, out_sizes,
                                   count_include_pad)
        if (divisor == divisor.flat[0]).all():
            result = total / int(divisor.flat[0])
        else:
            result = total / tensor(divisor.astype(total.dtype.numpy), device=total.device)
    if not result.dtype.is_floating_point:
        result = result.to(input.dtype)
    return result if batched else result.squeeze(0)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a fixed (oH, oW): cell i spans [floor(i n / o), ceil((i + 1) n / o))."""
    _check_tensor("adaptive_avg_pool2d", "input", input)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    sizes = tuple(input.shape[-2:])
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out_sizes = tuple(n if o is None else int(o) for n, o in zip(sizes, output_size,
                                                                strict=True))
    if any(o <= 0 for o in out_sizes):
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater "
                           f"than or equal to 0 but received {list(out_sizes)}")
    if all(n % o == 0 for n, o in zip(sizes, out_sizes, strict=True)):
        kernel = tuple(n // o for n, o in zip(sizes, out_sizes, strict=True))
        return avg_pool2d(input, kernel)
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    spans = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]
             for n, o in zip(sizes, out_sizes, strict=True)]
    leading = [(0, n, 1) for n in x.shape[:2]]
    rows = []
    for top, bottom in spans[0]:
        cells = []
        for left, right in spans[1]:
            window = slice_dims(x, [*leading, (top, bottom, 1), (left, right, 1)])
            cells.append(sum_(window, (2, 3)) / ((bottom - top) * (right - left)))
        rows.append(stack(cells, -1))
    result = stack(rows, -2)
    return result if batched else result.squeeze(0)
