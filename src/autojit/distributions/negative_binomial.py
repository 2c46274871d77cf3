"""NegativeBinomial: the number of successes before `total_count` failures in trials of
success probability `probs` (or sigmoid of `logits`), sampled as a gamma-Poisson mixture."""

from __future__ import annotations

from ..autograd import no_grad
from ..ops import functional as F
from ..ops.random import poisson
from ..tensor.tensor import Size
from . import constraints
from .bernoulli import one_of_probs_or_logits
from .distribution import Distribution, expand_parameters
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


def _log_sigmoid(x):
    return -F.softplus(-x)


class NegativeBinomial(Distribution):
    """P(k) = C(k + r - 1, k) p^k (1 - p)^r, r = total_count."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        one_of_probs_or_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        super().__init__(self._param.size(), validate_args=validate_args)
        self._param = self.__dict__["probs" if probs is not None else "logits"]

    def expand(self, batch_shape, _instance=None):
        new = expand_parameters(self, NegativeBinomial, batch_shape, _instance,
                                ("total_count", "probs", "logits"))
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_tensor(*args, **kwargs)

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
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

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
