"""torch.svd_lowrank and torch.pca_lowrank: Halko, Martinsson and Tropp's randomized
low-rank SVD, as torch's _lowrank.py computes it: a random Gaussian sketch of A's range refined
by `niter` power iterations (each orthonormalized by QR), then the SVD of A projected onto that
basis. Written in autojit ops, so the factors differentiate (through qr and svd) and the
sketch draws from autojit's default generator.
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.creation import randn
from ..composite import mean
from . import matmul
from .decompositions import qr, svd


def _floating(A):
    return A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else dtypes.float32


def _approximate_basis(A, q: int, niter: int, M=None):
    """An orthonormal basis Q (m x q) approximating the range of A - M."""
    R = randn(A.shape[-1], q, dtype=_floating(A), device=A.device)
    X = matmul(A, R)
    if M is not None:
        X = X - matmul(M, R)
    Q = qr(X).Q
    for _ in range(niter):
        X = matmul(A.mH, Q)
        if M is not None:
            X = X - matmul(M.mH, Q)
        Q = qr(X).Q
        X = matmul(A, Q)
        if M is not None:
            X = X - matmul(M, Q)
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = svd(B, full_matrices=False)
    V, U = Vh.mH, matmul(Q, U)
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):
    """(U, S, V): an approximate rank-q SVD of A - M (A ~ U diag(S) V^H), computed from a
    random sketch refined by `niter` power iterations."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """(U, S, V): the approximate principal components of the rows of A (centered first when
    `center`), from svd_lowrank; q defaults to min(6, m, n)."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter)
    return _svd_lowrank(A - mean(A, -2, keepdim=True), q, niter)
