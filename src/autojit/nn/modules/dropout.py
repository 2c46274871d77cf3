"""autojit.nn.modules.dropout: the layers torch.nn.modules.dropout holds, at torch's module path
(the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)

# The base classes torch's module holds, which programs subclass and test with isinstance.
from ..dropout import _DropoutNd  # noqa: F401

__all__ = [
    "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
]
