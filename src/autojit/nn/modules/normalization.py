"""autojit.nn.modules.normalization: LayerNorm and GroupNorm, at torch's module path (the classes
are autojit.nn's)."""

from __future__ import annotations

from ..normalization import GroupNorm, LayerNorm

__all__ = ["GroupNorm", "LayerNorm"]
