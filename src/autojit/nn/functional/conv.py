"""Convolution (1-, 2- and 3-d) for autojit.nn.functional.

A convolution checks its arguments as torch does and binds the `convolution` primitive
(ops/nn/convolution.py), whose backward products are primitives too, which compiled CPU code
runs as native kernels (docs/notes/convolution.md); the bias is added after it. On a device
whose runtime has no convolution routine (CUDA) it is the composite below instead.

The composite is built from layout and matmul primitives, so autograd, double backward and
tracing for compile come from their rules. The shared step is window extraction
(ops/nn/windows.py): for each offset inside the kernel, one strided slice of the (padded) input
reads the element at that offset for every output position at once. Stacking those slices
gives the im2col matrix, and convolution is then one matmul with the reshaped weight. Pooling
(pooling.py, ops/nn/pooling.py) and unfold (conv_transpose.py) reduce or
reshape the same windows.
"""

from __future__ import annotations

import math

from ...ops.autocast import LOWER, autocast_op
from ...ops.layout import stack
from ...ops.linalg import matmul
from ...ops.nn.convolution import convolution
from ...ops.nn.windows import pad_spatial as _pad_spatial
from ...ops.nn.windows import windows as _windows
from ...tensor import dtypes
from ...tensor.tensor import Tensor

# torch names dtypes by their C++ scalar type in conv errors ("expected scalar type Double").
_SCALAR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES
_C_TYPE_NAMES = dtypes.C_TYPE_NAMES


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


# ---- window extraction --------------------------------------------------------------------------


def _output_sizes(padded, kernel, stride, dilation) -> tuple:
    return tuple((n - d * (k - 1) - 1) // s + 1
                 for n, k, s, d in zip(padded, kernel, stride, dilation, strict=True))


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


def _check_conv(name, input, weight, bias, groups, spatial,  # noqa: A002
                transposed: bool = False, arguments=None) -> bool:
    """torch's checks on shapes and dtypes of a convolution (or, transposed, of a transposed
    one, whose weight is (in_channels, out_channels / groups, *kernel_size)); returns whether
    the input is batched. `arguments()` checks the geometry's numbers where torch does, after
    the groups and before the shapes."""
    _check_tensor(name, "input", input)
    _check_tensor(name, "weight", weight)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                           f"input to {name}, but got input of size: {list(input.shape)}")
    layout = ("in_channels, out_channels / groups" if transposed
              else "out_channels, in_channels / groups")
    if weight.ndim != spatial + 2:
        if transposed:
            raise RuntimeError(f"{name}: expected a {spatial + 2}-D weight ({layout}, "
                               f"*kernel_size), but got weight of size {list(weight.shape)}")
        if weight.ndim < 3:
            raise RuntimeError("weight should have at least three dimensions")
        # torch takes the weight's rank for the convolution's and finds the input's wrong
        shape = list(input.shape) if input.ndim == spatial + 2 else [1, *input.shape]
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {len(shape)}-"
                           f"dimensional input of size {shape} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if arguments is not None:
        arguments()
    batched = input.ndim == spatial + 2
    shape = list(input.shape) if batched else [1, *input.shape]
    if not transposed and weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    if transposed and shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{shape} to have {weight.shape[0]} channels, but got "
                           f"{shape[1]} channels instead")
    if not transposed and shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{shape} to have {weight.shape[1] * groups} channels, "
                           f"but got {shape[1]} channels instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR_TYPE_NAMES[input.dtype.name]} but "
                           f"found {_SCALAR_TYPE_NAMES[weight.dtype.name]}")
    if bias is not None:
        _check_tensor(name, "bias", bias)
        out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
        if bias.ndim != 1 or bias.shape[0] != out_channels:
            given = "transposed=1, weight" if transposed else "weight"
            raise RuntimeError(f"Given {given} of size {list(weight.shape)}, expected bias to "
                               f"be 1-dimensional with {out_channels} elements, but got bias of "
                               f"size {list(bias.shape)} instead")
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({_C_TYPE_NAMES.get(input.dtype.name)}) and bias "
                               f"type ({_C_TYPE_NAMES.get(bias.dtype.name)}) should be the same")
    return batched


def _conv(name, input, weight, bias, stride, padding, dilation, groups, spatial):  # noqa: A002
    given = stride, dilation

    def arguments():  # torch's order: negative padding, stride, negative dilation
        nonlocal stride, dilation
        stride = _conv_tuple(given[0], spatial, "stride")
        dilation = _conv_tuple(given[1], spatial, "dilation")
        if not isinstance(padding, str) and any(
                p < 0 for p in _conv_tuple(padding, spatial, "padding")):
            raise RuntimeError("negative padding is not supported")
        if any(s <= 0 for s in stride):
            raise RuntimeError("non-positive stride is not supported")
        if any(d < 0 for d in dilation):
            raise RuntimeError("dilation should be greater than zero")

    batched = _check_conv(name, input, weight, bias, groups, spatial, arguments=arguments)
    if any(d == 0 for d in dilation):  # torch's kernel refuses it, after the shape checks
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
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
    if x.device.type == "cpu":  # the bias too: one node, torch's ConvolutionBackward0
        result = convolution(x, weight, stride, amounts, dilation, groups, bias)
    else:
        result = _windowed_conv(x, weight, amounts, stride, dilation, groups)
        if bias is not None:
            result = result + bias.reshape(weight.shape[0], *([1] * spatial))
    return result if batched else result.squeeze(0)


def _windowed_conv(x, weight, amounts, stride, dilation, groups):
    """The convolution as window slices and one matmul, for devices whose runtime has no
    convolution routine (CUDA): autograd, tracing and the kernels come from those ops."""
    kernel = tuple(weight.shape[2:])
    padded = tuple(n + left + right for n, (left, right) in zip(x.shape[2:], amounts,
                                                                strict=True))
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
    return result.reshape(batch, out_channels, *out_sizes)


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def conv1d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0,  # noqa: A002
           dilation=1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of (N, C_in, L) with weight (C_out, C_in / groups, k)."""
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def conv2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0,  # noqa: A002
           dilation=1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of (N, C_in, H, W) with weight (C_out, C_in / groups, kH, kW)."""
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def conv3d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0,  # noqa: A002
           dilation=1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of (N, C_in, D, H, W) with weight (C_out, C_in / groups, *k)."""
    return _conv("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """A 1-D convolution of a (time, batch, in_channels) sequence with a (kernel width,
    in_channels, out_channels) weight and an (out_channels,) bias, `pad` steps of zeros at
    each end: (time', batch, out_channels), torch's conv_tbc, as conv1d of the permuted
    operands (row-major, as torch's result)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous()
