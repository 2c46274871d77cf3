"""autojit.nn.modules.pixelshuffle: the layers torch.nn.modules.pixelshuffle holds, at torch's
module path (the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    PixelShuffle,
    PixelUnshuffle,
)

__all__ = [
    "PixelShuffle", "PixelUnshuffle",
]
