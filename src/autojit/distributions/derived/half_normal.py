"""HalfNormal: |X| for X normal of mean 0 and standard deviation `scale` (folded.py holds the
fold)."""

from __future__ import annotations

import math

from ..continuous.normal import Normal
from .folded import FoldedAtZero

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    """The half-normal distribution: |X|, X ~ Normal(0, scale)."""

    base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
