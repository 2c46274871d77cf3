"""Uniform: the continuous uniform distribution on [low, high), reparameterized as
low + (high - low) * u."""

from __future__ import annotations

import math

from ...tensor.creation import rand
from .. import constraints
from ..distribution import Distribution, batch_shape_of, expand_parameters
from ..utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on [low, high)."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(batch_shape_of((low, high), (self.low,)), validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + draws * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        inside = self.low.le(value).type_as(self.low) * self.high.gt(value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
