"""Adaptive and power-average pooling layers over 1, 2 and 3 spatial dims, over
functional/pooling.py: AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d and LPPool1d/2d/3d.

Like the other pooling layers (pooling/__init__.py) they hold their settings only, as given, with
torch's reprs; forward calls the composite.
"""

from __future__ import annotations

from ..functional.pooling import (
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
)
from ..functional.pooling_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
)
from ..module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d"]


class _AdaptiveAvgPoolNd(Module):
    """What the adaptive average pooling layers share."""

    _function = None

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) or (C, L) inputs to a fixed output_size."""

    _function = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output_size (an int, or a pair where None keeps a size).

        >>> import autojit
        >>> pool = autojit.nn.AdaptiveAvgPool2d((1, 1))
        >>> pool
        AdaptiveAvgPool2d(output_size=(1, 1))
        >>> pool(autojit.ones(2, 3, 5, 7)).shape
        autojit.Size([2, 3, 1, 1])
    """

    _function = staticmethod(adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) inputs to a fixed output_size."""

    _function = staticmethod(adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    """What the adaptive max pooling layers share."""

    _function = None

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) inputs to a fixed output_size.

        >>> import autojit
        >>> pool = autojit.nn.AdaptiveMaxPool1d(2, return_indices=True)
        >>> values, indices = pool(autojit.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]]))
        >>> values.tolist(), indices.tolist()
        ([[[3.0, 5.0]]], [[[1, 3]]])
    """

    _function = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output_size (an int, or a pair where None keeps a size)."""

    _function = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) inputs to a fixed output_size."""

    _function = staticmethod(adaptive_max_pool3d)


class _LPPoolNd(Module):
    """What the power-average pooling layers share."""

    _function = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, float(self.norm_type), self.kernel_size, self.stride,
                                    self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """(sum of x^p over each window)^(1/p) of (N, C, L) or (C, L) inputs.

        >>> import autojit
        >>> autojit.nn.LPPool1d(2, 2)(autojit.tensor([[[3.0, 4.0]]])).tolist()
        [[[5.0]]]
    """

    _function = staticmethod(lp_pool1d)


class LPPool2d(_LPPoolNd):
    """(sum of x^p over each window)^(1/p) of (N, C, H, W) or (C, H, W) inputs."""

    _function = staticmethod(lp_pool2d)


class LPPool3d(_LPPoolNd):
    """(sum of x^p over each window)^(1/p) of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _function = staticmethod(lp_pool3d)
