"""RelaxedBernoulli: the binary Concrete (Gumbel-softmax) relaxation of a Bernoulli at
`temperature`, reparameterized; LogitRelaxedBernoulli is its logit (the base distribution)."""

from __future__ import annotations

from ...tensor.creation import rand
from ...tensor.tensor import Size
from .. import constraints
from ..discrete.bernoulli import one_of_probs_or_logits
from ..distribution import Distribution, batch_shape_of
from ..transforms import SigmoidTransform
from ..utils import BinaryProbability, GivenParameter, broadcast_all, clamp_probs
from .transformed_distribution import TransformedDistribution

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(GivenParameter, BinaryProbability, Distribution):
    """The logit of a RelaxedBernoulli sample: (logit(u) + logits) / temperature, u
    uniform."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
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
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape)))
                new._param = new.__dict__[name]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The binary Concrete distribution on (0, 1): sigmoid of a LogitRelaxedBernoulli."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
