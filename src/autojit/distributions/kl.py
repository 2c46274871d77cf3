"""kl_divergence and register_kl: the KL divergence KL(p || q) between two distributions, by
the closed form registered for their pair of types (torch's pairs).

A pair is looked up by the most specific registered (type_p, type_q) both types derive from
(left and right lexicographic orders must agree; otherwise a RuntimeWarning names the
ambiguity), memoized per pair of concrete types. This module holds the registry and the pairs
of one family; kl_pairs.py holds the pairs across families. Every formula is in autojit ops,
so a KL term is differentiable (twice) and traces into a compiled step.
"""

from __future__ import annotations

import functools
import math
import warnings

from ..autograd import grad
from ..ops import functional as F
from ..ops.linalg.namespace import solve_triangular
from ..tensor.creation import full_like
from .continuous.beta import Beta
from .continuous.cauchy import Cauchy
from .continuous.continuous_bernoulli import ContinuousBernoulli
from .continuous.exponential import Exponential
from .continuous.gamma import Gamma
from .continuous.laplace import Laplace
from .continuous.normal import Normal
from .continuous.uniform import Uniform
from .derived.gumbel import Gumbel
from .derived.half_normal import HalfNormal
from .derived.independent import Independent
from .derived.pareto import Pareto
from .derived.transformed_distribution import TransformedDistribution
from .discrete.bernoulli import Bernoulli
from .discrete.binomial import Binomial
from .discrete.categorical import Categorical
from .discrete.geometric import Geometric
from .discrete.one_hot_categorical import OneHotCategorical
from .discrete.poisson import Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate.dirichlet import Dirichlet
from .multivariate.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from .multivariate.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .utils import _sum_rightmost, broadcast_shape, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict = {}  # the registered (type_p, type_q) pairs -> functions
_KL_MEMOIZE: dict = {}  # concrete (type(p), type(q)) -> the function dispatch chose


def register_kl(type_p, type_q):
    """A decorator registering a function (p, q) -> KL(p || q) for instances of the two
    Distribution subclasses (and their subclasses, unless a more specific pair is
    registered)."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # the lookup may change
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """A registered pair, ordered lexicographically by specificity (a subclass first)."""

    __slots__ = ("types",)

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun, right_fun = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], of shape batch_shape; NotImplementedError
    when no formula is registered for the pair."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


# ---- helpers --------------------------------------------------------------------------------

def _infinite_like(tensor):
    return full_like(tensor, math.inf)


def _x_log_x(tensor):
    return F.xlogy(tensor, tensor)  # 0 at 0


def _batch_trace_XXT(bmat):
    """trace(X X^T) of each matrix: the sum of its squared entries."""
    n, m = bmat.shape[-1], bmat.shape[-2]
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(tuple(bmat.shape[:-2]))


def _infinite_where(mask, value):
    """value, infinite where `mask` holds."""
    return F.where(mask, math.inf, value)


def _softplus(x):
    return F.softplus(x)


# ---- pairs of one family --------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = F.where(p.probs == 0, 0.0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = F.where(p.probs == 1, 0.0, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * F.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * F.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * F.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _infinite_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _infinite_where((q.probs == 0).expand_as(t), t)
    return F.where((p.probs == 0).expand_as(t), 0.0, t).sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer F at the natural parameters:
    F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>."""
    if type(p) is not type(q):
        # torch's message, with the spaces its source's line continuation leaves in it.
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot " + " " * 28 + "be computed using Bregman "
                                  "divergences")
    p_natural = [param.detach().requires_grad_() for param in p._natural_params]
    q_natural = q._natural_params
    normalizer = p._log_normalizer(*p_natural)
    gradients = grad(normalizer.sum(), p_natural, create_graph=True)
    result = q._log_normalizer(*q_natural) - normalizer
    for p_param, q_param, gradient in zip(p_natural, q_natural, gradients):
        result = result - _sum_rightmost((q_param - p_param) * gradient, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = F.lgamma(q.concentration) - F.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * F.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1)


def _check_event_shapes(p, q, what):
    if tuple(p.event_shape) != tuple(q.event_shape):
        # torch's message, with the spaces its source's line continuation leaves in it.
        raise ValueError(f"KL-divergence between two {what} with{' ' * 26}different event "
                         "shapes cannot be computed")


def _woodbury_factor(q):
    """A with (W W^T + D)^-1 = D^-1 - A^T A for q's low-rank covariance."""
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)


def _log_det_tril(L):
    return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    qW, qD = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = (_batch_lowrank_logdet(qW, qD, q._capacitance_tril)
             - _batch_lowrank_logdet(pW, pD, p._capacitance_tril))
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    # trace(Sigma_q^-1 Sigma_p) = trace([D_q^-1 - A^T A] (D_p + W_p W_p^T)).
    A = _woodbury_factor(q)
    term2 = ((pD / qD).sum(-1) + _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2)) - _batch_trace_XXT(A @ pW))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    qW, qD = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    term1 = (_batch_lowrank_logdet(qW, qD, q._capacitance_tril)
             - 2 * _log_det_tril(p._unbroadcasted_scale_tril))
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    A = _woodbury_factor(q)
    L = p._unbroadcasted_scale_tril
    term2 = _batch_trace_XXT(L * qD.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(A @ L)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = (2 * _log_det_tril(q._unbroadcasted_scale_tril)
             - _batch_lowrank_logdet(pW, pD, p._capacitance_tril))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    batch = tuple(broadcast_shape(tuple(q._unbroadcasted_scale_tril.shape[:-2]),
                                  tuple(pW.shape[:-2])))
    n = p.event_shape[0]
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_factor = pW.expand(batch + (n, p.cov_factor.shape[-1]))
    p_diag = F.diag_embed(pD.sqrt()).expand(batch + (n, n))
    term2 = (_batch_trace_XXT(solve_triangular(q_tril, p_factor, upper=False))
             + _batch_trace_XXT(solve_triangular(q_tril, p_diag, upper=False)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "Multivariate Normals")
    half_term1 = (_log_det_tril(q._unbroadcasted_scale_tril)
                  - _log_det_tril(p._unbroadcasted_scale_tril))
    batch = tuple(broadcast_shape(tuple(q._unbroadcasted_scale_tril.shape[:-2]),
                                  tuple(p._unbroadcasted_scale_tril.shape[:-2])))
    n = p.event_shape[0]
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_tril = p._unbroadcasted_scale_tril.expand(batch + (n, n))
    term2 = _batch_trace_XXT(solve_triangular(q_tril, p_tril, upper=False))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _infinite_where(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


# The pairs across families register themselves on import.
from . import kl_pairs  # noqa: E402, F401


def _add_kl_info():
    """The registered pairs, appended to kl_divergence's docstring (as torch lists them)."""
    rows = ["KL divergence is currently implemented for the following distribution pairs:"]
    for p, q in sorted(_KL_REGISTRY, key=lambda pair: (pair[0].__name__, pair[1].__name__)):
        rows.append(f"* :class:`~autojit.distributions.{p.__name__}` and "
                    f":class:`~autojit.distributions.{q.__name__}`")
    kl_divergence.__doc__ += "\n\n" + "\n\t".join(rows)


_add_kl_info()
