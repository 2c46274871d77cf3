"""autojit.nn.modules.conv: Conv1d and Conv2d, at torch's module path (the classes are
autojit.nn's)."""

from __future__ import annotations

from ..convolution import Conv1d, Conv2d

__all__ = ["Conv1d", "Conv2d"]
