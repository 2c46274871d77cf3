"""autojit.nn.modules.module: the layers torch.nn.modules.module holds, at torch's module path (the
classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Module,
)

__all__ = [
    "Module",
]
