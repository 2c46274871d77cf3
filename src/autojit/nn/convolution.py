"""Conv1d, Conv2d and Conv3d: convolution layers over the composites of functional/conv.py.

A layer holds weight (out_channels, in_channels / groups, *kernel_size) and an optional bias,
drawn like Linear's: kaiming_uniform_ with a = sqrt(5), so U(-1/sqrt(fan_in), 1/sqrt(fan_in))
where fan_in = weight.shape[1] * prod(kernel_size), and the bias from the same bound. A
padding_mode other than 'zeros' pads the input with functional/padding.py's `pad` in that
mode first, then convolves without padding, as torch does. The transposed layers
(convolution_transpose.py) share _ConvNd.
"""

from __future__ import annotations

import math

from ..tensor.creation import empty
from . import init
from .functional.conv import conv1d, conv2d, conv3d
from .functional.padding import pad
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _spatial_tuple(value, count: int) -> tuple:
    if isinstance(value, int):
        return (value,) * count
    value = tuple(int(v) for v in value)
    return value * count if len(value) == 1 else value


def _reversed_padding(padding, kernel_size, dilation) -> list:
    """F.pad's amounts (last dim first) for a padding_mode other than 'zeros'; 'same' puts an
    odd extra element on the right."""
    if isinstance(padding, str):
        amounts = [(0, 0)] * len(kernel_size)
        if padding == "same":
            amounts = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                       for k, d in zip(kernel_size, dilation, strict=True)]
    else:
        amounts = [(p, p) for p in padding]
    return [amount for pair in reversed(amounts) for amount in pair]


class _ConvNd(Module):
    """What the convolution layers share: argument checks, parameters, initialization, the
    padding modes and repr. Transposed layers set _transposed: their weight is (in_channels,
    out_channels / groups, *kernel_size)."""

    _spatial = 0  # the number of spatial dims, set by each subclass with its function
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        spatial = self._spatial
        stride = _spatial_tuple(stride, spatial)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _spatial_tuple(padding, spatial)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _spatial_tuple(kernel_size, spatial)
        self.stride = stride
        self.padding = padding
        self.dilation = _spatial_tuple(dilation, spatial)
        self.transposed = self._transposed
        self.output_padding = (0,) * spatial
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, self.kernel_size,
                                                                  self.dilation)
        channels = (in_channels, out_channels // groups) if self._transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*channels, *self.kernel_size, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from the default initialization."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        if self.padding_mode != "zeros":
            padded = pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._function(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                                  self.groups)
        return self._function(input, self.weight, self.bias, self.stride, self.padding,
                              self.dilation, self.groups)

    def extra_repr(self) -> str:
        spatial = self._spatial
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * spatial:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * spatial:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * spatial:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-D convolution (cross-correlation) of (N, C_in, L) or (C_in, L) inputs.

        >>> import autojit
        >>> layer = autojit.nn.Conv1d(3, 8, 5, stride=2)
        >>> layer
        Conv1d(3, 8, kernel_size=(5,), stride=(2,))
        >>> layer(autojit.ones(4, 3, 21)).shape
        autojit.Size([4, 8, 9])
    """

    _spatial = 1
    _function = staticmethod(conv1d)


class Conv2d(_ConvNd):
    """2-D convolution (cross-correlation) of (N, C_in, H, W) or (C_in, H, W) inputs.

        >>> import autojit
        >>> layer = autojit.nn.Conv2d(1, 4, 3, padding=1)
        >>> layer
        Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        >>> layer(autojit.ones(2, 1, 8, 8)).shape
        autojit.Size([2, 4, 8, 8])
    """

    _spatial = 2
    _function = staticmethod(conv2d)


class Conv3d(_ConvNd):
    """3-D convolution (cross-correlation) of (N, C_in, D, H, W) or (C_in, D, H, W) inputs.

        >>> import autojit
        >>> layer = autojit.nn.Conv3d(2, 4, 3, padding=1, padding_mode="circular")
        >>> layer.padding, layer.padding_mode
        ((1, 1, 1), 'circular')
        >>> layer(autojit.ones(1, 2, 4, 5, 6)).shape
        autojit.Size([1, 4, 4, 5, 6])
    """

    _spatial = 3
    _function = staticmethod(conv3d)
