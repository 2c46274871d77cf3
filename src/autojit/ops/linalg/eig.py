"""torch.linalg's eig and eigvals: the eigenvalues and eigenvectors of a general (not
symmetric) square matrix, which are complex. Each is a primitive run by LAPACK's geev through
NumPy, which normalizes the eigenvectors as torch's LAPACK call does (unit 2-norm, the largest
component real), with torch's VJP and JVP written in autojit ops.

The input is real or complex (float32, float64, complex64, complex128), the results complex
of its precision; a real input's gradient is the real part of the complex one, which the
engine takes (docs/notes/complex.md). The rules solve complex systems with the matrix V of
eigenvectors through linalg.solve, whose rules differentiate them again. As torch does, the
backward raises where the loss depends on the phases of the eigenvectors (which are
arbitrary): that check reads the gradient's values, so it is made eagerly, not in a trace.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..autocast import FP32, autocast_op
from ..complex_numbers import imag, real
from ..complex_rules import conj
from ..layout import cat, reshape
from ..layout.diagonal import diagonal
from ..registry import Extern, OpError, bind, define_op
from . import matmul
from .common import (
    SCALAR_TYPE,
    check_floating,
    check_phase_invariance,
    check_square,
    check_tensor,
    diag_embed,
    eye_mask,
    first_nonfinite,
    mT,
    pack,
    packed_size,
    unpack,
    with_out,
    write_outs,
)
from .solvers import solve

EigResult = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def _shapes(n) -> tuple:
    return (n,), (n, n)


def _order(packed_length) -> int:
    """n from the packed length n + n * n."""
    return int(round((-1 + (1 + 4 * int(packed_length)) ** 0.5) / 2))


def _complex_dtype(inputs, attrs):
    return None, inputs[0]._dtype.to_complex()


def _check_finite(a: np.ndarray, name: str) -> None:
    """torch's refusal of a matrix with an inf or NaN, which geev cannot take."""
    if first_nonfinite(a) is not None:
        raise OpError(RuntimeError(f"torch.{name}: input tensor should not contain infs or "
                                   "NaNs."))


def _as_complex(x: Tensor, like: Tensor) -> Tensor:
    return x if x.dtype.is_complex else x.to(like.dtype)


def _gaps(values: Tensor) -> Tensor:
    """E_ij = L_j - L_i off the diagonal, 1 on it."""
    row = reshape(values, tuple(values.shape[:-1]) + (1, values.shape[-1]))
    column = reshape(values, tuple(values.shape) + (1,))
    return ew.where(eye_mask(values, values.shape[-1]), 1.0, row - column)


# ---- eig ---------------------------------------------------------------------------------------

def _eig_rule(shape):
    return tuple(shape[:-2]) + (packed_size(_shapes(shape[-1])),)


def _eig_impl(a):
    _check_finite(a, "linalg.eig")
    values, vectors = np.linalg.eig(a)
    complex_type = np.result_type(a.dtype, np.complex64)
    return pack([values.astype(complex_type), vectors.astype(complex_type)], a.shape[:-2])


def _eig_vjp(ctx, g):
    # torch's linalg_eig_backward: gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV)))
    # / conj(E)) V^H off the diagonal, the real part of it for a real A.
    values, vectors = unpack(ctx.out, _shapes(_order(ctx.out.shape[-1])))
    g_values, g_vectors = unpack(g, _shapes(_order(g.shape[-1])))
    vectors_h = conj(mT(vectors))
    projected = matmul(vectors_h, _as_complex(g_vectors, vectors))
    check_phase_invariance("linalg_eig_backward", "eigenvectors",
                           "this quantity, so it is ill-defined.",
                           imag(diagonal(projected, 0, -2, -1)))
    re_diagonal = real(diagonal(projected, 0, -2, -1))
    shifted = projected - matmul(vectors_h, vectors * reshape(
        re_diagonal, tuple(re_diagonal.shape[:-1]) + (1, re_diagonal.shape[-1])))
    inner = ew.where(eye_mask(values, values.shape[-1]), diag_embed(_as_complex(g_values, values)),
                     shifted / _gaps(conj(values)))
    # A real A's gradient is the real part, which the engine takes (autograd/graph.py's
    # conform, torch's handle_r_to_c).
    return (solve(vectors_h, matmul(inner, vectors_h)),)


