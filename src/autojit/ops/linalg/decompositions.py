"""Matrix decompositions of torch.linalg: qr, svd, svdvals, eigh and eigvalsh, each a
primitive run by LAPACK through NumPy, with torch's VJPs and their JVPs written in autojit ops.

qr, svd and eigh compute several matrices in one LAPACK call, so their primitives return them
packed along a last dim (linalg_common.unpack); the VJP reads the gradients of all the parts
from the packed gradient, where a part the loss does not use has a zero gradient. svdvals and
eigvalsh are primitives of their own, as torch's are: LAPACK skips the vectors, and their
gradients, `U diag(g) Vh` and `V diag(g) V^T`, stay finite at repeated values. Where torch's
gradient of the vectors is not finite (repeated singular values or eigenvalues, rank-deficient
rectangular matrices), neither is this one (linalg_common.safe_ratio). The VJPs of eigh and
eigvalsh give symmetric gradients, so their JVPs (the standard perturbation formulas, each the
transpose of its VJP) read the symmetric part of a tangent.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..autocast import FP32, autocast_op
from ..complex_numbers import imag, real
from ..complex_rules import conj
from ..dtype_rules import rule_first
from ..layout import cat, embed_slice, narrow, reshape
from ..layout.diagonal import diagonal
from ..reduction import sum_
from ..registry import Extern, bind, define_op, share_node
from . import matmul
from .common import (
    EighResult,
    QRResult,
    SVDResult,
    TopLevelQRResult,
    TopLevelSVDResult,
    batch_prefix,
    check_floating,
    check_matrix,
    check_phase_invariance,
    check_square,
    check_tensor,
    diag_embed,
    eye_mask,
    first_nonfinite,
    linalg_failure,
    mH,
    pack,
    packed_size,
    real_part,
    safe_ratio,
    triangle,
    unpack,
    with_out,
    write_outs,
)
from .solvers import SOLVE_TRIANGULAR


def _real_result(inputs, attrs):
    """The dtype rule of singular values and Hermitian eigenvalues: real, of the input's
    precision."""
    return None, inputs[0].dtype.to_real()


def _check_matrix_floating(A, name: str) -> None:
    check_tensor(A, name)
    check_floating(A, name)
    check_matrix(A, name)


# ---- qr ----------------------------------------------------------------------------------------

QR_MODES = ("reduced", "complete", "r")


def qr_shapes(m, n, mode: str) -> tuple:
    """The shapes of Q and R of an m x n matrix in `mode` (Q has no elements in mode 'r')."""
    k = min(m, n)
    if mode == "complete":
        return (m, m), (m, n)
    return ((m, k) if mode == "reduced" else (0,)), (k, n)


def _qr_rule(shape, mode):
    return tuple(shape[:-2]) + (packed_size(qr_shapes(shape[-2], shape[-1], mode)),)


def _qr_impl(a, mode):
    batch = a.shape[:-2]
    if mode == "r":
        return pack([np.zeros(batch + (0,), a.dtype), np.linalg.qr(a, mode="r")], batch)
    q, r = np.linalg.qr(a, mode=mode)
    return pack([q, r], batch)


def _row(v: Tensor) -> Tensor:
    """The vectors v (..., k) as rows (..., 1, k)."""
    return reshape(v, tuple(v.shape[:-1]) + (1, v.shape[-1]))


def _packed_tangent(parts, batch: tuple) -> Tensor:
    """The tangents of a packed result's parts, packed as the result is (linalg_common.pack)."""
    return cat([reshape(part, batch + (math.prod(tuple(part.shape)[len(batch):]),))
                for part in parts], -1)


def _check_qr_differentiable(mode: str, m, n) -> None:
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")


