"""MixtureSameFamily: a mixture of components of one family, chosen by a Categorical; the
rightmost batch dim of the component distribution indexes the components."""

from __future__ import annotations

from ...autograd import no_grad
from ...ops import functional as F
from ...ops.nn.softmax import log_softmax
from ...tensor.tensor import Size
from .. import constraints
from ..discrete.categorical import Categorical
from ..distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """p(x) = sum_k pi_k p_k(x), pi the `mixture_distribution`'s probabilities and p_k the
    components of `component_distribution` (batch shape (..., K))."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "autojit.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "autojit.distributions.Distribution")
        mixture_batch = mixture_distribution.batch_shape
        component_batch = Size(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                                 "compatible with `component_distribution.batch_shape`"
                                 f"({component_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=component_batch, event_shape=event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # The law of total variance: E[Var(Y | X)] + Var(E[Y | X]).
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_of_variances = (probs * self.component_distribution.variance).sum(dim)
        spread = (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)
        return mean_of_variances + (probs * spread).sum(dim)

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            x = self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = log_softmax(self.mixture_distribution.logits, -1)
        return F.logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape=()):
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            event_shape = tuple(self.event_shape)
            choice = self.mixture_distribution.sample(sample_shape)
            components = self.component_distribution.sample(sample_shape)
            index = choice.reshape(tuple(choice.shape) + (1,) * (len(event_shape) + 1))
            index = index.repeat(*((1,) * choice.dim() + (1,) + event_shape))
            return components.gather(gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad_ndims + shape[-1:]
                         + (1,) * self._event_ndims)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  "
                f"{self.component_distribution})")
