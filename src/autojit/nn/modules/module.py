"""autojit.nn.modules.module: Module, the base class of every layer, at torch's module path (the
classes are autojit.nn's)."""

from __future__ import annotations

from ..module import Module

__all__ = ["Module"]
