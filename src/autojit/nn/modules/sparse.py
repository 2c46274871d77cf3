"""autojit.nn.modules.sparse: the layers torch.nn.modules.sparse holds, at torch's module path (the
classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Embedding,
    EmbeddingBag,
)

__all__ = [
    "Embedding", "EmbeddingBag",
]
