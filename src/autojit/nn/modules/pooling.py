"""autojit.nn.modules.pooling: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d, at torch's module path
(the classes are autojit.nn's)."""

from __future__ import annotations

from ..pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]
