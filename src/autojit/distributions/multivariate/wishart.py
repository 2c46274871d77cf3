"""Wishart: the Wishart distribution of positive-definite matrices, of `df` degrees of freedom
and scale given by one of covariance_matrix, precision_matrix or scale_tril; reparameterized by
the Bartlett decomposition (chi-squared and normal draws)."""

from __future__ import annotations

import math
import numbers
import warnings

from ...ops import functional as F
from ...ops.linalg.namespace import cholesky, slogdet
from ...tensor.creation import arange, eye, randn, tensor
from ...tensor.tensor import Size
from ...tensor.type_info import finfo
from .. import constraints
from ..continuous.chi2 import Chi2
from ..distribution import Distribution, _traced, checked
from ..exp_family import ExponentialFamily
from ..utils import broadcast_shape, lazy_property
from .multivariate_normal import _cholesky_solve, _precision_to_scale_tril

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function: sum_i digamma(x - i / 2), i < p."""
    offsets = arange(p, dtype=x.dtype, device=x.device) / 2
    return F.digamma(x.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution W(df, Sigma): the distribution of sum_k x_k x_k^T over df
    draws x_k of N(0, Sigma)."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(broadcast_shape(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if _traced():
            # Checked by the compiled kernel, as validation is (distribution.py).
            self.df = checked(self.df, self.df > p - 1,
                              f"Value of df expected to be greater than ndim - 1 = {p - 1}")
        elif bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        elif bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        name = ("scale_tril" if param is scale_tril else
                "covariance_matrix" if param is covariance_matrix else "precision_matrix")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """The chi-squared distributions of the Bartlett factor's squared diagonal: df - i."""
        offsets = arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype,
                         device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return _cholesky_solve(identity.expand(tuple(L.shape)), L).expand(self._matrix_shape())

    def _df_matrix(self, df):
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = F.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diagonal = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diagonal.unsqueeze(-1)
                                           * diagonal.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        chi = chi.clamp(min=finfo(chi.dtype).eps)
        rows, cols = F.tril_indices(p, p, offset=-1)
        below = randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                      dtype=chi.dtype, device=chi.device)
        noise = _place_below(F.diag_embed(chi), rows, cols, below)
        factor = self._unbroadcasted_scale_tril @ noise
        return factor @ factor.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A Bartlett sample; a sample that is numerically singular is drawn again, up to
        `max_try_correction` times (3 in a compiled function, where every retry is drawn,
        else 10)."""
        if max_try_correction is None:
            max_try_correction = 3 if _traced() else 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if _traced():
            for _ in range(max_try_correction):
                sample = F.where(singular.unsqueeze(-1).unsqueeze(-1),
                                 self._bartlett_sampling(sample_shape), sample)
                singular = self._singular(sample)
        elif bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample = F.where(singular.unsqueeze(-1).unsqueeze(-1),
                                 self._bartlett_sampling(sample_shape), sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _singular(self, sample):
        """Which samples are not numerically positive definite (each drawn again alone)."""
        return ~self.support.check(sample)

    def _log_det_scale(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = _cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._log_det_scale()) - F.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_det_scale()) + F.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu, p = self.df, self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + F.mvlgamma(y + (p + 1) / 2, p=p))


def _place_below(matrix, rows, cols, values):
    """`matrix` with `values` written at the positions (rows, cols) of its last two dims."""
    result = matrix.clone()
    result[..., rows, cols] = values
    return result
