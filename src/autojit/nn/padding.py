"""Padding layers over 1, 2 and 3 spatial dims (ZeroPad, ConstantPad, ReflectionPad,
ReplicationPad, CircularPad), each a module holding its padding and calling `pad` of
functional/padding.py in its mode.

As in torch, an int padding is repeated for both sides of every padded dim and a tuple is
kept as given (last dim's left, right, then the dim before it...); negative amounts crop. The
layers hold no parameters or buffers; their reprs are torch's.
"""

from __future__ import annotations

from .functional.padding import pad
from .module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _amounts(padding, spatial: int) -> tuple:
    """torch's _pair/_quadruple/_ntuple(6): an int for every side, a sequence as it is."""
    if isinstance(padding, (list, tuple)):
        return tuple(padding)
    return (padding,) * (2 * spatial)


class _PadNd(Module):
    """What the padding layers share: the padding amounts, the mode and the repr."""

    _spatial = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._spatial)

    def forward(self, input):  # noqa: A002
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant value."""

    _spatial = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant value."""

    _spatial = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant value."""

    _spatial = 3


class _ZeroPadding:
    """The zero padding layers: constant padding layers of value 0 (as in torch, ZeroPad2d is a
    ConstantPad2d), printed with their amounts only."""

    def __init__(self, padding) -> None:
        _ConstantPadNd.__init__(self, padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadding, ConstantPad1d):
    """Pad the last dim with zeros.

        >>> import autojit
        >>> autojit.nn.ZeroPad1d((1, 2))(autojit.tensor([[1.0, 2.0]])).tolist()
        [[0.0, 1.0, 2.0, 0.0, 0.0]]
    """

    _spatial = 1


class ZeroPad2d(_ZeroPadding, ConstantPad2d):
    """Pad the last 2 dims with zeros."""

    _spatial = 2


class ZeroPad3d(_ZeroPadding, ConstantPad3d):
    """Pad the last 3 dims with zeros."""

    _spatial = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection about the edge (the edge not repeated).

        >>> import autojit
        >>> autojit.nn.ReflectionPad1d(2)(autojit.tensor([[1.0, 2.0, 3.0]])).tolist()
        [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    _spatial = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dims with their reflection about the edges."""

    _spatial = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dims with their reflection about the edges."""

    _spatial = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating its edge values."""

    _spatial = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dims by repeating their edge values."""

    _spatial = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dims by repeating their edge values."""

    _spatial = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):  # noqa: A002
        if input.ndim not in (self._spatial + 1, self._spatial + 2):
            raise ValueError(f"expected {self._spatial + 1}D or {self._spatial + 2}D input "
                             f"(got {input.ndim}D input)")
        return pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around: the left pad is the end of the dim.

        >>> import autojit
        >>> autojit.nn.CircularPad1d(1)(autojit.tensor([[1.0, 2.0, 3.0]])).tolist()
        [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    _spatial = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims by wrapping around."""

    _spatial = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims by wrapping around."""

    _spatial = 3
