"""Multinomial: the counts of `total_count` draws from the categories of `probs` (or
`logits`)."""

from __future__ import annotations

from ...ops import functional as F
from ...tensor.creation import ones_like, tensor, zeros
from ...tensor.tensor import Size
from .. import constraints
from ..distribution import Distribution
from ..utils import broadcast_all
from .binomial import Binomial
from .categorical import Categorical

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """The multinomial distribution: event_shape is the number of categories, total_count a
    Python int shared by the whole batch."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        # (total_count, *sample, *batch) -> (*sample, *batch, total_count)
        order = list(range(1, draws.dim())) + [0]
        draws = draws.permute(*order)
        counts = zeros(tuple(self._extended_shape(sample_shape)), dtype=draws.dtype,
                       device=draws.device)
        counts = counts.scatter_add(-1, draws, ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        n = tensor(self.total_count)
        term1 = n * self._categorical.entropy() - F.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * F.lgamma(support + 1)).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = F.lgamma(value.sum(-1) + 1)
        log_factorial_xs = F.lgamma(value + 1).sum(-1)
        # A category of probability 0 drawn 0 times adds 0 (not 0 * -inf).
        logits = F.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
