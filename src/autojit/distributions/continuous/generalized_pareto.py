"""GeneralizedPareto: the generalized Pareto distribution of location `loc`, scale `scale`
and shape `concentration` (exponential at concentration 0, bounded above for a negative one),
reparameterized through its inverse CDF."""

from __future__ import annotations

import math

from ...ops import functional as F
from ...tensor.creation import ones_like, rand, zeros_like
from .. import constraints
from ..distribution import Distribution, batch_shape_of, expand_parameters
from ..utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution: survival function (1 + c z)^(-1 / c),
    z = (x - loc) / scale, c the concentration (exp(-z) at c = 0)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(batch_shape_of((loc, scale, concentration), (self.loc,)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, GeneralizedPareto, batch_shape, _instance,
                                 ("loc", "scale", "concentration"))

    def _zero_and_safe(self):
        """Where the concentration is 0 (the exponential limit), and the concentration with
        those entries replaced by 1 so that the general formula stays finite there."""
        at_zero = F.isclose(self.concentration, zeros_like(self.concentration))
        return at_zero, F.where(at_zero, ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        z = self._z(value)
        at_zero, safe = self._zero_and_safe()
        y = 1 / safe + ones_like(z)
        nonzero = F.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - F.where(at_zero, z, nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            value = self._validate_sample(value)
        z = self._z(value)
        at_zero, safe = self._zero_and_safe()
        return F.where(at_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        """log P(X <= value)."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        at_zero, safe = self._zero_and_safe()
        log_u = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * log_u).expm1()
        return F.where(at_zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = F.where(valid, self.concentration, 0.5)
        return F.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = F.where(valid, self.concentration, 0.25)
        return F.where(valid, self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = F.where(self.concentration < 0, lower - self.scale / self.concentration,
                        math.inf)
        return constraints.interval(lower, upper)
