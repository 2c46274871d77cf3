"""Weibull: the Weibull distribution of scale `scale` and shape `concentration`:
scale E^(1 / concentration), E standard exponential."""

from __future__ import annotations

from ...ops import functional as F
from ...tensor.creation import ones_like
from ...tensor.tensor import Size
from .. import constraints
from ..continuous.exponential import Exponential
from ..transforms import AffineTransform, PowerTransform
from ..utils import broadcast_all, euler_constant
from .transformed_distribution import TransformedDistribution

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution: density (k / s) (x / s)^(k - 1) exp(-(x / s)^k)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * F.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration.reciprocal())

    @property
    def variance(self):
        return self.scale.pow(2) * (F.lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - (2 * F.lgamma(1 + self.concentration_reciprocal)).exp())

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)
