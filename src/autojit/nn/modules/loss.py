"""autojit.nn.modules.loss: the loss modules, at torch's module path (the classes are
autojit.nn's)."""

from __future__ import annotations

from ..loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "L1Loss", "MSELoss",
    "NLLLoss", "SmoothL1Loss"
]
