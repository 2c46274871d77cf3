"""FractionalMaxPool2d and FractionalMaxPool3d: max pooling to a target size with randomly
stepped windows, over functional/pooling_fractional.py.

As in torch, the layer holds its settings (kernel_size as a tuple, output_size or output_ratio)
and a `_random_samples` buffer, None unless given: with it, every call pools with the same
windows (and the buffer is in state_dict); without it, each call draws new samples from
autojit's generator.
"""

from __future__ import annotations

from ..functional.pooling_fractional import fractional_max_pool2d, fractional_max_pool3d
from ..module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _tuple(value, count: int) -> tuple:
    """torch's _pair/_triple: an iterable as it is, a number repeated."""
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * count


class _FractionalMaxPoolNd(Module):
    _spatial = 0
    _function = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        spatial = self._spatial
        self.kernel_size = _tuple(kernel_size, spatial)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, spatial) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, spatial) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             f"or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(
                0 < ratio < 1 for ratio in self.output_ratio[:spatial]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, self.kernel_size, self.output_size,
                                    self.output_ratio, self.return_indices,
                                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) planes over kernel_size windows whose starts
    step by a random fraction, to output_size or output_ratio of the input's size.

        >>> import autojit
        >>> pool = autojit.nn.FractionalMaxPool2d(2, output_size=(3, 2))
        >>> pool(autojit.randn(1, 4, 7, 5)).shape
        autojit.Size([1, 4, 3, 2])
    """

    _spatial = 2
    _function = staticmethod(fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max pooling of (N, C, T, H, W) or (C, T, H, W) volumes over kernel_size windows whose
    starts step by a random fraction, to output_size or output_ratio of the input's size."""

    _spatial = 3
    _function = staticmethod(fractional_max_pool3d)
