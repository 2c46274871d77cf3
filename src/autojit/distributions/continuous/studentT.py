"""StudentT: Student's t distribution of `df` degrees of freedom, location `loc` and scale
`scale`, reparameterized as loc + scale * X / sqrt(Z / df), X normal and Z chi-squared."""

from __future__ import annotations

import math

from ...ops import functional as F
from .. import constraints
from ..distribution import Distribution, expand_parameters
from ..utils import _standard_normal, broadcast_all
from .chi2 import Chi2

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_parameters(self, StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return F.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        result = F.where(self.df > 2, finite, math.inf)
        return F.where(self.df <= 1, math.nan, result)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        normal = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * normal * (chi2 / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        y = (value - self.loc) / self.scale
        normalizer = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                      + F.lgamma(0.5 * self.df) - F.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y**2.0 / self.df).log1p() - normalizer

    def entropy(self):
        log_beta = (F.lgamma(0.5 * self.df) + math.lgamma(0.5)
                    - F.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (F.digamma(0.5 * (self.df + 1))
                                         - F.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + log_beta)
