"""ExponentialFamily: the base of the distributions whose density is
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)), theta the natural parameters, F the log
normalizer and k the carrier measure.

Its entropy, and the KL divergence between two members of one family (kl.py, a Bregman
divergence of F), come from F's gradient, taken by autograd with create_graph, so both are
differentiable again and trace like any other gradient.
"""

from __future__ import annotations

from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family. Subclasses give `_natural_params`,
    `_log_normalizer(*natural_params)` and `_mean_carrier_measure` (E[k(x)])."""

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters theta, as a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """F(theta), of shape batch_shape."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[k(x)] (a number or a tensor)."""
        raise NotImplementedError

    def entropy(self):
        """-E[k(x)] + F(theta) - <theta, grad F(theta)>: the entropy through the Bregman
        divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        natural = [p.detach().requires_grad_() for p in self._natural_params]
        normalizer = self._log_normalizer(*natural)
        gradients = grad(normalizer.sum(), natural, create_graph=True)
        result = result + normalizer
        for parameter, gradient in zip(natural, gradients):
            result = result - (parameter * gradient).reshape(
                tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
