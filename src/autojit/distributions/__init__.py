"""autojit.distributions: torch.distributions' probability distributions, written in autojit
ops, so that log_prob, entropy, rsample and kl_divergence are differentiable (twice) and trace
into compiled training steps (REINFORCE, PPO, SAC, VAEs).

It sits beside nn/optim/utils, on the public ops of the layers below, and draws its random
numbers from autojit's generators (autojit.manual_seed), so a seed gives other numbers than
torch's. This package holds what the distributions share: the base classes (distribution.py,
exp_family.py), the helpers (utils.py), supports and bijections (constraints.py,
transforms.py and transforms_structured.py, constraint_registry.py mapping one to the other)
and kl_divergence (kl.py, kl_pairs.py). The distributions themselves, one module per
distribution as torch has them, are grouped into subpackages: continuous/ (univariate
densities), discrete/ (counts and categories), multivariate/ (vectors and matrices) and
derived/ (distributions made from another: transformed, independent, mixed).

torch's module paths keep working (`from autojit.distributions.normal import Normal`, and
`torch.distributions.normal` under the drop-in): _TORCH_MODULES below is the table of
torch.distributions' modules by the subpackage that holds each here, and each one in a
subpackage is entered in sys.modules and as this package's attribute under torch's path, the
same module object (an import, importlib.import_module, attribute access and a pickle naming
the path all find it). See docs/distributions.md.
"""

import importlib as _importlib
import sys as _sys

from . import constraints, transforms  # noqa: F401 - torch.distributions.constraints
from .constraint_registry import biject_to, transform_to
from .continuous.beta import Beta
from .continuous.cauchy import Cauchy
from .continuous.chi2 import Chi2
from .continuous.continuous_bernoulli import ContinuousBernoulli
from .continuous.exponential import Exponential
from .continuous.fishersnedecor import FisherSnedecor
from .continuous.gamma import Gamma
from .continuous.generalized_pareto import GeneralizedPareto
from .continuous.laplace import Laplace
from .continuous.normal import Normal
from .continuous.studentT import StudentT
from .continuous.uniform import Uniform
from .continuous.von_mises import VonMises
from .derived.gumbel import Gumbel
from .derived.half_cauchy import HalfCauchy
from .derived.half_normal import HalfNormal
from .derived.independent import Independent
from .derived.inverse_gamma import InverseGamma
from .derived.kumaraswamy import Kumaraswamy
from .derived.log_normal import LogNormal
from .derived.logistic_normal import LogisticNormal
from .derived.mixture_same_family import MixtureSameFamily
from .derived.pareto import Pareto
from .derived.relaxed_bernoulli import RelaxedBernoulli
from .derived.relaxed_categorical import RelaxedOneHotCategorical
from .derived.transformed_distribution import TransformedDistribution
from .derived.weibull import Weibull
from .discrete.bernoulli import Bernoulli
from .discrete.binomial import Binomial
from .discrete.categorical import Categorical
from .discrete.geometric import Geometric
from .discrete.multinomial import Multinomial
from .discrete.negative_binomial import NegativeBinomial
from .discrete.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .discrete.poisson import Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .kl import kl_divergence, register_kl
from .multivariate.dirichlet import Dirichlet
from .multivariate.lkj_cholesky import LKJCholesky
from .multivariate.lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate.multivariate_normal import MultivariateNormal
from .multivariate.wishart import Wishart
from .transforms import *  # noqa: F403 - torch.distributions re-exports its transforms

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
    "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Poisson", "Uniform",
    "VonMises", "Weibull", "Wishart", "TransformedDistribution", "biject_to", "kl_divergence",
    "register_kl", "transform_to",
    *transforms.__all__,
]

# torch.distributions' modules (torch 2.13), by the subpackage that holds each here ("": this
# package itself).
_TORCH_MODULES = {
    "": ("constraint_registry", "constraints", "distribution", "exp_family", "kl", "transforms",
         "utils"),
    "continuous": ("beta", "cauchy", "chi2", "continuous_bernoulli", "exponential",
                   "fishersnedecor", "gamma", "generalized_pareto", "laplace", "normal",
                   "studentT", "uniform", "von_mises"),
    "discrete": ("bernoulli", "binomial", "categorical", "geometric", "multinomial",
                 "negative_binomial", "one_hot_categorical", "poisson"),
    "multivariate": ("dirichlet", "lkj_cholesky", "lowrank_multivariate_normal",
                     "multivariate_normal", "wishart"),
    "derived": ("gumbel", "half_cauchy", "half_normal", "independent", "inverse_gamma",
                "kumaraswamy", "log_normal", "logistic_normal", "mixture_same_family", "pareto",
                "relaxed_bernoulli", "relaxed_categorical", "transformed_distribution",
                "weibull"),
}


def _enter_torch_paths() -> None:
    """Enter each module of a subpackage under torch's path, `autojit.distributions.normal` for
    `autojit.distributions.continuous.normal`: in sys.modules, where the import system looks
    first once this package is loaded, and as this package's attribute."""
    for group, names in _TORCH_MODULES.items():
        for name in names if group else ():
            module = _importlib.import_module(f"{__name__}.{group}.{name}")
            _sys.modules.setdefault(f"{__name__}.{name}", module)
            globals()[name] = module


_enter_torch_paths()
