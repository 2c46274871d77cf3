"""Op table rows for torch.special's functions of ops/special/scipy_impls.py (the Bessel functions,
airy_ai, i0e, i1e, ndtri, log_ndtr, erfcx, zeta) and ops/special/polynomials.py (the
orthogonal polynomials), against SciPy.

The polynomials' references are SciPy's eval_* at integer degrees 0 to 9, where torch's
recurrences (which the impls follow) agree with them to rounding; tests/test_opinfo.py checks
the impls against torch itself, negative and non-integer degrees included.
"""

from __future__ import annotations

import numpy as np
import scipy.special

import autojit

from . import OpInfo, Sample, uniform
from .elementwise import unary_samples
from .elementwise_math import INTEGER_AND_FLOAT, in_float


def _special(name, reference, low, high, differentiable=False, dtypes=INTEGER_AND_FLOAT,
             **options):
    return OpInfo(name=f"special.{name}", function=getattr(autojit.special, name),
                  reference=in_float(reference),
                  samples=unary_samples(lambda rng, shape, dtype: uniform(rng, shape, dtype,
                                                                          low, high)),
                  primitives=(f"special_{name}",), dtypes=dtypes,
                  differentiable=differentiable, **options)


def _zeta_samples(rng, dtype):
    x, q = uniform(rng, (3, 4), dtype, 1.5, 4.0), uniform(rng, (3, 4), dtype, 0.5, 3.0)
    return [Sample((x, q)), Sample((x[0], q)), Sample((2.5, q)), Sample((x, 1.5))]


def _polynomial_samples(low, high):
    def samples(rng, dtype):
        x = uniform(rng, (3, 10), dtype, low, high)
        n = np.arange(10, dtype=np.int64)
        return [Sample((x, n)), Sample((x, 4)), Sample((x[0, 0], n))]

    return samples


def _polynomial(name, reference, low=-1.0, high=1.0):
    def evaluate(x, n):
        return reference(np.asarray(n).astype(np.int64), x)

    return OpInfo(name=f"special.{name}", function=getattr(autojit.special, name),
                  reference=in_float(evaluate), samples=_polynomial_samples(low, high),
                  primitives=(f"special_{name}",), differentiable=False, rtol=1e-3)


def _shifted(evaluate):
    return lambda n, x: evaluate(n, 2 * x - 1)


def _chebyshev_v(n, x):
    # V_n(x) = (T_{n+1}(x)... ) in closed form: cos((n + 1/2) t) / cos(t / 2), x = cos t
    t = np.arccos(x)
    return np.cos((n + 0.5) * t) / np.cos(t / 2)


def _chebyshev_w(n, x):
    t = np.arccos(x)
    return np.sin((n + 0.5) * t) / np.sin(t / 2)


ROWS = [
    _special("airy_ai", lambda x: scipy.special.airy(x)[0], -5, 5),
    _special("bessel_j0", scipy.special.j0, -10, 10),
    _special("bessel_j1", scipy.special.j1, -10, 10),
    _special("bessel_y0", scipy.special.y0, 0.1, 10),
    _special("bessel_y1", scipy.special.y1, 0.1, 10),
    _special("modified_bessel_i0", scipy.special.i0, -10, 10),
    _special("modified_bessel_i1", scipy.special.i1, -10, 10),
    _special("modified_bessel_k0", scipy.special.k0, 0.1, 10),
    _special("modified_bessel_k1", scipy.special.k1, 0.1, 10),
    _special("scaled_modified_bessel_k0", scipy.special.k0e, 0.1, 10),
    _special("scaled_modified_bessel_k1", scipy.special.k1e, 0.1, 10),
    _special("spherical_bessel_j0", lambda x: scipy.special.spherical_jn(0, x), -10, 10),
    _special("i0e", scipy.special.i0e, -10, 10, differentiable=True),
    _special("i1e", scipy.special.i1e, -10, 10, differentiable=True),
    _special("ndtri", scipy.special.ndtri, 0.05, 0.95, differentiable=True,
             dtypes=("float32", "float64")),
    _special("log_ndtr", scipy.special.log_ndtr, -5, 5, differentiable=True),
    _special("erfcx", scipy.special.erfcx, -2, 5, differentiable=True),
    OpInfo(name="special.zeta", function=autojit.special.zeta,
           reference=in_float(scipy.special.zeta), samples=_zeta_samples,
           primitives=("special_zeta",), grad_inputs=(1,)),
    _polynomial("chebyshev_polynomial_t", scipy.special.eval_chebyt),
    _polynomial("chebyshev_polynomial_u", scipy.special.eval_chebyu),
    _polynomial("chebyshev_polynomial_v", _chebyshev_v, -0.95, 0.95),
    _polynomial("chebyshev_polynomial_w", _chebyshev_w, -0.95, 0.95),
    _polynomial("shifted_chebyshev_polynomial_t", scipy.special.eval_sh_chebyt, 0, 1),
    _polynomial("shifted_chebyshev_polynomial_u", scipy.special.eval_sh_chebyu, 0, 1),
    _polynomial("shifted_chebyshev_polynomial_v", _shifted(_chebyshev_v), 0.03, 0.97),
    _polynomial("shifted_chebyshev_polynomial_w", _shifted(_chebyshev_w), 0.03, 0.97),
    _polynomial("hermite_polynomial_h", scipy.special.eval_hermite, -2, 2),
    _polynomial("hermite_polynomial_he", scipy.special.eval_hermitenorm, -2, 2),
    _polynomial("laguerre_polynomial_l", scipy.special.eval_laguerre, 0, 3),
    _polynomial("legendre_polynomial_p", scipy.special.eval_legendre, -1, 1),
]
