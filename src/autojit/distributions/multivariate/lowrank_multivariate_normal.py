"""LowRankMultivariateNormal: a multivariate normal whose covariance is
cov_factor @ cov_factor.T + diag(cov_diag), a low-rank part plus a diagonal; its determinant
and inverse go through the m x m capacitance matrix (the matrix determinant lemma and
Woodbury's identity), m the rank."""

from __future__ import annotations

import math

from ...ops import functional as F
from ...ops.linalg.namespace import cholesky, solve_triangular
from ...tensor.creation import eye
from ...tensor.tensor import Size
from .. import constraints
from ..distribution import Distribution
from ..utils import _standard_normal, broadcast_tensors, lazy_property
from .multivariate_normal import _batch_mahalanobis, _batch_mv

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(K):
    return K + eye(K.shape[-1], dtype=K.dtype, device=K.device)


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix I + W^T D^-1 W."""
    return cholesky(_plus_identity((W.mT / D.unsqueeze(-2)) @ W))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by Woodbury's identity."""
    Wt_Dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor cov_factor^T + diag(cov_diag))."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape "
                             f"{Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as error:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from error
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(tuple(self._batch_shape)
                                                       + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, and the middle matrix has its
        # eigenvalues at least 1: a well-conditioned Cholesky factorization.
        root_diag = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / root_diag
        factor = root_diag * cholesky(_plus_identity(scaled @ scaled.mT))
        return factor.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (W @ W.mT + F.diag_embed(self._unbroadcasted_cov_diag)).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1, C the capacitance matrix.
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision = F.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps_W = _standard_normal(shape[:-1] + tuple(self.cov_factor.shape[-1:]),
                                 dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _batch_lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _batch_lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
