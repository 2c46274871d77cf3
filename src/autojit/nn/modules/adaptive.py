"""autojit.nn.modules.adaptive: the layer torch.nn.modules.adaptive holds, at torch's module
path (the class is autojit.nn's)."""

from __future__ import annotations

from .. import AdaptiveLogSoftmaxWithLoss  # noqa: F401 - re-exported name

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
