"""autojit.nn.modules.lazy: LazyModuleMixin, at torch.nn.modules.lazy's path (the class is
autojit.nn.lazy's)."""

from __future__ import annotations

from ..lazy import LazyModuleMixin  # noqa: F401 - re-exported name

__all__ = ["LazyModuleMixin"]
