"""LKJCholesky: the LKJ distribution of the Cholesky factors of `dim` x `dim` correlation
matrices, of concentration `concentration`, sampled by the onion method (Lewandowski, Kurowicka
and Joe, 2009) from Beta and normal draws."""

from __future__ import annotations

import math

from ...ops import functional as F
from ...tensor.creation import arange, randn
from ...tensor.tensor import Size
from ...tensor.type_info import finfo
from .. import constraints
from ..continuous.beta import Beta
from ..distribution import Distribution
from ..utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Cholesky factors L of correlation matrices with density proportional to
    det(L L^T)^(concentration - 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found "
                             f"dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # The Beta draws of the onion method's rows (one per row, vectorized).
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)
        offset = F.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        # Each row: a point of the unit hypersphere of the row's strict lower part, scaled by
        # the square root of a Beta draw; the diagonal makes the row's norm 1.
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = tuple(self._extended_shape(sample_shape))
        normal = randn(shape, dtype=y.dtype, device=y.device).tril(-1)
        norms = normal.square().sum(-1, keepdim=True).sqrt()
        # The first row has no strict lower part (0 / 0): it is the unit vector e_1.
        first_row = (arange(self.dim, device=y.device) == 0).reshape(-1, 1)
        sphere = F.where(first_row, 0.0, normal / norms)
        w = y.sqrt() * sphere
        diagonal = (1 - w.square().sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + F.diag_embed(diagonal)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        # det(L L^T)^(c - 1) times the Jacobian prod L_ii^(D - i) of L -> L L^T: the diagonal
        # entries to the powers 2 (c - 1) + D - i.
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = F.lgamma(alpha) * dm1
        numerator = F.mvlgamma(alpha - 0.5, dm1)
        # The normalizer's pi term is D (D - 1) / 4 log(pi); mvlgamma has (D - 1) (D - 2) / 4.
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
