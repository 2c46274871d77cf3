"""Special points of the math ops (ops/elementwise/math_primitives.py, math_composites.py,
special_functions.py, products.py, masks.py), rows of tests/test_grad_special_points.py.

Domain edges (asin and acos at +-1, atanh at +-1, acosh at 1, logit at 0 and 1, erfinv at
+-1, lgamma, digamma and polygamma at their poles), the points a formula masks (sinc,
xlogy, xlog1py and entr at 0, copysign of a zero, hypot and atan2 at the origin, cdist at a
zero distance, cosine_similarity of a zero vector), ties (logaddexp of equal values, aminmax), the
branches of the piecewise composites (sinh and asinh at their thresholds) and infinities.
"""

from __future__ import annotations

import numpy as np
from special_points import INF, NAN, Difference, Point, unary

# torch's trigamma (lgamma's second derivative) at a negative integer is finite, 1e32 or so:
# its reflection formula divides by sin(pi x) squared, which rounds to a tiny nonzero value;
# autojit's is inf, the pole (docs/differences.md).
TRIGAMMA_AT_NEGATIVE_INTEGERS = {"d2/d0": Difference(
    "torch's trigamma at a negative integer is finite (sin(pi x) rounds to nonzero), autojit's "
    "inf", lambda torch: np.where(np.abs(torch) > 1e30, np.inf, torch))}


def second_derivative_nan_at(*positions):
    """Where torch's second derivative is NaN (its formula's 0/0 or inf * 0) and autojit's
    composite gives 0, the limit of the function it computes."""
    def autojit(torch):
        result = np.array(torch, dtype=np.float64)
        result[list(positions)] = 0.0
        return result

    return {"d2/d0": Difference("torch's second derivative is NaN here, autojit's 0", autojit)}

