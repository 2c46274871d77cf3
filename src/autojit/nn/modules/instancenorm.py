"""autojit.nn.modules.instancenorm: the layers torch.nn.modules.instancenorm holds, at torch's
module path (the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)

# The base classes torch's module holds, which programs subclass and test with isinstance.
from ..lazy import _LazyNormBase  # noqa: F401
from ..normalization import _NormBase  # noqa: F401
from ..normalization_extra import _InstanceNorm  # noqa: F401

__all__ = [
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]