def _eig_jvp(inputs, tangents, out, attrs):
    # torch's linalg_eig_jvp: dP = V^-1 dA V, dL = diag(dP), dX = V (offdiag(dP) / E) and
    # dV = dX - V diag(Re diag(V^H dX)).
    (tangent,) = tangents
    if tangent is None:
        return None
    values, vectors = unpack(out, _shapes(_order(out.shape[-1])))
    moved = solve(vectors, matmul(_as_complex(tangent, vectors), vectors))
    on_diagonal = eye_mask(values, values.shape[-1])
    moved_vectors = matmul(vectors, ew.where(on_diagonal, 0.0, moved) / _gaps(values))
    re_diagonal = real(diagonal(matmul(conj(mT(vectors)), moved_vectors), 0, -2, -1))
    tangent_vectors = moved_vectors - vectors * reshape(
        re_diagonal, tuple(re_diagonal.shape[:-1]) + (1, re_diagonal.shape[-1]))
    batch = tuple(values.shape[:-1])
    n = values.shape[-1]
    return cat([_as_complex(diagonal(moved, 0, -2, -1), values),
                reshape(tangent_vectors, batch + (n * n,))], -1)


EIG = define_op(name="linalg_eig", arity=1, shape=_eig_rule, dtype=_complex_dtype,
                impl=_eig_impl, vjp=_eig_vjp, jvp=_eig_jvp, saves=("out",),
                lowering=Extern("general_eigen", ("data",)), grad_name="LinalgEigBackward0",
                batch=batching.leading_batch_rule, complex=True)


def _check_input(A, name: str) -> None:
    """torch's checks, in its order: a dtype with no complex counterpart first (integers), the
    shape, then the dtypes geev has no kernel for (half precision)."""
    check_tensor(A, name)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_TYPE[A.dtype.name]}")
    check_square(A, name)
    if A.dtype in (dtypes.float16, dtypes.bfloat16):
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for '
                                  f"'{SCALAR_TYPE[A.dtype.name]}'")
    check_floating(A, name)


@autocast_op(cpu=FP32)
def eig(A: Tensor, *, out=None):
    """The eigenvalues and eigenvectors of a square matrix (complex; the vectors are the
    columns, each of unit norm with its largest component real), in LAPACK's order."""
    _check_input(A, "linalg.eig")
    values, vectors = unpack(bind(EIG, (A,), {}), _shapes(A.shape[-1]))
    result = EigResult(values, vectors)
    return result if out is None else write_outs(out, result, "linalg_eig", (A,))


# ---- eigvals -----------------------------------------------------------------------------------

def _eigvals_impl(a):
    _check_finite(a, "linalg.eig")
    return np.linalg.eigvals(a).astype(np.result_type(a.dtype, np.complex64))


def _eigvals_vjp(ctx, g):
    # eig's gradient with no gradient for the vectors: V^-H diag(gL) V^H.
    a = ctx.inputs[0]
    _, vectors = unpack(bind(EIG, (a,), {}), _shapes(a.shape[-1]))
    vectors_h = conj(mT(vectors))
    return (solve(vectors_h, matmul(diag_embed(_as_complex(g, vectors)), vectors_h)),)


def _eigvals_jvp(inputs, tangents, out, attrs):
    # dL = diag(V^-1 dA V).
    (a,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    _, vectors = unpack(bind(EIG, (a,), {}), _shapes(a.shape[-1]))
    moved = solve(vectors, matmul(_as_complex(tangent, vectors), vectors))
    return diagonal(moved, 0, -2, -1)


EIGVALS = define_op(name="linalg_eigvals", arity=1, shape=lambda shape: tuple(shape[:-1]),
                    dtype=_complex_dtype, impl=_eigvals_impl, vjp=_eigvals_vjp,
                    jvp=_eigvals_jvp, saves=(0,), lowering=Extern("general_eigenvalues",
                                                                  ("data",)),
                    grad_name="LinalgEigBackward0", batch=batching.leading_batch_rule,
                    complex=True)


@autocast_op(cpu=FP32)
def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The eigenvalues of a square matrix (complex), linalg.eig's without the vectors."""
    _check_input(A, "linalg.eigvals")
    return with_out(bind(EIGVALS, (A,), {}), out, "linalg_eigvals", (A,))


__all__ = ["EigResult", "eig", "eigvals"]
