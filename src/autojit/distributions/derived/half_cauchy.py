"""HalfCauchy: |X| for X Cauchy of median 0 and scale `scale` (folded.py holds the fold)."""

from __future__ import annotations

import math

from ...tensor.creation import as_tensor, full
from ..continuous.cauchy import Cauchy
from .folded import FoldedAtZero

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """The half-Cauchy distribution: |X|, X ~ Cauchy(0, scale)."""

    base = Cauchy

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def _log_prob_operand(self, value):
        return as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
