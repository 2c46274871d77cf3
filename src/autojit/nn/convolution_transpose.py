"""ConvTranspose1d, ConvTranspose2d and ConvTranspose3d: transposed convolution layers over
functional/conv_transpose.py.

They share convolution.py's _ConvNd (checks, initialization, repr) with the weight laid out
(in_channels, out_channels / groups, *kernel_size), as torch's is, so that kaiming_uniform_'s
fan_in, and the bias bound, come from out_channels / groups * prod(kernel_size). forward takes
torch's `output_size`, which picks the output_padding that gives that size.
"""

from __future__ import annotations

from .convolution import _ConvNd, _spatial_tuple
from .functional.conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvTransposeNd(_ConvNd):
    """What the transposed convolution layers share: output_padding and output_size."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)
        self.output_padding = _spatial_tuple(output_padding, self._spatial)

    def _output_padding(self, input, output_size) -> tuple:  # noqa: A002
        """The output_padding that makes the output `output_size` (or the layer's own)."""
        if output_size is None:
            return self.output_padding
        spatial = self._spatial
        leading = 2 if input.ndim == spatial + 2 else 1
        output_size = tuple(int(s) for s in output_size)
        if len(output_size) == leading + spatial:
            output_size = output_size[leading:]
        if len(output_size) != spatial:
            raise ValueError(f"ConvTranspose{spatial}D: for {input.ndim}D input, output_size "
                             f"must have {spatial} or {leading + spatial} elements (got "
                             f"{len(output_size)})")
        smallest = [(input.shape[d + leading] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(spatial)]
        largest = [low + s - 1 for low, s in zip(smallest, self.stride, strict=True)]
        for size, low, high in zip(output_size, smallest, largest, strict=True):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to {largest} (for an input of "
                                 f"{input.shape[leading:]})")
        return tuple(size - low for size, low in zip(output_size, smallest, strict=True))

    def forward(self, input, output_size=None):  # noqa: A002
        output_padding = self._output_padding(input, output_size)
        return self._function(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution of (N, C_in, L) or (C_in, L) inputs.

        >>> import autojit
        >>> layer = autojit.nn.ConvTranspose1d(3, 2, 4, stride=2, padding=1)
        >>> layer
        ConvTranspose1d(3, 2, kernel_size=(4,), stride=(2,), padding=(1,))
        >>> layer(autojit.ones(5, 3, 8)).shape
        autojit.Size([5, 2, 16])
    """

    _spatial = 1
    _function = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution of (N, C_in, H, W) or (C_in, H, W) inputs.

        >>> import autojit
        >>> layer = autojit.nn.ConvTranspose2d(4, 2, 3, stride=2)
        >>> layer(autojit.ones(1, 4, 5, 5), output_size=(12, 12)).shape
        autojit.Size([1, 2, 12, 12])
    """

    _spatial = 2
    _function = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution of (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""

    _spatial = 3
    _function = staticmethod(conv_transpose3d)
