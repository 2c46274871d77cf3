"""autojit.nn.modules.dropout: Dropout, at torch's module path (the classes are autojit.nn's)."""

from __future__ import annotations

from ..dropout import Dropout

__all__ = ["Dropout"]
