"""Binary elementwise primitives run through NumPy and SciPy: gcd and lcm of integers, and the
regularized incomplete gamma functions igamma (P(a, x)) and igammac (Q(a, x) = 1 - P(a, x)).

None has a formula in the kernels' expression language, so, like functions.py's, their
lowering is an Extern call of the NumPy routine: a compiled CPU plan runs the node through its
impl between fused kernels, and the CUDA runtime runs it on host copies
(docs/notes/special-functions.md). gcd and lcm are not differentiable (integers); igamma and
igammac are differentiable in x with torch's formula, `+-exp((a - 1) log x - x - lgamma(a))`,
written in autojit ops so that it differentiates again, and, as in torch, not in a.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from .. import batching
from ..dtype_rules import promoted_dtype
from ..elementwise.math_primitives import no_forward_ad, not_implemented, tensor_argument
from ..registry import NOT_DIFFERENTIABLE, Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from .functions import NUMPY_ROUTINE, lgamma


def _integer_rule(kernel: str):
    def rule(inputs, attrs):
        dtype = promoted_dtype(inputs)
        if dtype.category != dtypes.INTEGER:
            raise not_implemented(kernel, dtype)
        return dtype, dtype

    return rule


def _floating_rule(kernel: str):
    def rule(inputs, attrs):
        dtype = promoted_dtype(inputs)
        if not dtype.is_floating_point:
            raise not_implemented(kernel, dtype)
        return dtype, dtype

    return rule


def _define(name, dtype, impl, vjp=NOT_DIFFERENTIABLE, jvp=None, saves=()):
    return define_op(name=name, arity=2, shape=broadcast_shapes, dtype=dtype, impl=impl,
                     vjp=vjp, jvp=jvp, saves=saves, lowering=Extern(NUMPY_ROUTINE, ("data",
                                                                                  "data")),
                     batch=batching.broadcasting_rule)


GCD = _define("gcd", _integer_rule("gcd_cpu"), np.gcd)
LCM = _define("lcm", _integer_rule("lcm_cpu"), np.lcm)


def _density(a, x):
    """d/dx P(a, x): the gamma distribution's density, torch's igamma_grad."""
    return (((a - 1) * x.log()) - x - lgamma(a)).exp()


def _not_in_a(name: str):
    return NotImplementedError(f"the derivative for '{name}: input' is not implemented.")


def _incomplete_gamma(name, impl, sign):
    def vjp(ctx, g):
        a, x = ctx.inputs
        if ctx.needs_input_grad[0]:
            raise _not_in_a(name)
        return None, g * (sign * _density(a, x))

    def jvp(inputs, tangents, out, attrs):
        a, x = inputs
        if tangents[0] is not None:
            raise no_forward_ad(name)
        return None if tangents[1] is None else tangents[1] * (sign * _density(a, x))

    return _define(name, _floating_rule(f"{name}_cpu"), impl, vjp, jvp, saves=(0, 1))


def _cast_like(function_name: str):
    """SciPy's special function in the inputs' dtype (it computes float16 in float32)."""
    def impl(a, x):
        from scipy import special  # on first use: SciPy costs `import autojit` 0.1 s or more

        return getattr(special, function_name)(a, x).astype(np.result_type(a, x), copy=False)

    return impl


IGAMMA = _incomplete_gamma("igamma", _cast_like("gammainc"), 1)
IGAMMAC = _incomplete_gamma("igammac", _cast_like("gammaincc"), -1)


def _binary(op, doc):
    def function(input, other):  # noqa: A002 - torch's names
        x = tensor_argument(input, op.name, "input", 1)
        y = tensor_argument(other, op.name, "other", 2)
        return bind(op, (x, y), {})

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = doc
    return function


gcd = _binary(GCD, "Elementwise greatest common divisor of integers, non-negative (0 for "
                   "gcd(0, 0)).")
lcm = _binary(LCM, "Elementwise least common multiple of integers, non-negative (0 where "
                   "either is 0).")
igamma = _binary(IGAMMA, "Elementwise regularized lower incomplete gamma function P(a, x), "
                         "differentiable in x.")
igammac = _binary(IGAMMAC, "Elementwise regularized upper incomplete gamma function "
                           "Q(a, x) = 1 - P(a, x), differentiable in x.")
