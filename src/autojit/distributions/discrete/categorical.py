"""Categorical: the distribution over the categories 0 to K - 1 of the last dim of `probs`
(normalized) or `logits` (normalized by logsumexp)."""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...ops.random import multinomial
from ...tensor import dtypes
from ...tensor.creation import arange, full
from ...tensor.tensor import Size
from ...tensor.type_info import finfo
from .. import constraints
from ..distribution import Distribution, expand_parameters
from ..utils import broadcast_tensors, lazy_property, logits_to_probs, probs_to_logits
from .bernoulli import one_of_probs_or_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A categorical distribution over the last dim of `probs` or `logits`; the other dims are
    the batch."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)
        self._param = self.__dict__["probs" if probs is not None else "logits"]

    def expand(self, batch_shape, _instance=None):
        new = expand_parameters(self, Categorical, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        new._num_events = self._num_events
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_tensor(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        with no_grad():
            rows = self.probs.reshape(-1, self._num_events)
            samples = multinomial(rows, sample_shape.numel(), True).T
            return samples.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # Logits of -inf (probability 0) count as the dtype's lowest value, so 0 * -inf is 0.
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=dtypes.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