def _qr_vjp(ctx, g):
    a = ctx.inputs[0]
    mode = ctx.attrs["mode"]
    m, n = a.shape[-2], a.shape[-1]
    _check_qr_differentiable(mode, m, n)
    shapes = qr_shapes(m, n, mode)
    q, r = unpack(ctx.out, shapes)
    g_q, g_r = unpack(g, shapes)
    # torch's formula (linalg_qr_backward), with M = gR R^H - Q^H gQ; for a complex A the
    # imaginary part of M's diagonal is dropped (m >= n) or halved (m < n), R's diagonal
    # being real.
    middle = matmul(g_r, mH(r)) - matmul(mH(q), g_q)
    no_unit = {"upper": False, "left": False, "unitriangular": False}
    if m >= n:
        upper = triangle(middle, upper=True)
        if middle.dtype.is_complex:
            upper = upper - diag_embed(1j * imag(diagonal(middle, 0, -2, -1)))
        gradient = matmul(q, upper + mH(triangle(middle, upper=True, diagonal=1))) + g_q
        return (bind(SOLVE_TRIANGULAR, (mH(r), gradient), no_unit),)
    skew = triangle(mH(middle) - middle, upper=False)
    if skew.dtype.is_complex:
        skew = skew - diag_embed(0.5j * imag(diagonal(skew, 0, -2, -1)))
    gradient = matmul(q, skew)
    gradient = bind(SOLVE_TRIANGULAR, (mH(narrow(r, -1, 0, m)), gradient), no_unit)
    padding = ew.fill_like(narrow(r, -1, m, n - m), 0.0)
    return (cat([gradient, padding], -1) + matmul(q, g_r),)


def _square_qr_tangents(q, r, tangent) -> tuple:
    """(dQ, dR) of A = QR with R square: with B = dA R^-1 and C = Q^H B, Q^H dQ is the
    skew-Hermitian matrix Omega whose strict lower triangle is C's (and whose diagonal is
    i Im diag(C), R's diagonal staying real), dR = (C - Omega) R and dQ = B - Q (C - Omega)."""
    b = bind(SOLVE_TRIANGULAR, (r, tangent), {"upper": True, "left": False,
                                             "unitriangular": False})
    c = matmul(mH(q), b)
    below = triangle(c, upper=False, diagonal=-1)
    upper_part = c - below + mH(below)  # C - Omega
    if c.dtype.is_complex:
        upper_part = upper_part - diag_embed(1j * imag(diagonal(c, 0, -2, -1)))
    return b - matmul(q, upper_part), matmul(upper_part, r)


def _qr_jvp(inputs, tangents, out, attrs):
    (a,), (tangent,) = inputs, tangents
    m, n = a.shape[-2], a.shape[-1]
    _check_qr_differentiable(attrs["mode"], m, n)
    if tangent is None:
        return None
    q, r = unpack(out, qr_shapes(m, n, attrs["mode"]))
    if m >= n:
        return _packed_tangent(_square_qr_tangents(q, r, tangent), tuple(a.shape[:-2]))
    # A = Q [R1 R2] with R1 square: (dQ, dR1) from A1 = Q R1, then dR2 = Q^T (dA2 - dQ R2).
    tangent_q, tangent_r1 = _square_qr_tangents(q, narrow(r, -1, 0, m),
                                                narrow(tangent, -1, 0, m))
    tangent_r2 = matmul(mH(q), narrow(tangent, -1, m, n - m)
                        - matmul(tangent_q, narrow(r, -1, m, n - m)))
    return _packed_tangent((tangent_q, cat([tangent_r1, tangent_r2], -1)), tuple(a.shape[:-2]))


QR = define_op(name="linalg_qr", arity=1, shape=_qr_rule, dtype=rule_first, impl=_qr_impl,
               vjp=_qr_vjp, jvp=_qr_jvp, saves=(0, "out"), lowering=Extern("qr", ("data",)),
               grad_name="LinalgQrBackward0", batch=batching.leading_batch_rule, complex=True)


@autocast_op(cpu=FP32)
def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """The QR decomposition A = QR: Q with orthonormal columns, R upper triangular; `mode` is
    'reduced' (k = min(m, n) columns of Q), 'complete' (Q square) or 'r' (R only, Q empty)."""
    _check_matrix_floating(A, "linalg.qr")
    if mode not in QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    shapes = qr_shapes(A.shape[-2], A.shape[-1], mode)
    q, r = unpack(bind(QR, (A,), {"mode": mode}), shapes)
    if mode == "r":
        q = reshape(q, (0,))
    if r.grad_fn is not None:  # one node for both, as torch's, which shows Q, R and the mode
        q, r = share_node((q, r), (A,), "LinalgQrBackward0", {"mode": mode, "Q": q, "R": r})
    result = QRResult(q, r)
    return result if out is None else write_outs(out, result, "linalg_qr", (A,))


_QR_DEPRECATION = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if "
    "some else 'complete')")


