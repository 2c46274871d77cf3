"""ContinuousBernoulli: the continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and
Cunningham, 2019), density proportional to p^x (1 - p)^(1 - x); reparameterized through its
inverse CDF. Near p = 1/2, inside `lims`, its normalizer and moments use Taylor expansions."""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...ops import functional as F
from ...tensor.creation import ones_like, rand, zeros_like
from ...tensor.tensor import Size
from .. import constraints
from ..discrete.bernoulli import one_of_probs_or_logits
from ..distribution import batch_shape_of, expand_parameters
from ..exp_family import ExponentialFamily
from ..utils import (
    _binary_cross_entropy_with_logits,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution of parameter `probs` (or sigmoid of `logits`)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        one_of_probs_or_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            # Checked before the clamp below, which would make every value pass.
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        given = probs if probs is not None else logits
        super().__init__(batch_shape_of((given,), (self._param,)), validate_args=validate_args)
        self._param = self.__dict__["probs" if probs is not None else "logits"]

    def expand(self, batch_shape, _instance=None):
        new = expand_parameters(self, ContinuousBernoulli, batch_shape, _instance,
                                ("probs", "logits"))
        new._lims = self._lims
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_tensor(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, moved out of the unstable region (where the Taylor forms are used)."""
        return F.where(self._outside_unstable_region(), self.probs,
                       self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = F.where(cut <= 0.5, cut, zeros_like(cut))
        above = F.where(cut >= 0.5, cut, ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - F.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return F.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return F.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                     + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return F.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_binary_cross_entropy_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = F.where(self._outside_unstable_region(), cdfs, value)
        return F.where(value <= 0.0, zeros_like(value),
                       F.where(value >= 1.0, ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return F.where(self._outside_unstable_region(),
                       ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                       / (cut.log() - (-cut).log1p()),
                       value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = F.where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return F.where(outside, log_norm, taylor)
