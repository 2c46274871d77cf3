"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d: pooling layers over functional_conv.py.

The layers hold their settings and nothing else (no parameters or buffers); forward calls the
composite, which reduces over each window with amax or a sum.
"""

from __future__ import annotations

from .functional_conv import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .module import Module

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


class MaxPool2d(Module):
    """The maximum over each kernel_size window; stride defaults to kernel_size.

        >>> import autojit
        >>> pool = autojit.nn.MaxPool2d(2)
        >>> pool
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> pool(autojit.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

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
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """The mean over each kernel_size window; stride defaults to kernel_size.

        >>> import autojit
        >>> pool = autojit.nn.AvgPool2d(2)
        >>> pool
        AvgPool2d(kernel_size=2, stride=2, padding=0)
        >>> pool(autojit.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

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
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output_size (an int, or a pair where None keeps a size).

        >>> import autojit
        >>> pool = autojit.nn.AdaptiveAvgPool2d((1, 1))
        >>> pool
        AdaptiveAvgPool2d(output_size=(1, 1))
        >>> pool(autojit.ones(2, 3, 5, 7)).shape
        autojit.Size([2, 3, 1, 1])
    """

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