@autocast_op(cpu=FP32)
def qr_top_level(input: Tensor, some: bool = True, *, out=None):  # noqa: A002 - torch's name
    """The QR decomposition (the deprecated torch.qr): linalg.qr with mode 'reduced', or
    'complete' when some=False."""
    import warnings

    warnings.warn(_QR_DEPRECATION, UserWarning, stacklevel=2)
    q, r = qr(input, "reduced" if some else "complete")
    result = TopLevelQRResult(q, r)
    return result if out is None else write_outs(out, result, "linalg_qr", (input,))


qr_top_level.__name__ = qr_top_level.__qualname__ = "qr"


# ---- svd ---------------------------------------------------------------------------------------

def svd_shapes(m, n, full_matrices: bool) -> tuple:
    k = min(m, n)
    if full_matrices:
        return (m, m), (k,), (n, n)
    return (m, k), (k,), (k, n)


def _svd_rule(shape, full_matrices):
    return tuple(shape[:-2]) + (packed_size(svd_shapes(shape[-2], shape[-1], full_matrices)),)


def _svd_failure(a: np.ndarray) -> Exception:
    index = first_nonfinite(a)
    if index is not None:
        return linalg_failure(f"linalg.svd: {batch_prefix(a.shape, index)}The algorithm failed "
                              "to converge because the input matrix contained non-finite "
                              "values.")
    return linalg_failure("linalg.svd: The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated singular values.")


def _svd_impl(a, full_matrices):
    try:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        raise _svd_failure(a) from None
    return pack([u, s, vh], a.shape[:-2])


def svd_gradient(u, s, vh, g_u, g_s, g_vh) -> Tensor:
    """torch's svd_backward for reduced factors (u: m x k, s: k, vh: k x n): the gradient of
    A from those of U, S and Vh."""
    m, n = u.shape[-2], vh.shape[-1]
    s = real_part(s)
    s_row, s_column = _row(s), reshape(s, tuple(s.shape) + (1,))
    squares = s * s
    gaps = _row(squares) - reshape(squares, tuple(s.shape) + (1,))
    gaps = ew.where(eye_mask(s, s.shape[-1]), 1.0, gaps)
    skew_u = matmul(mH(u), g_u)
    skew_u = skew_u - mH(skew_u)
    skew_v = matmul(vh, mH(g_vh))
    skew_v = skew_v - mH(skew_v)
    inner = safe_ratio(skew_u * s_row + s_column * skew_v, gaps) + diag_embed(g_s)
    if inner.dtype.is_complex:
        check_phase_invariance("svd_backward", "singular vectors",
                               "this phase term, making it ill-defined.",
                               imag(diagonal(skew_u, 0, -2, -1)),
                               -imag(diagonal(skew_v, 0, -2, -1)))
        # The phases of the singular vectors: i Im(diag(U^H gU)) / S on the diagonal (the
        # loss being invariant to them, Im diag(U^H gU) = -Im diag(V^H gV)).
        inner = inner + diag_embed(safe_ratio(diagonal(skew_u, 0, -2, -1), 2 * s))
    if m > n:
        scaled = safe_ratio(g_u, s_row)
        gradient = matmul(u, inner) + scaled - matmul(u, matmul(mH(u), scaled))
        return matmul(gradient, vh)
    if m < n:
        scaled = safe_ratio(g_vh, s_column)
        gradient = matmul(inner, vh) + scaled - matmul(matmul(scaled, mH(vh)), vh)
        return matmul(u, gradient)
    return matmul(matmul(u, inner), vh)


def _svd_vjp(ctx, g):
    a = ctx.inputs[0]
    m, n = a.shape[-2], a.shape[-1]
    full = ctx.attrs["full_matrices"]
    shapes = svd_shapes(m, n, full)
    u, s, vh = unpack(ctx.out, shapes)
    g_u, g_s, g_vh = unpack(g, shapes)
    if full:  # as torch: the columns beyond min(m, n) have no say in A
        k = min(m, n)
        u, g_u = narrow(u, -1, 0, k), narrow(g_u, -1, 0, k)
        vh, g_vh = narrow(vh, -2, 0, k), narrow(g_vh, -2, 0, k)
    return (svd_gradient(u, s, vh, g_u, g_s, g_vh),)


