"""Gamma: the gamma distribution of shape `concentration` and inverse scale `rate`,
reparameterized by implicit differentiation of its sampler (ops/random/gamma.py's
standard_gamma, whose gradient is torch's)."""

from __future__ import annotations

from ...ops import functional as F
from ...ops.random.gamma import standard_gamma
from ...tensor.creation import as_tensor
from ...tensor.type_info import finfo
from .. import constraints
from ..distribution import batch_shape_of, expand_parameters
from ..exp_family import ExponentialFamily
from ..utils import broadcast_all

__all__ = ["Gamma"]


def _keep_positive(value):
    """value clamped to at least the dtype's tiny, with value's gradient (torch clamps the
    sample in place outside autograd)."""
    return value + (value.clamp(min=finfo(value.dtype).tiny) - value).detach()


class Gamma(ExponentialFamily):
    """The gamma distribution: density rate^a x^(a - 1) exp(-rate x) / Gamma(a), a the
    concentration."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(batch_shape_of((concentration, rate), (self.concentration,)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Gamma, batch_shape, _instance,
                                 ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _keep_positive(value)

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            value = self._validate_sample(value)
        return (F.xlogy(self.concentration, self.rate) + F.xlogy(self.concentration - 1, value)
                - self.rate * value - F.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - self.rate.log() + F.lgamma(self.concentration)
                + (1.0 - self.concentration) * F.digamma(self.concentration))

    def cdf(self, value):
        raise NotImplementedError("Gamma.cdf needs the regularized incomplete gamma function "
                                  "(torch.special.gammainc), which autojit does not have")

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return F.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
