"""torch.special's functions that SciPy computes: the Bessel functions (j0, j1, y0, y1, the
modified i0, i1, k0, k1 and the scaled k0, k1, the spherical j0), airy_ai, the exponentially
scaled i0e and i1e, ndtri, log_ndtr, erfcx and the Hurwitz zeta.

Each is a primitive whose impl is the SciPy ufunc (Cephes, as torch's kernels are; log_ndtr
torch's formula over SciPy's erfcx and erfc, in the input's precision) and whose
lowering is the Extern "numpy_elementwise" of functions.py: a compiled plan runs the
impl between its fused kernels, and CUDA tensors run it on host copies. The gradients are
torch's formulas written in autojit ops (i0e -> i1e, i1e -> i0e, ndtri, log_ndtr and erfcx from
their own results), so they differentiate again; the functions torch gives no derivative are
not differentiable (their results do not require grad, as torch's do not).
docs/notes/special-functions.md.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..elementwise.math_primitives import no_forward_ad, tensor_argument
from ..out_argument import with_out
from ..registry import NOT_DIFFERENTIABLE, Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from .functions import NUMPY_ROUTINE


def _in_float(function):
    """A SciPy ufunc run on an array of the op's compute dtype, the result in that dtype."""
    def impl(x):
        with np.errstate(all="ignore"):
            return np.asarray(function(x)).astype(x.dtype, copy=False)

    return impl


def _unary(name, torch_name, function, derivative=None, saves=()):
    """A one-input special function; `derivative(x, out)` in autojit ops, or None for one torch
    does not differentiate."""
    if derivative is None:
        vjp, jvp = NOT_DIFFERENTIABLE, None
    else:
        def vjp(ctx, g):
            return (g * derivative(ctx.inputs[0] if 0 in saves else None,
                                   ctx.out if "out" in saves else None),)

        def jvp(inputs, tangents, out, attrs):
            return tangents[0] * derivative(inputs[0], out)
    op = define_op(name=name, arity=1, shape=lambda shape: shape, dtype=rule_float,
                   impl=_in_float(function), vjp=vjp, jvp=jvp, saves=saves,
                   lowering=Extern(NUMPY_ROUTINE, ("data",)), batch=batching.broadcasting_rule)

    def public(input):  # noqa: A002 - torch's names
        return bind(op, (tensor_argument(input, torch_name, "input", 1),), {})

    public.__name__ = public.__qualname__ = name.removeprefix("special_")
    return op, with_out(public, name=torch_name)


def _spherical_j0(x):
    return scipy.special.spherical_jn(0, x)


def _log_ndtr(x):
    """torch's calc_log_ndtr in x's own precision: log(erfcx(-t) / 2) - t^2 below -1, with
    t = x / sqrt(2), else log1p(-erfc(t) / 2). SciPy's log_ndtr computes a float32 x in float64,
    so its -t^2 differs from torch's for large |x|, and with it the gradient's
    exp(-(out + x^2 / 2)), which torch's rounding makes 0 or inf there (BoTorch's tests read
    those infinities)."""
    t = x * x.dtype.type(0.70710678118654752440)  # 1/sqrt(2) rounded once, as torch's
    half = x.dtype.type(2)
    with np.errstate(all="ignore"):
        return np.where(x < -1, np.log(scipy.special.erfcx(-t) / half) - t * t,
                        np.log1p(-scipy.special.erfc(t) / half))


def _airy_ai(x):
    return scipy.special.airy(x)[0]


_SQRT_2PI = math.sqrt(2 * math.pi)


def _i0e_derivative(x, out):
    # torch: i1e(x) - sgn(x) i0e(x)
    return i1e(x) - ew.sign(x) * out


def _i1e_derivative(x, out):
    # torch's i1e_backward: i0e(x) - (sgn(x) + 1/x) i1e(x), 1/2 where |x| is below the dtype's
    # epsilon (the limit of the 0/0 there); the divisor kept away from 0 meanwhile.
    epsilon = 2.0 ** -52 if x.dtype.itemsize == 8 else 2.0 ** -23
    not_tiny = ew.abs(x) > epsilon
    safe = ew.where(not_tiny, x, epsilon)
    return ew.where(not_tiny, i0e(safe) - (ew.sign(safe) + 1 / safe) * out, 0.5)


