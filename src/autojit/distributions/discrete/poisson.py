"""Poisson: the Poisson distribution of rate `rate`."""

from __future__ import annotations

from ...autograd import no_grad
from ...ops.random import poisson
from .. import constraints
from ..distribution import batch_shape_of, expand_parameters
from ..exp_family import ExponentialFamily
from ..utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution: P(k) = rate^k exp(-rate) / k!."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of((rate,), (self.rate,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
