"""autojit.jit.annotations: the TorchScript annotations torch.jit.annotations has that libraries
import to annotate their functions (torchvision's roi_align takes a `BroadcastingList2[int]`):
Python reads nothing from them, and autojit has no TorchScript to read them either; and the
typing names it re-exports."""

from __future__ import annotations

# The typing names torch.jit.annotations has, which code imports from there (timm's densenet).
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401, UP035

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3"]


class BroadcastingListCls:
    """TorchScript's annotation of an argument that is a number or a list of them
    (`BroadcastingList2[int]`): subscripting it gives None, as torch's does."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingListCls()
BroadcastingList2 = BroadcastingListCls()
BroadcastingList3 = BroadcastingListCls()
