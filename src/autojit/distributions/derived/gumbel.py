"""Gumbel: the Gumbel (type I extreme value) distribution of location `loc` and scale
`scale`: loc - scale log(-log(u)), u uniform."""

from __future__ import annotations

import math
import numbers

from ...tensor.creation import full_like, ones_like
from ...tensor.type_info import finfo
from .. import constraints
from ..continuous.uniform import Uniform
from ..transforms import AffineTransform, ExpTransform
from ..utils import broadcast_all, euler_constant
from .transformed_distribution import TransformedDistribution

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel distribution: density exp(-(z + exp(-z))) / scale, z = (x - loc) / scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base_dist = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, info.tiny),
                                full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        # Written out: through the transforms it loses precision.
        if self._validate_args:
            value = self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
