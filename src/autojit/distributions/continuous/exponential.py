"""Exponential: the exponential distribution of rate `rate`, reparameterized through its
inverse CDF."""

from __future__ import annotations

from ...tensor.creation import rand, zeros_like
from .. import constraints
from ..distribution import batch_shape_of, expand_parameters
from ..exp_family import ExponentialFamily
from ..utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution: density rate exp(-rate x) on x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of((rate,), (self.rate,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # A standard exponential draw, as Tensor.exponential_ makes it: -log(1 - u).
        draws = -(-rand(tuple(shape), dtype=self.rate.dtype, device=self.rate.device)).log1p()
        return draws / self.rate

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
