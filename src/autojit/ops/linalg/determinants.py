"""Determinants: linalg.det and linalg.slogdet as primitives run by LAPACK's LU through
NumPy, and logdet written from slogdet.

The gradient of det is the cofactor matrix, det(A) A^-T where A is invertible. As torch does
when it differentiates twice, a matrix whose determinant is (nearly) zero gets it from the SVD
instead, A = U diag(S) Vh: the cofactor matrix is det(U) det(Vh) U diag(prod_{j != i} S_j) Vh,
which needs no inverse. Eagerly each matrix of a batch takes the formula that fits it; in a
trace, where the values are unknown, both are computed on inputs made safe for them (the
identity where the inverse is not wanted, well-separated singular values where the SVD is not)
and `where` picks, so that neither branch sends an infinity into the gradient. The JVPs are
<cofactor matrix, dA> (det) and <A^-T, dA> (logabsdet), the VJPs' matrices at a cotangent of 1.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..complex_numbers import imag, real
from ..complex_rules import conj
from ..dtype_rules import rule_first
from ..layout import embed_slice, reshape, select, stack
from ..reduction import prod_, sum_
from ..registry import Extern, bind, define_op
from . import matmul
from .common import (
    SlogdetResult,
    TopLevelSlogdetResult,
    check_square_floating,
    eye_mask,
    identity_like,
    mH,
    real_part,
    unpack,
    with_out,
    write_outs,
)
from .decompositions import SVD, svd_shapes
from .solvers import INV


def _determinant_rule(shape):
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"expected batches of square matrices, got shape {list(shape)}")
    return tuple(shape[:-2])


def _as_matrices(values: Tensor) -> Tensor:
    """One value per matrix of a batch, shaped to scale those matrices: (..., 1, 1)."""
    return reshape(values, tuple(values.shape) + (1, 1))


def _inverse_transposed(a: Tensor, scale: Tensor) -> Tensor:
    return _as_matrices(scale) * mH(bind(INV, (a,), {}))


def _adjugate_transposed(a: Tensor, scale: Tensor) -> Tensor:
    """scale * the conjugate of the cofactor matrix of a, from its SVD (any a, singular ones
    included)."""
    n = a.shape[-1]
    u, s, vh = unpack(bind(SVD, (a,), {"full_matrices": False}), svd_shapes(n, n, False))
    s = real_part(s)
    with_signs = conj(bind(DET, (u.detach(),), {}) * bind(DET, (vh.detach(),), {})) * scale
    # prod_{j != i} s_j, without dividing by s_i (which may be 0).
    others = prod_(ew.where(eye_mask(s, n), 1.0, reshape(s, tuple(s.shape[:-1]) + (1, n))), -1)
    weights = reshape(with_signs, tuple(with_signs.shape) + (1,)) * others
    return matmul(u * reshape(weights, tuple(weights.shape[:-1]) + (1, n)), vh)


def cofactor_gradient(a: Tensor, singular: Tensor, regular_scale: Tensor,
                      singular_scale) -> Tensor:
    """regular_scale * A^-H for the matrices where `singular` is False, singular_scale() times
    the conjugate of the cofactor matrix where it is True (one flag and scale per matrix of
    the batch; the second scale is made only when needed)."""
    flags = singular._payload
    if flags is not None and flags.__class__ is np.ndarray and a._payload is not None:
        if not flags.any():
            return _inverse_transposed(a, regular_scale)
        if flags.all():
            return _adjugate_transposed(a, singular_scale())
    n = a.shape[-1]
    mask = _as_matrices(singular)
    eye = identity_like(a, n)
    from ...tensor.creation import arange

    # Singular values 1..n, well apart, for the matrices whose SVD branch is not taken.
    spread = eye * arange(1, n + 1, dtype=real_part(eye).dtype,
                          device=a.device if a.is_cuda else None)
    regular = _inverse_transposed(ew.where(mask, eye, a), regular_scale)
    adjugate = _adjugate_transposed(ew.where(mask, a, spread), singular_scale())
    return ew.where(mask, adjugate, regular)


# ---- det ---------------------------------------------------------------------------------------

def _det_vjp(ctx, g):
    a = ctx.inputs[0]
    if a.numel() == 0:
        return (ew.fill_like(a, 0.0),)
    det = ctx.out
    # torch's threshold: below 100 eps the SVD formula, which holds for every matrix.
    nearly_singular = ew.abs(det) < 100 * float(np.finfo(a.dtype.numpy).eps)
    return (cofactor_gradient(a, nearly_singular, g * conj(det), lambda: g),)


def _det_jvp(inputs, tangents, out, attrs):
    # <cofactor(A), dA>, the cofactor matrix being the VJP's at a cotangent of 1.
    (a,), (tangent,) = inputs, tangents
    if tangent is None or a.numel() == 0:
        return None
    nearly_singular = ew.abs(out) < 100 * float(np.finfo(a.dtype.numpy).eps)
    cofactor = conj(cofactor_gradient(a, nearly_singular, conj(out),
                                      lambda: ew.fill_like(out, 1.0)))
    return sum_(cofactor * tangent, (-2, -1))


DET = define_op(name="linalg_det", arity=1, shape=_determinant_rule, dtype=rule_first,
                impl=np.linalg.det, vjp=_det_vjp, jvp=_det_jvp, saves=(0, "out"),
                lowering=Extern("lu_determinant", ("data",)), grad_name="LinalgDetBackward0",
                batch=batching.leading_batch_rule, complex=True)


def det(A: Tensor, *, out=None) -> Tensor:
    """The determinant of a square matrix (or of each in a batch)."""
    check_square_floating(A, "linalg.det")
    return with_out(bind(DET, (A,), {}), out, "_linalg_det", (A,))


def det_top_level(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """The determinant of a square matrix (torch.det, linalg.det without out=)."""
    return det(input)


det_top_level.__name__ = det_top_level.__qualname__ = "det"


# ---- slogdet -----------------------------------------------------------------------------------

def _slogdet_rule(shape):
    return _determinant_rule(shape) + (2,)


def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.stack([np.asarray(sign, a.dtype), np.asarray(logabsdet, a.dtype)], axis=-1)


def _slogdet_vjp(ctx, g):
    # A real sign is piecewise constant: only logabsdet has a gradient, g * A^-T. A complex
    # one moves with the phase of det: with t = tr(A^-1 dA), dlogabsdet = Re t and dsign =
    # i sign Im t, so the gradient is (gL - i Im(conj(gS) sign)) A^-H. At a singular matrix
    # (logabsdet = -inf) that is the cofactor matrix over a zero determinant, infinite as
    # torch's.
    a = ctx.inputs[0]
    if a.numel() == 0:
        return (ew.fill_like(a, 0.0),)
    g_logabsdet = select(g, -1, 1)
    logabsdet = real_part(select(ctx.out, -1, 1))
    if a.dtype.is_complex:
        sign = select(ctx.out, -1, 0)
        g_logabsdet = real(g_logabsdet) - 1j * imag(conj(select(g, -1, 0)) * sign)
    singular = logabsdet == -math.inf
    # g / det(A) with det(A) = 0 there; a constant infinity, not a division by 0, so that the
    # branch a trace computes for every matrix has no infinite derivative with respect to g.
    return (cofactor_gradient(a, singular, g_logabsdet,
                              lambda: g_logabsdet * ew.where(singular, math.inf, 0.0)),)


def _slogdet_jvp(inputs, tangents, out, attrs):
    # The sign's tangent is 0; logabsdet's is <A^-T, dA> (the VJP's matrix at a cotangent of
    # 1), put beside it in the packed (sign, logabsdet) pair.
    (a,), (tangent,) = inputs, tangents
    if tangent is None or a.numel() == 0:
        return None
    logabsdet = real_part(select(out, -1, 1))
    singular = logabsdet == -math.inf
    ones = ew.fill_like(logabsdet, 1.0)
    gradient = conj(cofactor_gradient(a, singular, ones,
                                      lambda: ew.where(singular, math.inf, 0.0)))
    pushed = sum_(gradient * tangent, (-2, -1))
    if a.dtype.is_complex:  # (i sign Im t, Re t), t = tr(A^-1 dA)
        sign = select(out, -1, 0)
        pushed = stack([1j * sign * imag(pushed), real(pushed).to(a.dtype)], -1)
        return pushed
    pushed = reshape(pushed, tuple(pushed.shape) + (1,))
    return embed_slice(pushed, tuple(out.shape), [(0, n, 1) for n in out.shape[:-1]] + [(1, 2, 1)])


SLOGDET = define_op(name="linalg_slogdet", arity=1, shape=_slogdet_rule, dtype=rule_first,
                    impl=_slogdet_impl, vjp=_slogdet_vjp, jvp=_slogdet_jvp, saves=(0, "out"),
                    lowering=Extern("lu_log_determinant", ("data",)),
                    grad_name="LinalgSlogdetBackward0", batch=batching.leading_batch_rule,
                    complex=True)


def slogdet(A: Tensor, *, out=None):
    """The sign and the natural log of the absolute value of the determinant, (sign,
    logabsdet): for a singular matrix (0, -inf)."""
    check_square_floating(A, "linalg.slogdet")
    packed = bind(SLOGDET, (A,), {})
    result = SlogdetResult(select(packed, -1, 0), real_part(select(packed, -1, 1)))
    return result if out is None else write_outs(out, result, "_linalg_slogdet", (A,))


def slogdet_top_level(input: Tensor, *, out=None):  # noqa: A002 - torch's name
    """The sign and log absolute value of the determinant (torch.slogdet)."""
    sign, logabsdet = slogdet(input)
    result = TopLevelSlogdetResult(sign, logabsdet)
    return result if out is None else write_outs(out, result, "_linalg_slogdet", (input,))


slogdet_top_level.__name__ = slogdet_top_level.__qualname__ = "slogdet"


def logdet(input: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """The natural log of the determinant: NaN where it is negative, -inf where it is 0 (for
    a complex matrix, the complex log(sign) + log|det|)."""
    check_square_floating(input, "linalg.slogdet")
    sign, logabsdet = slogdet(input)
    if input.dtype.is_complex:
        return ew.log(sign) + logabsdet
    return ew.where(sign < 0, math.nan, logabsdet)

