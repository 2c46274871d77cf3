"""FoldedAtZero: the distribution of |X| for X symmetric about 0 with a `scale` (HalfNormal,
HalfCauchy), as a TransformedDistribution of X by AbsTransform.

The density, distribution function, quantiles and entropy follow from X's by the fold: the
density doubles on [0, inf), the distribution function is 2 F(x) - 1, and the entropy
loses log 2. The subclasses give X (`base`) and the moments, which do not fold so simply.
"""

from __future__ import annotations

import math

from ...ops import functional as F
from ...tensor.creation import zeros_like
from .. import constraints
from ..transforms import AbsTransform
from .transformed_distribution import TransformedDistribution

__all__ = ["FoldedAtZero"]


class FoldedAtZero(TransformedDistribution):
    """|X| for X ~ base(0, scale), a distribution symmetric about 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base = None  # the class of X: called as base(0, scale, validate_args=False)

    def __init__(self, scale, validate_args=None):
        base_dist = type(self).base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        value = self._log_prob_operand(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return F.where(value >= 0, log_prob, -math.inf)

    def _log_prob_operand(self, value):
        """The value log_prob evaluates (HalfCauchy's is cast to the scale's dtype first)."""
        return value

    def cdf(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
