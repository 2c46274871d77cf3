"""MultivariateNormal: the multivariate normal distribution of mean `loc`, given by exactly one
of its covariance matrix, precision matrix or lower Cholesky factor of the covariance
(scale_tril); every computation goes through the Cholesky factor (autojit.linalg's cholesky and
solve_triangular, differentiable twice)."""

from __future__ import annotations

import math

from ...ops.linalg.namespace import cholesky, solve, solve_triangular
from ...tensor.creation import eye
from ...tensor.tensor import Size
from .. import constraints
from ..distribution import Distribution
from ..utils import _standard_normal, broadcast_shape, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distances x^T (L L^T)^-1 x = |L^-1 x|^2, for L of batch shape
    broadcasting with x's. One triangular solve with every vector as a column where L is one
    matrix; otherwise L is broadcast to x's batch."""
    n = bx.shape[-1]
    if bL.dim() == 2:
        columns = bx.reshape(-1, n).T
        solved = solve_triangular(bL, columns, upper=False)
        return solved.pow(2).sum(0).reshape(tuple(bx.shape[:-1]))
    batch = tuple(broadcast_shape(tuple(bL.shape[:-2]), tuple(bx.shape[:-1])))
    solved = solve_triangular(bL.expand(batch + (n, n)),
                              bx.expand(batch + (n,)).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _cholesky_solve(b, L):
    """(L L^T)^-1 b, as torch.cholesky_solve. A solve with L L^T rather than two triangular
    solves: torch's cholesky_solve and cholesky_inverse differentiate as this does, every entry
    of L included (triangular solves would give those above the diagonal no gradient)."""
    return solve(L @ L.mT, b)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, without inverting P: the Cholesky factor of P with
    its rows and columns reversed gives an upper factorization, whose inverse is lower."""
    Lf = cholesky(P.flip(-2, -1))
    L_inv = Lf.flip(-2, -1).transpose(-2, -1)
    identity = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, identity.expand(tuple(L_inv.shape)), upper=False)


class MultivariateNormal(Distribution):
    """N(loc, Sigma), with Sigma given as covariance_matrix, precision_matrix (its inverse) or
    scale_tril (its lower Cholesky factor)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        names = {id(scale_tril): "scale_tril", id(covariance_matrix): "covariance_matrix",
                 id(precision_matrix): "precision_matrix"}
        matrix = given[0]
        name = names[id(matrix)]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        batch_shape = tuple(broadcast_shape(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        event = tuple(self.event_shape)
        new.loc = self.loc.expand(tuple(batch_shape) + event)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape) + event * 2))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(tuple(L.shape))
        return _cholesky_solve(identity, L).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
