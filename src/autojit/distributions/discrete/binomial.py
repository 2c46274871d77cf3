"""Binomial: the number of successes in `total_count` independent trials of success
probability `probs` (or sigmoid of `logits`)."""

from __future__ import annotations

from ...autograd import no_grad
from ...ops import functional as F
from ...ops.random.gamma import binomial
from ...tensor.creation import arange
from .. import constraints
from .counted_trials import CountedTrials

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with a derivative of 1/2 at 0, as torch's."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(CountedTrials):
    """The binomial distribution B(total_count, probs); total_count may vary over the batch."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorials = F.lgamma(value + 1) + F.lgamma(n - value + 1) - F.lgamma(n + 1)
        # k log p + (n - k) log(1 - p) = k logit - n log(1 + e^logit), written so that
        # neither exponential overflows: n (max(logit, 0) + log1p(e^-|logit|)).
        normalizer = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
        return value * logits - log_factorials - normalizer

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max())
        if not self.total_count.min() == count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


