"""The distributions of the differential tests of autojit.distributions, built the same way in
autojit and in torch (float64): one row per distribution and parameterization, with the
parameters (broadcasting where the class allows) and values in its support.

`build(case, lib)` makes the distribution of `lib` (autojit or torch), with the tensor
parameters as leaves that require grad when asked; tests/test_distributions_torch.py compares
values, shapes and gradients through it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

import autojit


@dataclass
class Case:
    id: str
    cls: str
    params: Callable  # rng -> (args, kwargs): numpy arrays (the tensor parameters) or numbers
    value: Callable  # rng -> values in the support, shaped (2,) + batch + event
    # Methods torch has for this class that autojit raises NotImplementedError for
    # (docs/differences.md lists them).
    missing: tuple = ()
    unit_shape: tuple = field(default=(2, 3))  # the shape of icdf's probabilities
    dtype: str = "float64"  # of the floating-point parameters and values


def _pos(rng, shape, low=0.5, high=2.0):
    return rng.uniform(low, high, shape)


def _unit(rng, shape):
    return rng.uniform(0.1, 0.9, shape)


def _simplex(rng, shape):
    return rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])


def _cov(rng, n, batch=()):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + np.eye(n)


def _corr_cholesky(rng, batch, n):
    """Cholesky factors of random correlation matrices."""
    a = rng.normal(size=batch + (n, n + 2))
    cov = a @ np.swapaxes(a, -1, -2)
    d = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    return np.linalg.cholesky(cov / d[..., :, None] / d[..., None, :])


B = (2, 3)  # the batch shape of most rows
GAMMA_CDF = ("cdf",)  # Gamma.cdf needs torch.special.gammainc

CASES = [
    Case("normal", "Normal", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("normal_broadcast", "Normal", lambda r: ((r.normal(size=(2, 1)), _pos(r, (3,))), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("normal_numbers", "Normal", lambda r: ((0.5, 2.0), {}), lambda r: r.normal(size=(2,)),
         unit_shape=()),
    Case("lognormal", "LogNormal", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: _pos(r, (2,) + B)),
    Case("uniform", "Uniform", lambda r: ((-_pos(r, B), _pos(r, B)), {}),
         lambda r: r.uniform(-0.4, 0.4, (2,) + B)),
    Case("laplace", "Laplace", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("cauchy", "Cauchy", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("exponential", "Exponential", lambda r: ((_pos(r, B),), {}),
         lambda r: _pos(r, (2,) + B)),
    Case("gamma", "Gamma", lambda r: ((_pos(r, B, 0.5, 3.0), _pos(r, B)), {}),
         lambda r: _pos(r, (2,) + B), missing=GAMMA_CDF),
    Case("chi2", "Chi2", lambda r: ((_pos(r, B, 1.0, 4.0),), {}),
         lambda r: _pos(r, (2,) + B), missing=GAMMA_CDF),
    Case("beta", "Beta", lambda r: ((_pos(r, B), _pos(r, B, 1.0, 3.0)), {}),
         lambda r: _unit(r, (2,) + B)),
    Case("dirichlet", "Dirichlet", lambda r: ((_pos(r, (2, 4), 0.5, 3.0),), {}),
         lambda r: _simplex(r, (2, 2, 4))),
    Case("studentT", "StudentT", lambda r: ((_pos(r, B, 2.5, 5.0), r.normal(size=B),
                                             _pos(r, B)), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("halfnormal", "HalfNormal", lambda r: ((_pos(r, B),), {}),
         lambda r: _pos(r, (2,) + B)),
    Case("halfcauchy", "HalfCauchy", lambda r: ((_pos(r, B),), {}),
         lambda r: _pos(r, (2,) + B)),
    Case("poisson", "Poisson", lambda r: ((_pos(r, B, 0.5, 4.0),), {}),
         lambda r: r.integers(0, 6, (2,) + B).astype(np.float64)),
    Case("geometric_probs", "Geometric", lambda r: ((), {"probs": _unit(r, B)}),
         lambda r: r.integers(0, 5, (2,) + B).astype(np.float64)),
    Case("geometric_logits", "Geometric", lambda r: ((), {"logits": r.normal(size=B)}),
         lambda r: r.integers(0, 5, (2,) + B).astype(np.float64)),
    Case("bernoulli_probs", "Bernoulli", lambda r: ((), {"probs": _unit(r, B)}),
         lambda r: r.integers(0, 2, (2,) + B).astype(np.float64)),
    Case("bernoulli_logits", "Bernoulli", lambda r: ((), {"logits": r.normal(size=B)}),
         lambda r: r.integers(0, 2, (2,) + B).astype(np.float64)),
    Case("categorical_probs", "Categorical", lambda r: ((), {"probs": _pos(r, (2, 4))}),
         lambda r: r.integers(0, 4, (3, 2))),
    Case("categorical_logits", "Categorical", lambda r: ((), {"logits": r.normal(size=(2, 4))}),
         lambda r: r.integers(0, 4, (3, 2))),
    Case("onehot", "OneHotCategorical", lambda r: ((), {"logits": r.normal(size=(2, 4))}),
         lambda r: np.eye(4)[r.integers(0, 4, (3, 2))]),
    Case("binomial", "Binomial", lambda r: ((np.full(B, 6.0),), {"probs": _unit(r, B)}),
         lambda r: r.integers(0, 7, (2,) + B).astype(np.float64)),
    Case("binomial_logits", "Binomial", lambda r: ((np.full(B, 4.0),),
                                                   {"logits": r.normal(size=B)}),
         lambda r: r.integers(0, 5, (2,) + B).astype(np.float64)),
    Case("multinomial", "Multinomial", lambda r: ((5,), {"probs": _simplex(r, (2, 4))}),
         lambda r: r.multinomial(5, np.ones(4) / 4, size=(3, 2)).astype(np.float64)),
    Case("negative_binomial", "NegativeBinomial",
         lambda r: ((_pos(r, B, 1.0, 4.0),), {"probs": _unit(r, B)}),
         lambda r: r.integers(0, 6, (2,) + B).astype(np.float64)),
    Case("mvn_covariance", "MultivariateNormal",
         lambda r: ((r.normal(size=(2, 3)),), {"covariance_matrix": _cov(r, 3, (2,))}),
         lambda r: r.normal(size=(4, 2, 3))),
    Case("mvn_precision", "MultivariateNormal",
         lambda r: ((r.normal(size=(2, 3)),), {"precision_matrix": _cov(r, 3)}),
         lambda r: r.normal(size=(4, 2, 3))),
    Case("mvn_scale_tril", "MultivariateNormal",
         lambda r: ((r.normal(size=(3,)),),
                    {"scale_tril": np.linalg.cholesky(_cov(r, 3, (2,)))}),
         lambda r: r.normal(size=(4, 2, 3))),
    Case("lowrank_mvn", "LowRankMultivariateNormal",
         lambda r: ((r.normal(size=(2, 3)), r.normal(size=(2, 3, 2)), _pos(r, (2, 3))), {}),
         lambda r: r.normal(size=(4, 2, 3))),
    Case("relaxed_bernoulli", "RelaxedBernoulli",
         lambda r: ((np.array(0.7),), {"logits": r.normal(size=B)}),
         lambda r: _unit(r, (2,) + B)),
    Case("relaxed_onehot", "RelaxedOneHotCategorical",
         lambda r: ((np.array(0.7),), {"probs": _simplex(r, (2, 4))}),
         lambda r: _simplex(r, (3, 2, 4))),
    Case("continuous_bernoulli", "ContinuousBernoulli", lambda r: ((), {"probs": _unit(r, B)}),
         lambda r: _unit(r, (2,) + B)),
    Case("continuous_bernoulli_logits", "ContinuousBernoulli",
         lambda r: ((), {"logits": np.array([[-2.0, 0.001, 1.5], [0.7, -0.3, 3.0]])}),
         lambda r: _unit(r, (2,) + B)),
    Case("von_mises", "VonMises", lambda r: ((r.normal(size=B), _pos(r, B, 0.5, 6.0)), {}),
         lambda r: r.uniform(-3, 3, (2,) + B)),
    Case("gumbel", "Gumbel", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("pareto", "Pareto", lambda r: ((_pos(r, B), _pos(r, B, 2.5, 4.0)), {}),
         lambda r: _pos(r, (2,) + B, 2.0, 5.0)),
    Case("weibull", "Weibull", lambda r: ((_pos(r, B), _pos(r, B, 1.0, 3.0)), {}),
         lambda r: _pos(r, (2,) + B)),
    Case("kumaraswamy", "Kumaraswamy", lambda r: ((_pos(r, B, 1.0, 3.0), _pos(r, B, 1.0, 3.0)),
                                                  {}),
         lambda r: _unit(r, (2,) + B)),
    Case("logistic_normal", "LogisticNormal", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: _simplex(r, (3, 2, 4))),
    Case("fisher_snedecor", "FisherSnedecor", lambda r: ((_pos(r, B, 1.0, 5.0),
                                                          _pos(r, B, 5.0, 9.0)), {}),
         lambda r: _pos(r, (2,) + B)),
    # float32: torch's log_prob compares float64 parameters with a float32 zero and raises.
    Case("generalized_pareto", "GeneralizedPareto",
         lambda r: ((-_pos(r, B, 0.0, 1.0), _pos(r, B),
                     np.array([[0.3, 0.0, -0.1], [0.1, -0.2, 0.6]])), {}),
         lambda r: r.uniform(0.0, 0.5, (2,) + B), dtype="float32"),
    Case("lkj_cholesky", "LKJCholesky", lambda r: ((3, _pos(r, (2,), 0.5, 3.0)), {}),
         lambda r: _corr_cholesky(r, (2, 2), 3)),
    Case("wishart", "Wishart", lambda r: ((_pos(r, (2,), 4.0, 7.0),),
                                          {"covariance_matrix": _cov(r, 3, (2,))}),
         lambda r: _cov(r, 3, (2, 2))),
    Case("wishart_scale_tril", "Wishart",
         lambda r: ((5.5,), {"scale_tril": np.linalg.cholesky(_cov(r, 2))}),
         lambda r: _cov(r, 2, (2,))),
    Case("inverse_gamma", "InverseGamma", lambda r: ((_pos(r, B, 2.5, 4.0), _pos(r, B)), {}),
         lambda r: _pos(r, (2,) + B), missing=GAMMA_CDF),
]

# Distributions made of others: built by a function of the library's namespace and tensors.
COMPOSED = {
    "independent": lambda d, t: d.Independent(d.Normal(t[0], t[1]), 1),
    "mixture": lambda d, t: d.MixtureSameFamily(d.Categorical(logits=t[2]),
                                                d.Normal(t[0], t[1])),
    "tanh_normal": lambda d, t: d.TransformedDistribution(
        d.Normal(t[0], t[1]), [d.TanhTransform(), d.AffineTransform(0.5, 2.0)]),
}
CASES += [
    Case("independent", "independent", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: r.normal(size=(2,) + B)),
    Case("mixture", "mixture", lambda r: ((r.normal(size=B), _pos(r, B),
                                           r.normal(size=B)), {}),
         lambda r: r.normal(size=(4, 2))),
    Case("tanh_normal", "tanh_normal", lambda r: ((r.normal(size=B), _pos(r, B)), {}),
         lambda r: 0.5 + 2.0 * np.tanh(r.normal(size=(2,) + B))),
]


def namespace(lib):
    return autojit.distributions if lib is autojit else torch.distributions


def rng_for(case: Case) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case.id.encode()))


def tensor(lib, array, requires_grad=False, dtype="float64"):
    """A float64 (or int64) tensor of lib; numbers stay numbers."""
    if not isinstance(array, np.ndarray):
        return array
    dtype = getattr(lib, dtype) if array.dtype.kind == "f" else lib.int64
    result = lib.tensor(array, dtype=dtype)
    if requires_grad and array.dtype.kind == "f":
        result.requires_grad_(True)
    return result


def build(case: Case, lib, requires_grad: bool = False, validate_args=None):
    """(distribution, leaves): case's distribution in lib, and its tensor parameters."""
    args, kwargs = case.params(rng_for(case))
    args = [tensor(lib, a, requires_grad, case.dtype) for a in args]
    kwargs = {k: tensor(lib, v, requires_grad, case.dtype) for k, v in kwargs.items()}
    leaves = [t for t in [*args, *kwargs.values()] if hasattr(t, "requires_grad")
              and t.requires_grad]
    d = namespace(lib)
    if case.cls in COMPOSED:
        return COMPOSED[case.cls](d, args), leaves
    options = {} if validate_args is None else {"validate_args": validate_args}
    return getattr(d, case.cls)(*args, **kwargs, **options), leaves


def value(case: Case, lib):
    rng = rng_for(case)
    case.params(rng)
    return tensor(lib, case.value(rng), dtype=case.dtype)
