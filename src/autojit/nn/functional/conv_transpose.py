"""Transposed convolution (1-, 2- and 3-d), unfold (im2col) and fold (col2im) for
autojit.nn.functional, written as composites.

A transposed convolution is the adjoint of a convolution with respect to its input, and is
computed as one: a matmul of the transposed weight with the input gives, for each output
channel and kernel offset, the contribution of every input position (the columns); col2im
then adds each offset's columns into the output at that offset, strided by `stride` and
spaced by `dilation` (an `embed_slice`, the adjoint of the slice convolution reads with, per
offset: on a coarse grid per stride phase, the phases interleaved by a reshape; see
`_col2im`), and crops `padding` from both sides. So the products are exact
(no zeros inserted between input elements), and the gradient with respect to the input is
the convolution itself. `fold` is col2im alone; `unfold` is the im2col matrix convolution
builds (conv.py's window extraction). Everything is autojit ops, so it
differentiates twice and traces.
"""

from __future__ import annotations

import itertools
import math

from ...ops.autocast import LOWER, autocast_op
from ...ops.layout import embed_slice, slice_dims, stack
from ...ops.linalg import matmul
from ...ops.registry import share_node
from ...tensor.creation import zeros
from ...tensor.dtypes import bfloat16, float16
from ...tensor.tensor import Tensor
from .conv import (
    _check_conv,
    _check_tensor,
    _conv_tuple,
    _pad_spatial,
    _windows,
)