AIRY_AI, airy_ai = _unary("special_airy_ai", "special_airy_ai", _airy_ai)
BESSEL_J0, bessel_j0 = _unary("special_bessel_j0", "special_bessel_j0", scipy.special.j0)
BESSEL_J1, bessel_j1 = _unary("special_bessel_j1", "special_bessel_j1", scipy.special.j1)
BESSEL_Y0, bessel_y0 = _unary("special_bessel_y0", "special_bessel_y0", scipy.special.y0)
BESSEL_Y1, bessel_y1 = _unary("special_bessel_y1", "special_bessel_y1", scipy.special.y1)
MODIFIED_BESSEL_I0, modified_bessel_i0 = _unary(
    "special_modified_bessel_i0", "special_modified_bessel_i0", scipy.special.i0)
MODIFIED_BESSEL_I1, modified_bessel_i1 = _unary(
    "special_modified_bessel_i1", "special_modified_bessel_i1", scipy.special.i1)
MODIFIED_BESSEL_K0, modified_bessel_k0 = _unary(
    "special_modified_bessel_k0", "special_modified_bessel_k0", scipy.special.k0)
MODIFIED_BESSEL_K1, modified_bessel_k1 = _unary(
    "special_modified_bessel_k1", "special_modified_bessel_k1", scipy.special.k1)
SCALED_MODIFIED_BESSEL_K0, scaled_modified_bessel_k0 = _unary(
    "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k0", scipy.special.k0e)
SCALED_MODIFIED_BESSEL_K1, scaled_modified_bessel_k1 = _unary(
    "special_scaled_modified_bessel_k1", "special_scaled_modified_bessel_k1", scipy.special.k1e)
SPHERICAL_BESSEL_J0, spherical_bessel_j0 = _unary(
    "special_spherical_bessel_j0", "special_spherical_bessel_j0", _spherical_j0)
I0E, i0e = _unary("special_i0e", "special_i0e", scipy.special.i0e, _i0e_derivative, (0, "out"))
I1E, i1e = _unary("special_i1e", "special_i1e", scipy.special.i1e, _i1e_derivative, (0, "out"))
NDTRI, ndtri = _unary("special_ndtri", "special_ndtri", scipy.special.ndtri,
                      lambda x, out: _SQRT_2PI * ew.exp(out * out / 2), ("out",))
LOG_NDTR, log_ndtr = _unary(
    "special_log_ndtr", "special_log_ndtr", _log_ndtr,
    lambda x, out: ew.exp(-(out + x * x / 2)) / _SQRT_2PI, (0, "out"))
ERFCX, erfcx = _unary("special_erfcx", "special_erfcx", scipy.special.erfcx,
                      lambda x, out: 2 * x * out - 2 / math.sqrt(math.pi), (0, "out"))


# ---- zeta -------------------------------------------------------------------------------------

def _zeta_impl(x, q):
    # SciPy's zeta(x, q) is Cephes', torch's: inf at x = 1, NaN below, inf at the non-positive
    # integers q, NaN at other negative q unless x is an integer.
    with np.errstate(all="ignore"):
        return np.asarray(scipy.special.zeta(x, q)).astype(np.result_type(x, q), copy=False)


def _zeta_vjp(ctx, g):
    x, q = ctx.inputs
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    return None, g * -x * zeta(x + 1.0, q)


def _zeta_jvp(inputs, tangents, out, attrs):
    x, q = inputs
    if tangents[0] is not None:
        raise no_forward_ad("special_zeta")
    return None if tangents[1] is None else tangents[1] * -x * zeta(x + 1.0, q)


ZETA = define_op(name="special_zeta", arity=2, shape=broadcast_shapes, dtype=rule_float,
                 impl=_zeta_impl, vjp=_zeta_vjp, jvp=_zeta_jvp, saves=(0, 1),
                 lowering=Extern(NUMPY_ROUTINE, ("data", "data")),
                 batch=batching.broadcasting_rule)


def _zeta(input, other):  # noqa: A002 - torch's names
    """Elementwise Hurwitz zeta: sum over k >= 0 of (q + k)^-x; either may be a number."""
    x, q = ew.operand(input, "special_zeta"), ew.operand(other, "special_zeta")
    if not isinstance(x, ew.Tensor) and not isinstance(q, ew.Tensor):
        raise TypeError(f"zeta(): expected a Tensor argument, got {type(x).__name__} and "
                        f"{type(q).__name__}")
    return bind(ZETA, (x, q), {})


_zeta.__name__ = _zeta.__qualname__ = "zeta"
zeta = with_out(_zeta, name="special_zeta")
