"""autojit.nn.modules.batchnorm: the layers torch.nn.modules.batchnorm holds, at torch's module
path (the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    SyncBatchNorm,
)

# The base classes torch's module holds, which programs subclass and test with isinstance.
from ..lazy import _LazyNormBase  # noqa: F401
from ..normalization import _BatchNorm, _NormBase  # noqa: F401

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "SyncBatchNorm",
]
