"""Special functions run through their NumPy impls: erfinv, lgamma, digamma, polygamma, i0
and i1; mvlgamma, a sum of lgammas.

No accurate vectorizable kernel for these is written yet, so their lowering is an Extern call
of the routine "numpy_elementwise", which no backend implements: a compiled CPU plan runs
such a node through the op's NumPy impl (codegen/schedule/steps.py, as the reference
interpreter does), between the fused kernels before and after it, and on CUDA tensors the
runtime runs it on host copies of the inputs and copies the result back (cuda/eager.py, with
one HostFallbackWarning per op). Correct everywhere, not fast: docs/notes/special-functions.md.
The impls are in numpy_impls.py; the VJPs are torch's formulas, in autojit ops, so each
differentiates again (lgamma -> digamma -> polygamma(1) -> polygamma(2) ..., i0 -> i1), and
the JVPs the same formulas applied to the tangent.
"""

from __future__ import annotations

import math

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..elementwise.math_primitives import tensor_argument
from ..registry import Extern, bind, define_op
from . import numpy_impls as special_numpy

# The routine of an elementwise op that runs through its NumPy impl on every backend.
NUMPY_ROUTINE = "numpy_elementwise"


def _define(name, impl, derivative, saves, shape=lambda shape: shape):
    """A special function of one input whose VJP and JVP multiply the (co)tangent by
    derivative(x, out, attrs); `saves` says which of x and out it reads."""
    reads_out = "out" in saves  # the node keeps its output only when told to

    def vjp(ctx, g):
        return (g * derivative(ctx.inputs[0], ctx.out if reads_out else None, ctx.attrs),)

    return define_op(
        name=name, arity=1, shape=shape, dtype=rule_float, impl=impl, vjp=vjp,
        jvp=lambda inputs, tangents, out, attrs: tangents[0] * derivative(inputs[0], out, attrs),
        saves=saves, lowering=Extern(NUMPY_ROUTINE, ("data",)),
        batch=batching.broadcasting_rule)


_HALF_SQRT_PI = math.sqrt(math.pi) / 2

ERFINV = _define("erfinv", special_numpy.erfinv,
                 lambda x, out, attrs: _HALF_SQRT_PI * ew.exp(out * out), ("out",))
LGAMMA = _define("lgamma", special_numpy.lgamma, lambda x, out, attrs: digamma(x), (0,))
DIGAMMA = _define("digamma", special_numpy.digamma, lambda x, out, attrs: polygamma(1, x), (0,))
POLYGAMMA = _define("polygamma", lambda x, n: special_numpy.polygamma(n, x),
                    lambda x, out, attrs: polygamma(attrs["n"] + 1, x), (0,),
                    shape=lambda shape, n: shape)
I0 = _define("i0", special_numpy.i0, lambda x, out, attrs: i1(x), (0,))


def _i1_derivative(x, out, attrs):
    # torch's i1_backward: i0(x) - i1(x) / x, 1/2 where |x| is below the dtype's epsilon (the
    # limit, where the formula would be 0 / 0); the divisor kept away from 0 meanwhile.
    epsilon = 2.0 ** -52 if x.dtype.itemsize == 8 else 2.0 ** -23
    not_tiny = ew.abs(x) > epsilon
    safe = ew.where(not_tiny, x, epsilon)
    return ew.where(not_tiny, i0(safe) - out / safe, 0.5)


I1 = _define("i1", special_numpy.i1, _i1_derivative, (0, "out"))


def _unary(op, doc):
    def function(input):  # noqa: A002 - torch's names
        return bind(op, (tensor_argument(input, op.name, "input", 1),), {})

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = doc
    return function


erfinv = _unary(ERFINV, "Elementwise inverse error function: erfinv(erf(x)) = x; +-inf at "
                        "+-1, NaN outside [-1, 1].")
lgamma = _unary(LGAMMA, "Elementwise `log|Gamma(x)|`; +inf at 0 and the negative integers.")
digamma = _unary(DIGAMMA, "Elementwise digamma, the derivative of lgamma; -inf at 0, NaN at the "
                          "negative integers.")
i0 = _unary(I0, "Elementwise modified Bessel function of the first kind, order 0.")
i1 = _unary(I1, "Elementwise modified Bessel function of the first kind, order 1.")


def polygamma(n, input):  # noqa: A002
    """Elementwise n-th derivative of digamma (n = 0 is digamma itself)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = tensor_argument(input, "polygamma", "input", 2)
    return bind(POLYGAMMA, (x,), {"n": n})


def polygamma_method(self: Tensor, n) -> Tensor:
    """`x.polygamma(n)`: the n-th derivative of digamma at x."""
    return polygamma(n, self)


def mvlgamma(input, p):  # noqa: A002
    """Elementwise multivariate log-gamma of dimension p: the sum of lgamma(x - j/2) over
    j < p plus p (p - 1) / 4 log(pi)."""
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    x = tensor_argument(input, "mvlgamma", "input", 1)
    if x.dtype.name == "bool":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not x.dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    # torch's order: lgamma at x - (p - 1)/2, ..., x - 1/2, x, summed, then the constant.
    total = lgamma(x - (p - 1) / 2)
    for j in range(p - 2, -1, -1):
        total = total + lgamma(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def mvlgamma_method(self: Tensor, p) -> Tensor:
    """`x.mvlgamma(p)`: the multivariate log-gamma of dimension p at x."""
    return mvlgamma(self, p)
