"""Dirichlet: the Dirichlet distribution over the simplex of the last dim, of concentrations
`concentration`; its rsample is differentiable with torch's implicit reparameterization
gradient (ops/random/gamma.py dirichlet_grad), once, as torch's."""

from __future__ import annotations

from ...autograd import Function, once_differentiable
from ...ops import functional as F
from ...ops.random.gamma import dirichlet_grad, sample_dirichlet
from ...tensor.creation import arange
from .. import constraints
from ..distribution import expand_parameters
from ..exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    """The VJP of a Dirichlet sample x in its concentration: each coordinate's implicit
    gradient, with the simplex's constraint (the coordinates sum to 1) projected out."""
    total = concentration.sum(-1, keepdim=True).expand_as(concentration)
    gradient = dirichlet_grad(x, concentration, total)
    return gradient * (grad_output - (x * grad_output).sum(-1, keepdim=True))


class _Dirichlet(Function):
    @staticmethod
    def forward(ctx, concentration):
        x = sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution: density prod x_i^(a_i - 1) / B(a) on the simplex."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_parameters(self, Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return (F.xlogy(self.concentration - 1.0, value).sum(-1)
                + F.lgamma(self.concentration.sum(-1)) - F.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # Where every concentration is below 1 the density is largest at a vertex: the one
        # hot vector of the largest entry (all entries of `mode` are NaN there, 0 / 0, so
        # argmax picks the first, as torch's does).
        below_one = (self.concentration < 1).all(-1, keepdim=True)
        count = shifted.shape[-1]
        vertex = (F.argmax(mode, -1, keepdim=True) == _positions(count, mode)).to(mode.dtype)
        return F.where(below_one, vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        total = self.concentration.sum(-1)
        return (F.lgamma(self.concentration).sum(-1) - F.lgamma(total)
                - (k - total) * F.digamma(total)
                - ((self.concentration - 1.0) * F.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - F.lgamma(x.sum(-1))


def _positions(count, like):
    return arange(count, device=like.device)
