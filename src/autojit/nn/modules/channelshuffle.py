"""autojit.nn.modules.channelshuffle: the layers torch.nn.modules.channelshuffle holds, at torch's
module path (the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    ChannelShuffle,
)

__all__ = [
    "ChannelShuffle",
]
