"""Cauchy: the Cauchy (Lorentz) distribution of median `loc` and half width `scale`,
reparameterized through its inverse CDF."""

from __future__ import annotations

import math

from ...ops import functional as F
from ...tensor.creation import full, rand
from .. import constraints
from ..distribution import Distribution, batch_shape_of, expand_parameters
from ..utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy distribution: density 1 / (pi scale (1 + ((x - loc) / scale)^2))."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), (self.loc,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype,
                    device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype,
                    device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # A standard Cauchy draw, as Tensor.cauchy_ makes it: tan(pi (u - 1/2)).
        angle = (rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) - 0.5) \
            * math.pi
        return self.loc + angle.sin() / angle.cos() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return F.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return F.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
