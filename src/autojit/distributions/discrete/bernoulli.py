"""Bernoulli: the distribution of one coin toss, 1 with probability `probs` (or sigmoid of
`logits`)."""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...ops import functional as F
from ...ops.random import bernoulli
from ...tensor.creation import arange
from .. import constraints
from ..distribution import batch_shape_of, expand_parameters
from ..exp_family import ExponentialFamily
from ..utils import (
    BinaryProbability,
    GivenParameter,
    _binary_cross_entropy_with_logits,
    _log1p_exp,
    broadcast_all,
)

__all__ = ["Bernoulli"]


def one_of_probs_or_logits(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(GivenParameter, BinaryProbability, ExponentialFamily):
    """The Bernoulli distribution: 1 with probability p, 0 otherwise."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of_probs_or_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        given = probs if probs is not None else logits
        super().__init__(batch_shape_of((given,), (self._param,)), validate_args=validate_args)
        self._param = self.__dict__["probs" if probs is not None else "logits"]

    def expand(self, batch_shape, _instance=None):
        new = expand_parameters(self, Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return F.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_binary_cross_entropy_with_logits(logits, value)

    def entropy(self):
        return _binary_cross_entropy_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (F.logit(self.probs),)

    def _log_normalizer(self, x):
        return _log1p_exp(x)
