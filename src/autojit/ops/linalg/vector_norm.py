"""The p-norm of a real or complex tensor over some dims, for p other than 0, 1 and +-inf (2
above all): a primitive whose VJP and JVP are torch's norm_backward and norm_jvp written in
autojit ops (a complex x's VJP multiplies by sgn(x), its JVP takes the real part of
conj(sgn(x)) times the tangent).

composite.norm computes the other orders, and half-precision tensors, from other ops. A
primitive of its own gives this one torch's derivatives at zero: the gradient there is 0 (a
masked quotient), and the second derivative is NaN, as torch's is, because
differentiating the masked quotient multiplies a masked 0 by an infinite slope (0 * inf),
where a composite masking its input instead of its quotient gives 0. Eagerly the op runs
NumPy; compiled code sees the composite it decomposes into (Decomposition), whose values are
the same, and the op's own VJP and JVP.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..lowering import Decomposition
from ..reduction import _sum_impl, sum_
from ..registry import bind, define_op
from ..shape_rules import normalize_dims, reduced_shape

# The orders composite.norm computes from other ops.
_OTHER_ORDERS = (0, 1, float("inf"), float("-inf"))
_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def takes(x: Tensor, p) -> bool:
    """Whether the primitive computes this norm: a float32, float64, complex64 or complex128 x
    and a numeric p other than 0, 1 and +-inf."""
    return (x.dtype in _DTYPES and isinstance(p, (int, float))
            and not isinstance(p, bool) and p not in _OTHER_ORDERS)


def _impl(x, p, dim, keepdim):
    magnitude = np.abs(x)
    if p == 2:
        return np.sqrt(_sum_impl(magnitude * magnitude, dim, keepdim)).astype(magnitude.dtype)
    with np.errstate(divide="ignore"):  # 0 ** p for p < 0: inf, the sum infinite, the norm 0
        total = _sum_impl(magnitude ** p, dim, keepdim)
        return (total ** (1.0 / p)).astype(magnitude.dtype)


def _composite(x, p, dim, keepdim):
    """The same values from other ops, for compiled code."""
    magnitude = ew.abs(x)
    if p == 2:
        return ew.sqrt(sum_(magnitude * magnitude if x.dtype.is_complex else x * x, dim,
                            keepdim))
    if p < 0:
        magnitude = ew.where(x == 0, float("inf"), ew.where(x == 0, 1, magnitude) ** p)
        return sum_(magnitude, dim, keepdim) ** (1.0 / p)
    return sum_(magnitude ** p, dim, keepdim) ** (1.0 / p)


def _kept(value: Tensor, x: Tensor, attrs) -> Tensor:
    """A reduced value with its reduced dims back, as 1s (torch's unsqueeze_multiple)."""
    if attrs["keepdim"]:
        return value
    return value.reshape(reduced_shape(tuple(x.shape), attrs["dim"], True))


def _masked(norm: Tensor, value: Tensor) -> Tensor:
    """value where norm is not 0, else 0 (torch's masked_fill_(norm == 0, 0))."""
    return ew.where(norm == 0, 0.0, value)


def _sign(x: Tensor) -> Tensor:
    return x.sgn() if x.dtype.is_complex else ew.sign(x)


def _real_product(scaled: Tensor, tangent: Tensor) -> Tensor:
    """scaled * tangent, or for complex ones Re(conj(scaled) tangent), torch's norm_jvp."""
    if scaled.dtype.is_complex or tangent.dtype.is_complex:
        return (scaled.conj() * tangent).real
    return scaled * tangent


def _vjp(ctx, g):
    # torch's norm_backward.
    (x,), attrs = ctx.inputs, ctx.attrs
    p = attrs["p"]
    g, norm = _kept(g, x, attrs), _kept(ctx.out, x, attrs)
    if p == 2:
        return (g * _masked(norm, x / norm),)
    if p < 1:
        scaled = _sign(x) * ew.where(x == 0, 0.0, ew.abs(x) ** (p - 1))
        return (scaled * g * norm ** (1 - p),)
    scaled = _sign(x) * ew.abs(x) ** (p - 1) if p < 2 else x * ew.abs(x) ** (p - 2)
    return (scaled * _masked(norm, g / norm ** (p - 1)),)


def _jvp(inputs, tangents, out, attrs):
    # torch's norm_jvp.
    (x,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    p, dim, keepdim = attrs["p"], attrs["dim"], attrs["keepdim"]
    if p == 2:
        return _masked(out, sum_(_real_product(x, tangent), dim, keepdim) / out)
    if p < 1:
        scaled = _sign(x) * ew.where(x == 0, 0.0, ew.abs(x) ** (p - 1))
        return out ** (1 - p) * sum_(_real_product(scaled, tangent), dim, keepdim)
    scaled = _sign(x) * ew.abs(x) ** (p - 1) if p < 2 else x * ew.abs(x) ** (p - 2)
    return _masked(out, sum_(_real_product(scaled, tangent), dim, keepdim) / out ** (p - 1))


def _real_dtype(inputs, attrs):
    return None, inputs[0]._dtype.to_real()


VECTOR_NORM = define_op(
    name="vector_norm", arity=1,
    shape=lambda shape, p, dim, keepdim: reduced_shape(shape, dim, keepdim), dtype=_real_dtype,
    impl=_impl, vjp=_vjp, jvp=_jvp, saves=(0, "out"), lowering=Decomposition(_composite),
    grad_name="LinalgVectorNormBackward0", batch=batching.reduction_rule, complex=True)


def p_norm(x: Tensor, p, dim=None, keepdim: bool = False) -> Tensor:
    """The p-norm of x over `dim` (all dims when None); `takes(x, p)` must hold."""
    return bind(VECTOR_NORM, (x,), {"p": float(p), "dim": normalize_dims(dim, x.ndim),
                                    "keepdim": bool(keepdim)})
