"""autojit.nn.modules.linear: Identity, Linear and Bilinear, at torch's module path (the classes are
autojit.nn's)."""

from __future__ import annotations

from ..linear import Bilinear, Identity, Linear

__all__ = ["Bilinear", "Identity", "Linear"]
