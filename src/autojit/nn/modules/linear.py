"""autojit.nn.modules.linear: the layers torch.nn.modules.linear holds, at torch's module path (the
classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Bilinear,
    Identity,
    LazyLinear,
    Linear,
)
from ..attention import NonDynamicallyQuantizableLinear  # noqa: F401 - MultiheadAttention's

__all__ = [
    "Bilinear", "Identity", "LazyLinear", "Linear",
]
