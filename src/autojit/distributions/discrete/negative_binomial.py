"""NegativeBinomial: the number of successes before `total_count` failures in trials of
success probability `probs` (or sigmoid of `logits`), sampled as a gamma-Poisson mixture."""

from __future__ import annotations

from ...autograd import no_grad
from ...ops import functional as F
from ...ops.random import poisson
from .. import constraints
from ..continuous.gamma import Gamma
from ..utils import lazy_property
from .counted_trials import CountedTrials

__all__ = ["NegativeBinomial"]


def _log_sigmoid(x):
    return -F.softplus(-x)


class NegativeBinomial(CountedTrials):
    """P(k) = C(k + r - 1, k) p^k (1 - p)^r, r = total_count."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / F.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # Not validated: total_count may be 0.
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        unnormalized = (self.total_count * _log_sigmoid(-self.logits)
                        + value * _log_sigmoid(self.logits))
        normalization = (-F.lgamma(self.total_count + value) + F.lgamma(1.0 + value)
                         + F.lgamma(self.total_count))
        # total_count = 0 and value = 0 has probability 1, where lgamma(0) is infinite.
        normalization = normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalized - normalization
