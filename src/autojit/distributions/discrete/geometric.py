"""Geometric: the number of failures before the first success of trials with success
probability `probs` (or sigmoid of `logits`)."""

from __future__ import annotations

from ...autograd import no_grad
from ...ops import functional as F
from ...tensor.creation import rand, zeros_like
from ...tensor.type_info import finfo
from .. import constraints
from ..distribution import Distribution, batch_shape_of, checked, expand_parameters
from ..utils import (
    BinaryProbability,
    _binary_cross_entropy_with_logits,
    broadcast_all,
)
from .bernoulli import one_of_probs_or_logits

__all__ = ["Geometric"]


class Geometric(BinaryProbability, Distribution):
    """The geometric distribution on 0, 1, 2, ...: P(k) = (1 - p)^k p."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of_probs_or_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            tensor_param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            tensor_param = self.logits
        given = probs if probs is not None else logits
        super().__init__(batch_shape_of((given,), (tensor_param,)), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # Beyond the unit interval: p = 0 never succeeds.
            value = self.probs
            message = (f"Expected parameter probs ({type(value).__name__} of shape "
                       f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                       "found invalid values")
            self.probs = checked(value, value > 0, message,
                                 shown=lambda value, valid: value.detach()[~valid])

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            # u uniform on [tiny, 1): log(u) stays finite.
            u = rand(shape, dtype=self.probs.dtype, device=self.probs.device) * (1 - tiny) + tiny
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: (1 - p)^0 = 1, not 0 * log(0).
        probs = F.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _binary_cross_entropy_with_logits(self.logits, self.probs) / self.probs
