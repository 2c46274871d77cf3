"""Op table rows for the special functions of ops/special/functions.py: erfinv, lgamma,
digamma, polygamma, i0, special.i1 and mvlgamma (a sum of lgammas).

Their lowering runs the NumPy impl on every backend, so the compiled and CUDA drivers check
that such a node runs inside a compiled plan between fused kernels, gradients included. The
references are SciPy's (the test extra installs it with scikit-learn). Samples keep away from
the poles of lgamma, digamma and polygamma (0 and the negative integers) and from erfinv's
+-1; tests/special_points_math.py has torch's values there.
"""

from __future__ import annotations

import numpy as np
import scipy.special

import autojit

from . import OpInfo, Sample, uniform
from .elementwise import unary_samples
from .elementwise_math import INTEGER_AND_FLOAT, in_float


def _off_poles(rng, shape, dtype):
    """Values in (-3, 6) at least 0.2 from the poles at 0, -1, -2 (integers: 1 to 5)."""
    if np.dtype(dtype).kind in "iu":
        return uniform(rng, shape, dtype, 1, 6)
    whole = rng.integers(-3, 6, size=shape)
    fraction = rng.uniform(0.2, 0.8, size=shape)
    return np.asarray(np.where(whole < 0, whole + fraction, whole + 0.5 + fraction), dtype=dtype)


def _polygamma_samples(rng, dtype):
    return [Sample((n, _off_poles(rng, (3, 4), dtype))) for n in (0, 1, 2, 3)]


def _mvlgamma_samples(rng, dtype):
    # above (p - 1) / 2, where every lgamma of the sum is away from its poles
    return [Sample((uniform(rng, (3, 4), dtype, 1.6, 6.0), p)) for p in (1, 2, 4)]


def _mvlgamma(x, p):
    return (sum(scipy.special.gammaln(x - j / 2) for j in range(p))
            + p * (p - 1) / 4 * np.log(np.pi))


def special(name, reference, values, function=None, dtypes=INTEGER_AND_FLOAT, **options):
    return OpInfo(name=name, function=function or getattr(autojit, name),
                  reference=in_float(reference), samples=unary_samples(values),
                  primitives=(name.rsplit(".", 1)[-1],), dtypes=dtypes, **options)


ROWS = [
    special("erfinv", scipy.special.erfinv,
            lambda rng, shape, dtype: uniform(rng, shape, dtype, -0.95, 0.95), dtypes=("float32",
                                                                                       "float64")),
    special("lgamma", scipy.special.gammaln, _off_poles),
    special("digamma", scipy.special.digamma, _off_poles),
    OpInfo(name="polygamma", function=autojit.polygamma,
           reference=lambda n, x: in_float(lambda x: scipy.special.polygamma(n, x))(x),
           samples=_polygamma_samples, primitives=("polygamma",), dtypes=INTEGER_AND_FLOAT,
           grad_inputs=(1,)),
    special("i0", scipy.special.i0, lambda rng, shape, dtype: uniform(rng, shape, dtype, -9, 9)),
    special("special.i1", scipy.special.i1,
            lambda rng, shape, dtype: uniform(rng, shape, dtype, -25, 25),
            function=autojit.special.i1),
    OpInfo(name="mvlgamma", function=autojit.mvlgamma, reference=in_float(_mvlgamma),
           samples=_mvlgamma_samples, primitives=("lgamma", "add"), dtypes=INTEGER_AND_FLOAT,
           grad_inputs=(0,)),
]
