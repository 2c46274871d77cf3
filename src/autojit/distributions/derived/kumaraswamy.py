"""Kumaraswamy: the Kumaraswamy distribution on (0, 1) of concentrations `concentration1` (a)
and `concentration0` (b): (1 - u^(1/b))^(1/a), u uniform."""

from __future__ import annotations

import math

from ...ops import functional as F
from ...tensor.creation import full_like
from .. import constraints
from ..continuous.uniform import Uniform
from ..transforms import AffineTransform, PowerTransform
from ..utils import broadcast_all, euler_constant
from .transformed_distribution import TransformedDistribution

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    shifted = 1 + n / a
    return b * (F.lgamma(shifted) + F.lgamma(b) - F.lgamma(shifted + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution: density a b x^(a - 1) (1 - x^a)^(b - 1)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(full_like(self.concentration0, 0),
                            full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        b, a = self.concentration0, self.concentration1
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return F.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return (_moments(self.concentration1, self.concentration0, 2)
                - self.mean.pow(2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = F.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - self.concentration1.log() - self.concentration0.log()