MATH = [
    unary("trunc", lambda lib, x: lib.trunc(x), [0.0, -0.5, 1.5, -2.0, INF, NAN]),
    unary("ceil", lambda lib, x: lib.ceil(x), [0.0, -0.5, 1.5, -2.0, INF, NAN]),
    unary("frac", lambda lib, x: lib.frac(x), [0.0, -0.5, 1.5, -2.0, INF, NAN]),
    Point("copysign", lambda lib, x, y: lib.copysign(x, y),
          ([0.0, -0.0, 1.5, -1.5, 0.0, INF, NAN], [-1.0, 1.0, -0.0, 2.0, NAN, -1.0, 1.0])),
    Point("fmod", lambda lib, x, y: lib.fmod(x, y),
          ([4.0, -3.0, 3.0, 0.0, 5.0, INF, 1.0], [2.0, 2.0, -2.0, 2.0, INF, 2.0, 0.0])),
    unary("asin", lambda lib, x: lib.asin(x), [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, NAN]),
    unary("acos", lambda lib, x: lib.acos(x), [0.0, 1.0, -1.0, 0.5, -2.0, NAN]),
    unary("atan", lambda lib, x: lib.atan(x), [0.0, -0.0, 1.0, INF, -INF, NAN]),
    Point("atan2", lambda lib, y, x: lib.atan2(y, x),
          ([0.0, 0.0, -0.0, 1.0, INF, 1.0, INF, NAN], [0.0, -0.0, -1.0, 0.0, 1.0, INF, INF,
                                                          1.0])),
    Point("hypot", lambda lib, x, y: lib.hypot(x, y),
          ([0.0, 3.0, 0.0, INF, NAN, 1e300], [0.0, 4.0, -2.0, NAN, 1.0, 1e300])),
    unary("erfc", lambda lib, x: lib.erfc(x), [0.0, 0.5, -0.5, 30.0, -30.0, INF, -INF, NAN]),
    Point("logaddexp", lambda lib, x, y: lib.logaddexp(x, y),
          ([0.0, 1.0, INF, -INF, INF, 800.0, NAN], [0.0, 1.0, INF, -INF, -INF, -800.0, 1.0])),
    Point("logaddexp2", lambda lib, x, y: lib.logaddexp2(x, y),
          ([0.0, 2.0, INF, -INF, 3000.0], [0.0, 2.0, INF, -INF, 0.0])),
    Point("xlogy", lambda lib, x, y: lib.xlogy(x, y),
          ([0.0, 0.0, 0.0, 2.0, 1.0, 0.0, -1.0], [0.0, 2.0, NAN, 0.0, INF, -1.0, 3.0])),
    unary("xlogy_scalar", lambda lib, y: lib.xlogy(0.0, y), [0.0, 2.0, NAN]),
    Point("special_xlog1py", lambda lib, x, y: lib.special.xlog1py(x, y),
          ([0.0, 0.0, 0.0, 1.0, 2.0, 0.0, -1.0, 3.0], [-1.0, -2.0, NAN, -1.0, INF, 0.0, 3.0,
                                                       -0.5])),
    unary("special_entr", lambda lib, x: lib.special.entr(x),
          [0.0, -0.0, -1.0, 0.5, 1.0, 1e-310, INF, -INF, NAN]),
    unary("logit", lambda lib, x: lib.logit(x), [0.0, 1.0, 0.5, -0.5, 1.5, NAN]),
    # outside [eps, 1 - eps] logit is constant; torch divides by x (1 - x) at 0 and 1
    Point("logit_eps", lambda lib, x: lib.logit(x, eps=0.25), ([0.0, 0.25, 0.5, 0.75, 1.0],),
          differs=second_derivative_nan_at(0, 4)),
    # sinh(+-710) is finite; torch's AVX2 loop overflows to +-inf there (its scalar one not).
    unary("sinh", lambda lib, x: lib.sinh(x), [0.0, -0.0, 1.0, -1.0, 710.0, -710.0, INF, NAN],
          torch_one_element=True),
    unary("cosh", lambda lib, x: lib.cosh(x), [0.0, -0.0, 1.0, 710.0, -710.0, INF, NAN]),
    # at inf torch's -x (x*x + 1)**-1.5 is -inf * 0
    Point("asinh", lambda lib, x: lib.asinh(x), ([0.0, -0.0, 2.0 ** 28, -1e300, INF, NAN],),
          differs=second_derivative_nan_at(4)),
    unary("acosh", lambda lib, x: lib.acosh(x), [1.0, 2.0 ** 28, 0.5, 1e300, INF, NAN]),
    unary("atanh", lambda lib, x: lib.atanh(x), [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, NAN]),
    # at 0 torch masks its first derivative's 0/0, which its second derivative divides again
    Point("sinc", lambda lib, x: lib.sinc(x), ([0.0, -0.0, 1.0, 0.5, INF, NAN],),
          differs=second_derivative_nan_at(0, 1)),
    unary("deg2rad", lambda lib, x: lib.deg2rad(x), [0.0, 180.0, INF]),
    Point("lerp", lambda lib, x, y: lib.lerp(x, y, 0.5), ([0.0, INF, 1.0], [1.0, INF, NAN])),
    Point("lerp_tensor_weight", lambda lib, x, y, w: lib.lerp(x, y, w),
          ([0.0, 1.0, INF, 2.0], [1.0, 3.0, 1.0, 2.0], [0.5, 0.0, 1.0, NAN])),
    Point("addcdiv", lambda lib, x, y, z: lib.addcdiv(x, y, z, value=2.0),
          ([0.0, 1.0, 1.0], [1.0, 0.0, INF], [0.0, 0.0, 2.0])),
    unary("erfinv", lambda lib, x: lib.erfinv(x), [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, NAN]),
    Point("lgamma", lambda lib, x: lib.lgamma(x), ([1.0, 2.0, 0.5, -0.5, 0.0, -1.0, INF],),
          differs=TRIGAMMA_AT_NEGATIVE_INTEGERS),
    unary("digamma", lambda lib, x: lib.digamma(x), [1.0, 0.5, -0.5, 1.4616321449683622]),
    Point("lgamma_poles", lambda lib, x: lib.lgamma(x), ([0.0, -2.0],),
          differs=TRIGAMMA_AT_NEGATIVE_INTEGERS),
    unary("polygamma_2", lambda lib, x: lib.polygamma(2, x), [1.0, 0.5, -0.5, 20.0]),
    unary("i0", lambda lib, x: lib.i0(x), [0.0, -0.0, 1.0, -3.0, 30.0]),
    unary("special_i1", lambda lib, x: lib.special.i1(x), [0.0, -0.0, 1e-20, 1.0, -3.0, 30.0]),
    unary("nan_to_num", lambda lib, x: lib.nan_to_num(x), [NAN, INF, -INF, 1.0]),
    unary("nansum", lambda lib, x: lib.nansum(x), [NAN, INF, 1.0]),
    unary("nanmean", lambda lib, x: lib.nanmean(x), [NAN, 2.0, 1.0]),
    unary("clamp_min", lambda lib, x: lib.clamp_min(x, 0.5), [0.5, 0.0, 1.0, NAN]),
    unary("clamp_max", lambda lib, x: lib.clamp_max(x, 0.5), [0.5, 0.0, 1.0, NAN]),
    unary("aminmax_ties", lambda lib, x: lib.stack(lib.aminmax(x)),
          [1.0, 3.0, 3.0, 1.0, 2.0]),
    Point("cross", lambda lib, x, y: lib.cross(x, y, dim=0), ([1.0, 0.0, INF], [0.0, 1.0, 0.0])),
    Point("kron", lambda lib, x, y: lib.kron(x, y), ([0.0, INF], [1.0, 0.0])),
    unary("softmax", lambda lib, x: lib.softmax(x, 0), [-INF, 0.0, 1.0]),
    unary("log_softmax", lambda lib, x: x.log_softmax(0), [-INF, 0.0, 1.0]),
]
