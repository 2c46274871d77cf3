"""autojit.nn.modules.fold: the layers torch.nn.modules.fold holds, at torch's module path (the
classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Fold,
    Unfold,
)

__all__ = [
    "Fold", "Unfold",
]