def _svd_tangents(u, s, vh, tangent) -> tuple:
    """(dU, dS, dVh) of reduced factors (u: m x k, s: k, vh: k x n) along dA, the transpose
    of `svd_gradient`: with dP = U^T dA V, dS = diag(dP), U^T dU = (dP S + S dP^T) / E and
    V^T dV = (S dP + dP^T S) / E off the diagonal (E_ij = s_j^2 - s_i^2), plus, for the
    longer side, the part of dA outside the span of U (or V) over S."""
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    s = real_part(s)
    v = mH(vh)
    s_row, s_column = _row(s), reshape(s, tuple(s.shape) + (1,))
    squares = s * s
    gaps = _row(squares) - reshape(squares, tuple(s.shape) + (1,))
    on_diagonal = eye_mask(s, k)
    gaps = ew.where(on_diagonal, 1.0, gaps)
    a_v = matmul(tangent, v)
    p = matmul(mH(u), a_v)
    p_t = mH(p)
    omega_u = safe_ratio(ew.where(on_diagonal, 0.0, p * s_row + s_column * p_t), gaps)
    omega_v = safe_ratio(ew.where(on_diagonal, 0.0, s_column * p + p_t * s_row), gaps)
    p_diagonal = diagonal(p, 0, -2, -1)
    if p.dtype.is_complex:  # the phases: +-i Im(diag(dP)) / (2S) on the diagonals
        phase = diag_embed(safe_ratio(1j * imag(p_diagonal), 2 * s))
        omega_u, omega_v = omega_u + phase, omega_v - phase
        p_diagonal = real(p_diagonal).to(p.dtype)
    tangent_u, tangent_v = matmul(u, omega_u), matmul(v, omega_v)
    if m > n:
        tangent_u = tangent_u + safe_ratio(a_v - matmul(u, p), s_row)
    elif m < n:
        tangent_v = tangent_v + safe_ratio(matmul(mH(tangent), u) - matmul(v, p_t), s_row)
    return tangent_u, p_diagonal, mH(tangent_v)


