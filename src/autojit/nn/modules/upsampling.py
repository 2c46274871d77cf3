"""autojit.nn.modules.upsampling: the layers torch.nn.modules.upsampling holds, at torch's module
path (the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = [
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
]
