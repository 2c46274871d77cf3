"""autojit.nn.modules.batchnorm: BatchNorm1d and BatchNorm2d, at torch's module path (the classes
are autojit.nn's)."""

from __future__ import annotations

from ..normalization import BatchNorm1d, BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]
