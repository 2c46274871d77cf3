"""autojit.nn.modules.sparse: Embedding, at torch's module path (the classes are autojit.nn's)."""

from __future__ import annotations

from ..sparse import Embedding

__all__ = ["Embedding"]