_AXIS_NAMES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _col2im(columns: Tensor, blocks, full, kernel, stride, dilation) -> Tensor:
    """Sum each kernel offset's columns (N, C, taps, *blocks) into (N, C, *full) at that
    offset, strided by `stride`: the adjoint of reading the windows with strided slices.

    Output position b * s + o * d (block b, offset o) is (b + q) * s + r with o * d = q s + r,
    so the offsets of one phase r land on one grid of every s-th position, shifted by q. Each
    phase's offsets are summed on that coarse grid (1 / prod(stride) of the output), and the
    phase grids are interleaved into the output by one stack and reshape: far less work than
    adding every offset into a full-size output when the stride is above 1.
    """
    batch, channels = columns.shape[0], columns.shape[1]
    leading = [(0, batch, 1), (0, channels, 1)]
    coarse = tuple(-(-f // s) for f, s in zip(full, stride, strict=True))
    grids: dict = {}
    for tap, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        piece = slice_dims(columns, [*leading, (tap, tap + 1, 1)] + [(0, b, 1) for b in blocks])
        piece = piece.reshape(batch, channels, *blocks)
        shifts = [divmod(o * d, s) for o, d, s in zip(offset, dilation, stride, strict=True)]
        phase = tuple(r for _, r in shifts)
        placed = leading + [(q, q + b, 1) for (q, _), b in zip(shifts, blocks, strict=True)]
        if tuple(piece.shape) != (batch, channels, *coarse):
            piece = embed_slice(piece, (batch, channels, *coarse), placed)
        grids[phase] = piece if phase not in grids else grids[phase] + piece
    spatial = len(kernel)
    if all(s == 1 for s in stride):
        return grids[(0,) * spatial]
    empty = None
    phases = []
    for phase in itertools.product(*(range(s) for s in stride)):
        if phase not in grids and empty is None:
            empty = zeros((batch, channels, *coarse), dtype=columns.dtype, device=columns.device)
        phases.append(grids.get(phase, empty))
    # (N, C, s1 ... sD, c1 ... cD) -> (N, C, c1, s1, ..., cD, sD) -> (N, C, c1 s1, ..., cD sD).
    stacked = stack(phases, 2).reshape(batch, channels, *stride, *coarse)
    order = [0, 1] + [i for j in range(spatial) for i in (2 + spatial + j, 2 + j)]
    result = stacked.permute(*order).reshape(batch, channels,
                                             *(c * s for c, s in zip(coarse, stride,
                                                                     strict=True)))
    return slice_dims(result, [*leading] + [(0, f, 1) for f in full])


# ---- transposed convolution ---------------------------------------------------------------------


def _transpose_arguments(name, stride, padding, output_padding, dilation, spatial):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride = _conv_tuple(stride, spatial, "stride")
    padding = _conv_tuple(padding, spatial, "padding")
    output_padding = _conv_tuple(output_padding, spatial, "output_padding")
    dilation = _conv_tuple(dilation, spatial, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(p >= s and p >= d for p, s, d in zip(output_padding, stride, dilation, strict=True)):
        axes = _AXIS_NAMES[spatial]
        shown = " ".join(f"{what}_{axis}: {value}"
                         for what, values in (("output_padding", output_padding),
                                              ("stride", stride), ("dilation", dilation))
                         for axis, value in zip(axes, values, strict=True))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got {shown}")
    return stride, padding, output_padding, dilation


def _conv_transpose(name, input, weight, bias, stride, padding, output_padding,  # noqa: A002
                    groups, dilation, spatial):
    batched = _check_conv(name, input, weight, bias, groups, spatial, transposed=True)
    stride, padding, output_padding, dilation = _transpose_arguments(
        name, stride, padding, output_padding, dilation, spatial)
    x = input if batched else input.unsqueeze(0)
    kernel = tuple(weight.shape[2:])
    blocks = tuple(x.shape[2:])
    full = tuple((b - 1) * s + d * (k - 1) + 1 + op for b, s, d, k, op in
                 zip(blocks, stride, dilation, kernel, output_padding, strict=True))
    out_sizes = tuple(f - 2 * p for f, p in zip(full, padding, strict=True))
    if any(o <= 0 for o in out_sizes):
        shown = " x ".join(map(str, out_sizes))
        raise RuntimeError(f"{name}: the calculated output size ({shown}) is too small: "
                           "padding removes more than the output has")
    lower = x.dtype in (float16, bfloat16)
    if lower:
        # Sums of overlapping taps rounded in a 16-bit type would each round again: compute in
        # float32 and round once, as torch's lower-precision kernels do.
        x, weight = x.float(), weight.float()
        bias = None if bias is None else bias.float()
        result_dtype = input.dtype
    batch, in_channels = x.shape[0], x.shape[1]
    out_channels = weight.shape[1] * groups
    taps, positions = math.prod(kernel), math.prod(blocks)
    per_group = in_channels // groups
    # The columns: (N, groups, C_out / groups * taps, positions) = weight^T @ input, per group.
    kernels = weight.reshape(groups, per_group, -1).transpose(1, 2)
    columns = matmul(kernels, x.reshape(batch, groups, per_group, positions))
    columns = columns.reshape(batch, out_channels, taps, *blocks)
    result = _col2im(columns, blocks, full, kernel, stride, dilation)
    result = slice_dims(result, [(0, batch, 1), (0, out_channels, 1)]
                        + [(p, p + o, 1) for p, o in zip(padding, out_sizes, strict=True)])
    if bias is not None:
        result = result + bias.reshape(out_channels, *([1] * spatial))
    if lower:
        result = result.to(result_dtype)
    return result if batched else result.squeeze(0)


@autocast_op(cpu=LOWER, cuda=LOWER)
def conv_transpose1d(input: Tensor, weight: Tensor, bias=None, stride=1,  # noqa: A002
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """1-D transposed convolution of (N, C_in, L) with weight (C_in, C_out / groups, k)."""
    return _conv_transpose("conv_transpose1d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 1)


@autocast_op(cpu=LOWER, cuda=LOWER)
def conv_transpose2d(input: Tensor, weight: Tensor, bias=None, stride=1,  # noqa: A002
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """2-D transposed convolution of (N, C_in, H, W) with weight (C_in, C_out / groups, kH,
    kW)."""
    return _conv_transpose("conv_transpose2d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 2)


@autocast_op(cpu=LOWER, cuda=LOWER)
def conv_transpose3d(input: Tensor, weight: Tensor, bias=None, stride=1,  # noqa: A002
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """3-D transposed convolution of (N, C_in, D, H, W) with weight (C_in, C_out / groups,
    kD, kH, kW)."""
    return _conv_transpose("conv_transpose3d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 3)


# ---- unfold and fold ----------------------------------------------------------------------------


def _pair_argument(value, argument: str) -> tuple:
    if isinstance(value, int):
        return (value, value)
    values = tuple(int(v) for v in value)
    if len(values) != 2:
        raise RuntimeError(f"It is expected {argument} equals to 2, but got size {len(values)}")
    return values


def _block_arguments(kernel_size, dilation, padding, stride):
    kernel = _pair_argument(kernel_size, "kernel_size")
    dilation = _pair_argument(dilation, "dilation")
    padding = _pair_argument(padding, "padding")
    stride = _pair_argument(stride, "stride")
    for what, values, shown, bad in (
            ("kernel size should be greater than zero", kernel, "kernel", lambda v: v <= 0),
            ("dilation should be greater than zero", dilation, "dilation", lambda v: v <= 0),
            ("padding should be non-negative", padding, "pad", lambda v: v < 0),
            ("stride should be greater than zero", stride, "stride", lambda v: v <= 0)):
        if any(bad(v) for v in values):
            raise RuntimeError(f"{what}, but got {shown}_height: {values[0]} {shown}_width: "
                               f"{values[1]}")
    return kernel, dilation, padding, stride


def _block_counts(sizes, kernel, dilation, padding, stride) -> tuple:
    return tuple((n + 2 * p - (d * (k - 1) + 1)) // s + 1 for n, k, d, p, s in
                 zip(sizes, kernel, dilation, padding, stride, strict=True))


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:  # noqa: A002
    """The sliding blocks of (N, C, H, W) as columns: (N, C * kH * kW, L), L blocks."""
    _check_tensor("unfold", "input", input)
    kernel, dilation, padding, stride = _block_arguments(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[input.ndim - 3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    sizes = tuple(x.shape[2:])
    blocks = _block_counts(sizes, kernel, dilation, padding, stride)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {sizes}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the "
                           f"array of sliding blocks as {blocks}, but its components must be at "
                           "least one.")
    x = _pad_spatial(x, [(p, p) for p in padding])
    columns = stack(_windows(x, kernel, stride, dilation, blocks), 2)
    result = columns.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(blocks))
    result = result if batched else result.squeeze(0)
    return _torch_node(result, input, "Im2ColBackward0", lambda: {  # torch's im2col node
        "kernel_size": tuple(kernel), "dilation": tuple(dilation), "padding": tuple(padding),
        "stride": tuple(stride), "self_sym_argsize_minus_2": int(sizes[0]),
        "self_sym_argsize_minus_1": int(sizes[1])})


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0,  # noqa: A002
         stride=1) -> Tensor:
    """Sum columns (N, C * kH * kW, L) back into (N, C, *output_size): unfold's adjoint."""
    _check_tensor("fold", "input", input)
    output_size = _pair_argument(output_size, "output_size")
    kernel, dilation, padding, stride = _block_arguments(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[input.ndim - 2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    batched = input.ndim == 3
    x = input if batched else input.unsqueeze(0)
    taps = math.prod(kernel)
    if x.shape[1] % taps:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={kernel}.")
    blocks = _block_counts(output_size, kernel, dilation, padding, stride)
    if any(b < 1 for b in blocks) or x.shape[2] != math.prod(blocks):
        raise RuntimeError(f"Given output_size={output_size}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, expected "
                           f"size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {math.prod(blocks)}, "
                           f"but got input.size(2)={x.shape[2]}.")
    columns = x.reshape(x.shape[0], x.shape[1] // taps, taps, *blocks)
    full = tuple(n + 2 * p for n, p in zip(output_size, padding, strict=True))
    result = _col2im(columns, blocks, full, kernel, stride, dilation)
    result = slice_dims(result, [(0, result.shape[0], 1), (0, result.shape[1], 1)]
                        + [(p, p + n, 1) for p, n in zip(padding, output_size, strict=True)])
    result = result if batched else result.squeeze(0)
    return _torch_node(result, input, "Col2ImBackward0", lambda: {  # torch's col2im node
        "kernel_size": tuple(kernel), "dilation": tuple(dilation), "padding": tuple(padding),
        "stride": tuple(stride)})


def _torch_node(result: Tensor, input: Tensor, name: str, saved) -> Tensor:  # noqa: A002
    """result with the one node torch's op gives it, showing what `saved()` gives
    (registry.share_node)."""
    if result.grad_fn is None:
        return result
    return share_node((result,), (input,), name, saved)[0]
