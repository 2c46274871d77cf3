"""autojit.nn.modules.distance: the layers torch.nn.modules.distance holds, at torch's module path
(the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    CosineSimilarity,
    PairwiseDistance,
)

__all__ = [
    "CosineSimilarity", "PairwiseDistance",
]
