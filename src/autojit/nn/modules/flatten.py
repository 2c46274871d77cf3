"""autojit.nn.modules.flatten: the layers torch.nn.modules.flatten holds, at torch's module path
(the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Flatten,
    Unflatten,
)

__all__ = [
    "Flatten", "Unflatten",
]
