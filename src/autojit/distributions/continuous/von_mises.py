"""VonMises: the von Mises distribution on the circle, of mean direction `loc` and
concentration `concentration`; sampled by Best and Fisher's rejection method (a loop whose
length depends on the draws, so a compiled function that samples it runs eagerly)."""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...ops import functional as F
from ...tensor import dtypes
from ...tensor.creation import rand, zeros
from ...tensor.tensor import Size
from .. import constraints
from ..distribution import Distribution
from ..utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz and Stegun
# 9.8.1-9.8.4): in (x / 3.75)^2 below 3.75, and of exp(-x) sqrt(x) I(x) in 3.75 / x above.
_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2)
_I0_LARGE = (0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
             -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3)
_I1_LARGE = (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
             0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2)


def _eval_poly(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1, x > 0."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, (_I0_SMALL, _I1_SMALL)[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, (_I0_LARGE, _I1_LARGE)[order]).log()
    return F.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    done = zeros(tuple(x.shape), dtype=dtypes.bool_, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = F.where(accept, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution: density exp(k cos(x - loc)) / (2 pi I0(k))."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            value = self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(dtypes.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(dtypes.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        # Second order around kappa = 0, where the exact form loses all precision.
        return F.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            x = zeros(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(tuple(batch_shape)),
                              self.concentration.expand(tuple(batch_shape)),
                              validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
