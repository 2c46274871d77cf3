"""autojit.nn.modules.flatten: Flatten and Unflatten, at torch's module path (the classes are
autojit.nn's)."""

from __future__ import annotations

from ..flatten import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
