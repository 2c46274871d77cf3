"""Laplace: the Laplace (double exponential) distribution of location `loc` and scale
`scale`, reparameterized through its inverse CDF."""

from __future__ import annotations

from ...tensor.creation import rand
from ...tensor.type_info import finfo
from .. import constraints
from ..distribution import Distribution, batch_shape_of, expand_parameters
from ..utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), (self.loc,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # u uniform on [eps - 1, 1), so that log1p(-|u|) stays finite.
        low = finfo(self.loc.dtype).eps - 1
        u = rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) * (1 - low) + low
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        centered = value - self.loc
        return 0.5 - 0.5 * centered.sign() * (-centered.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
