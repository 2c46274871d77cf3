"""CountedTrials: the part Binomial and NegativeBinomial share, a count of trials
`total_count` and a success probability given as `probs` or as `logits`.

The two parameters broadcast together and the count takes the probability's dtype; the other
form of the probability is computed on first use (lazy_property), as torch's distributions do.
"""

from __future__ import annotations

from ..distribution import Distribution, expand_parameters
from ..utils import BinaryProbability, GivenParameter, broadcast_all
from .bernoulli import one_of_probs_or_logits

__all__ = ["CountedTrials"]


class CountedTrials(GivenParameter, BinaryProbability, Distribution):
    """A distribution over counts of `total_count` trials of success probability `probs`
    (or sigmoid of `logits`)."""

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
        new = expand_parameters(self, type(self), batch_shape, _instance,
                                ("total_count", "probs", "logits"))
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return new