def _svd_jvp(inputs, tangents, out, attrs):
    (a,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    m, n = a.shape[-2], a.shape[-1]
    full = attrs["full_matrices"]
    u, s, vh = unpack(out, svd_shapes(m, n, full))
    k = min(m, n)
    if full:  # the columns beyond min(m, n) have no say in A (see _svd_vjp): zero tangents
        u, vh = narrow(u, -1, 0, k), narrow(vh, -2, 0, k)
    tangent_u, tangent_s, tangent_vh = _svd_tangents(u, s, vh, tangent)
    batch = tuple(a.shape[:-2])
    if full:
        whole = [(0, extent, 1) for extent in batch]
        tangent_u = embed_slice(tangent_u, batch + (m, m), whole + [(0, m, 1), (0, k, 1)])
        tangent_vh = embed_slice(tangent_vh, batch + (n, n), whole + [(0, k, 1), (0, n, 1)])
    return _packed_tangent((tangent_u, tangent_s, tangent_vh), batch)


SVD = define_op(name="linalg_svd", arity=1, shape=_svd_rule, dtype=rule_first, impl=_svd_impl,
                vjp=_svd_vjp, jvp=_svd_jvp, saves=(0, "out"), lowering=Extern("svd", ("data",)),
                grad_name="LinalgSvdBackward0", batch=batching.leading_batch_rule, complex=True)


def _check_driver(A: Tensor, driver) -> None:
    if driver is not None and not A.is_cuda:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


@autocast_op(cpu=FP32)
def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """The singular value decomposition A = U diag(S) Vh, singular values descending; with
    full_matrices=False, U and Vh have min(m, n) columns and rows."""
    _check_matrix_floating(A, "linalg.svd")
    _check_driver(A, driver)
    full = bool(full_matrices)
    shapes = svd_shapes(A.shape[-2], A.shape[-1], full)
    u, s, vh = unpack(bind(SVD, (A,), {"full_matrices": full}), shapes)
    result = SVDResult(u, real_part(s), vh)
    return result if out is None else write_outs(out, result, "_linalg_svd", (A,))


def _svdvals_rule(shape):
    return tuple(shape[:-2]) + (min(shape[-2], shape[-1]),)


def _svdvals_impl(a):
    try:
        return np.linalg.svd(a, compute_uv=False)
    except np.linalg.LinAlgError:
        raise _svd_failure(a) from None


def _svdvals_vjp(ctx, g):
    a = ctx.inputs[0]
    m, n = a.shape[-2], a.shape[-1]
    u, _, vh = unpack(bind(SVD, (a,), {"full_matrices": False}), svd_shapes(m, n, False))
    g = g.to(u.dtype)
    if m >= n:
        return (matmul(u, reshape(g, tuple(g.shape) + (1,)) * vh),)
    return (matmul(u * reshape(g, tuple(g.shape[:-1]) + (1, g.shape[-1])), vh),)


def _svdvals_jvp(inputs, tangents, out, attrs):
    # ds_i = Re(u_i^H dA v_i).
    (a,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    m, n = a.shape[-2], a.shape[-1]
    u, _, vh = unpack(bind(SVD, (a,), {"full_matrices": False}), svd_shapes(m, n, False))
    return real_part(sum_(conj(u) * matmul(tangent, mH(vh)), -2))


SVDVALS = define_op(name="linalg_svdvals", arity=1, shape=_svdvals_rule, dtype=_real_result,
                    impl=_svdvals_impl, vjp=_svdvals_vjp, jvp=_svdvals_jvp, saves=(0,),
                    lowering=Extern("singular_values", ("data",)),
                    grad_name="LinalgSvdBackward0", batch=batching.leading_batch_rule, complex=True)


@autocast_op(cpu=FP32)
def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values of A, descending (linalg.svd's S without U and Vh)."""
    _check_matrix_floating(A, "linalg.svd")
    _check_driver(A, driver)
    return with_out(bind(SVDVALS, (A,), {}), out, "_linalg_svd", (A,))


@autocast_op(cpu=FP32)
def svd_top_level(input: Tensor, some: bool = True, compute_uv: bool = True, *,  # noqa: A002
                  out=None):
    """The singular value decomposition as the deprecated torch.svd returns it: (U, S, V) with
    V = Vh^H (so that A = U diag(S) V^H, complex inputs included); without compute_uv, U and V
    are zero matrices of the full sizes."""
    _check_matrix_floating(input, "linalg.svd")
    if compute_uv:
        u, s, vh = svd(input, full_matrices=not some)
        result = TopLevelSVDResult(u, s, mH(vh))
    else:
        from ...tensor.creation import zeros

        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        device = input.device if input.is_cuda else None
        result = TopLevelSVDResult(zeros(batch + (m, m), dtype=input.dtype, device=device),
                                   svdvals(input),
                                   zeros(batch + (n, n), dtype=input.dtype, device=device))
    return result if out is None else write_outs(out, result, "_linalg_svd", (input,))


svd_top_level.__name__ = svd_top_level.__qualname__ = "svd"


# ---- eigh --------------------------------------------------------------------------------------

def _check_uplo(UPLO) -> str:
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def eigh_shapes(n) -> tuple:
    return (n,), (n, n)


def _eigh_rule(shape, UPLO):
    return tuple(shape[:-2]) + (packed_size(eigh_shapes(shape[-1])),)


def _eigh_impl(a, UPLO):
    values, vectors = np.linalg.eigh(a, UPLO=UPLO)
    return pack([values, vectors], a.shape[:-2])


def _eigh_vjp(ctx, g):
    n = ctx.out.shape[-1]
    values, vectors = unpack(ctx.out, eigh_shapes(_eigh_order(n)))
    g_values, g_vectors = unpack(g, eigh_shapes(_eigh_order(n)))
    # torch's linalg_eig_backward for Hermitian A: V (diag(gL) + skew(V^H gV) / E) V^H with
    # E_ij = L_j - L_i, the diagonal gL alone (the skew part's, i Im diag(V^H gV), is the
    # phases' and is dropped).
    values = real_part(values)
    projected = matmul(mH(vectors), g_vectors)
    if projected.dtype.is_complex:
        check_phase_invariance("linalg_eigh_backward", "eigenvectors",
                               "this quantity, so it is ill-defined.",
                               imag(diagonal(projected, 0, -2, -1)))
    projected = 0.5 * (projected - mH(projected))
    row = reshape(values, tuple(values.shape[:-1]) + (1, values.shape[-1]))
    column = reshape(values, tuple(values.shape) + (1,))
    on_diagonal = eye_mask(values, values.shape[-1])
    gaps = ew.where(on_diagonal, 1.0, row - column)
    inner = ew.where(on_diagonal, diag_embed(g_values), safe_ratio(projected, gaps))
    return (matmul(vectors, matmul(inner, mH(vectors))),)


def _eigh_order(packed_length) -> int:
    """n from the packed length n + n * n."""
    return int(round((-1 + (1 + 4 * int(packed_length)) ** 0.5) / 2))


def _eigh_jvp(inputs, tangents, out, attrs):
    # With M = V^T sym(dA) V: dL = diag(M), dV = V (M / E) off the diagonal, E_ij = L_j - L_i.
    # dA is taken symmetric, as the VJP's gradient is.
    (tangent,) = tangents
    if tangent is None:
        return None
    values, vectors = unpack(out, eigh_shapes(_eigh_order(out.shape[-1])))
    values = real_part(values)
    projected = matmul(mH(vectors), matmul(tangent, vectors))
    projected = 0.5 * (projected + mH(projected))
    on_diagonal = eye_mask(values, values.shape[-1])
    row = reshape(values, tuple(values.shape[:-1]) + (1, values.shape[-1]))
    column = reshape(values, tuple(values.shape) + (1,))
    gaps = ew.where(on_diagonal, 1.0, row - column)
    tangent_vectors = matmul(vectors, safe_ratio(ew.where(on_diagonal, 0.0, projected), gaps))
    tangent_values = real_part(diagonal(projected, 0, -2, -1)).to(projected.dtype)
    return _packed_tangent((tangent_values, tangent_vectors), tuple(values.shape[:-1]))


EIGH = define_op(name="linalg_eigh", arity=1, shape=_eigh_rule, dtype=rule_first,
                 impl=_eigh_impl, vjp=_eigh_vjp, jvp=_eigh_jvp, saves=("out",),
                 lowering=Extern("symmetric_eigen", ("data",)), grad_name="LinalgEighBackward0",
                 batch=batching.leading_batch_rule, complex=True)


def _check_symmetric_input(A, name: str = "linalg.eigh") -> None:
    check_tensor(A, name)
    check_floating(A, name)
    check_square(A, name)


@autocast_op(cpu=FP32)
def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    """The eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix, read
    from its lower triangle (UPLO='L') or its upper one ('U')."""
    _check_symmetric_input(A)
    uplo = _check_uplo(UPLO)
    values, vectors = unpack(bind(EIGH, (A,), {"UPLO": uplo}), eigh_shapes(A.shape[-1]))
    result = EighResult(real_part(values), vectors)
    return result if out is None else write_outs(out, result, "_linalg_eigh", (A,))


def _eigvalsh_rule(shape, UPLO):
    return tuple(shape[:-1])


def _eigvalsh_impl(a, UPLO):
    return np.linalg.eigvalsh(a, UPLO=UPLO)


def _eigvalsh_vjp(ctx, g):
    a = ctx.inputs[0]
    _, vectors = unpack(bind(EIGH, (a,), ctx.attrs), eigh_shapes(a.shape[-1]))
    g = g.to(vectors.dtype)
    return (matmul(vectors * reshape(g, tuple(g.shape[:-1]) + (1, g.shape[-1])), mH(vectors)),)


def _eigvalsh_jvp(inputs, tangents, out, attrs):
    # dl_i = Re(v_i^H dA v_i).
    (a,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    _, vectors = unpack(bind(EIGH, (a,), attrs), eigh_shapes(a.shape[-1]))
    return real_part(sum_(conj(vectors) * matmul(tangent, vectors), -2))


EIGVALSH = define_op(name="linalg_eigvalsh", arity=1, shape=_eigvalsh_rule, dtype=_real_result,
                     impl=_eigvalsh_impl, vjp=_eigvalsh_vjp, jvp=_eigvalsh_jvp, saves=(0,),
                     lowering=Extern("symmetric_eigenvalues", ("data",)),
                     grad_name="LinalgEighBackward0", batch=batching.leading_batch_rule,
                     complex=True)


@autocast_op(cpu=FP32)
def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues of a symmetric matrix, ascending (linalg.eigh's without the
    vectors)."""
    _check_symmetric_input(A)
    uplo = _check_uplo(UPLO)
    return with_out(bind(EIGVALSH, (A,), {"UPLO": uplo}), out, "_linalg_eigh", (A,))
