"""autojit.signal: torch.signal's namespace, whose one module is `windows` (the window
functions of spectral analysis). It sits with the other public namespaces above ops/."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
