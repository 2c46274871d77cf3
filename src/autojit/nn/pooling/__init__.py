"""Pooling layers over 1, 2 and 3 spatial dims: max, average and max unpooling, over
functional/pooling.py (the adaptive and power-average layers are in adaptive.py, the fractional
max pooling layers in fractional.py).

The layers hold their settings and nothing else (no parameters or buffers), as torch's do,
with torch's attribute forms (AvgPool1d and the unpooling layers keep tuples, the others what
they were given) and reprs; forward calls the composite.
"""

from __future__ import annotations

from ..functional.pooling import (
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ..module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


def _tuple(value, count: int) -> tuple:
    """torch's _single/_pair/_triple: an iterable as it is, a number repeated."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * count


class _MaxPoolNd(Module):
    """What the max pooling layers share: settings, forward and repr."""

    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.dilation, ceil_mode=self.ceil_mode,
                                    return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The maximum over each kernel_size window of (N, C, L) or (C, L) inputs.

        >>> import autojit
        >>> autojit.nn.MaxPool1d(2)(autojit.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
        [[[3.0, 2.0]]]
    """

    _function = staticmethod(max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The maximum over each kernel_size window; stride defaults to kernel_size.

        >>> import autojit
        >>> pool = autojit.nn.MaxPool2d(2)
        >>> pool
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> pool(autojit.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    _function = staticmethod(max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """The maximum over each kernel_size window of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _function = staticmethod(max_pool3d)


class _AvgPoolNd(Module):
    """What AvgPool2d and AvgPool3d share (they keep their arguments as given)."""

    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad,
                                    self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean over each kernel_size window of (N, C, L) or (C, L) inputs.

        >>> import autojit
        >>> autojit.nn.AvgPool1d(2)(autojit.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
        [[[2.0, 1.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        Module.__init__(self)  # its own arguments: no divisor_override, as torch's
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):  # noqa: A002
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """The mean over each kernel_size window; stride defaults to kernel_size.

        >>> import autojit
        >>> pool = autojit.nn.AvgPool2d(2)
        >>> pool
        AvgPool2d(kernel_size=2, stride=2, padding=0)
        >>> pool(autojit.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

    _function = staticmethod(avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """The mean over each kernel_size window of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _function = staticmethod(avg_pool3d)


class _MaxUnpoolNd(Module):
    """What the max unpooling layers share: settings (as tuples), forward and repr."""

    _function = None
    _spatial = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._spatial)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._spatial)
        self.padding = _tuple(padding, self._spatial)

    def forward(self, input, indices, output_size=None):  # noqa: A002
        return type(self)._function(input, indices, self.kernel_size, self.stride, self.padding,
                                    output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: values at their indices, zeros elsewhere.

        >>> import autojit
        >>> pool = autojit.nn.MaxPool1d(2, return_indices=True)
        >>> values, indices = pool(autojit.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
        >>> autojit.nn.MaxUnpool1d(2)(values, indices).tolist()
        [[[0.0, 3.0, 2.0, 0.0]]]
    """

    _function = staticmethod(max_unpool1d)
    _spatial = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: values at their indices, zeros elsewhere."""

    _function = staticmethod(max_unpool2d)
    _spatial = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: values at their indices, zeros elsewhere."""

    _function = staticmethod(max_unpool3d)
    _spatial = 3
