"""FisherSnedecor: the F distribution of `df1` and `df2` degrees of freedom, the ratio of two
scaled gamma variables (so it is reparameterized through Gamma's rsample)."""

from __future__ import annotations

import math

from ...ops import functional as F
from ...tensor.type_info import finfo
from .. import constraints
from ..distribution import Distribution, batch_shape_of, expand_parameters
from ..utils import broadcast_all
from .gamma import Gamma

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F distribution: X1 / X2 with X_i ~ Gamma(df_i / 2, df_i)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(batch_shape_of((df1, df2), (self.df1,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_parameters(self, FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = F.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return F.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = F.where(self.df2 <= 4, math.nan, self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = finfo(self.df1.dtype).tiny
        X1 = self._gamma1.rsample(sample_shape).reshape(shape)
        X2 = self._gamma2.rsample(sample_shape).reshape(shape)
        # torch clamps in place (outside autograd): the values move, the gradient does not.
        X2 = X2 + (X2.clamp(min=tiny) - X2).detach()
        Y = X1 / X2
        return Y + (Y.clamp(min=tiny) - Y).detach()

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
