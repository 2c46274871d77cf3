"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric eigenproblem A x = λ B x,
by the locally optimal block preconditioned conjugate gradient method, for matrices too large
to decompose whole (dense, or sparse COO and CSR).

Two paths, as torch has:

- **Without gradients** the iteration is SciPy's `scipy.sparse.linalg.lobpcg` (Knyazev's
  reference implementation), started from `X` (or from `randn(m, n)` drawn from the global
  generator, as torch draws it, so that the random numbers after the call are torch's), with
  the preconditioner `iK`, at most `niter` iterations. torch's `tol` is relative to the size of
  A (its residual test divides by the norm of A); SciPy's is absolute, so it is given `tol`
  times A's Frobenius norm. The n pairs found are sorted (descending for the largest) and the
  first k returned, in A's dtype.
- **When A or B requires grad** the pairs are the exact ones of the whole eigendecomposition,
  `eigh` of (A + Aᵀ)/2 (torch symmetrizes A the same way, so that a gradient step keeps A
  symmetric), reduced by B's Cholesky factor for the generalized problem: autograd then
  differentiates through eigh's rule to any order, in A and in B (torch's backward refuses a
  B). This costs a full decomposition, O(m³), where torch's backward solves for the k pairs.

`tracker` (torch's per-iteration callback, handed torch's LOBPCG worker object) is refused;
`method` and the `ortho_*params` choose among torch's own iteration variants and have no
counterpart here: they are checked and otherwise ignored.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...tensor import dtypes
from ...tensor.creation import from_numpy
from ...tensor.layouts import sparse_coo, sparse_csr, strided
from ...tensor.random_factories import randn
from ...tensor.tensor import Tensor
from .decompositions import eigh
from .solvers import cholesky, solve_triangular

_EPS = {"float32": 1.2e-07, "float64": 2.23e-16}


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(E, X): the k largest eigenvalues of the symmetric A (of A x = λ B x with B), and
    their eigenvectors as columns; the smallest with `largest=False`."""
    if A.shape[-2] != A.shape[-1]:
        raise ValueError(f"lobpcg: A must be square, got shape {tuple(A.shape)}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise ValueError(f"lobpcg: A and B must have the same shape, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if tracker is not None:
        raise NotImplementedError("lobpcg: tracker is not supported by autojit (its iteration "
                                  "is SciPy's, not torch's LOBPCG worker)")
    method = "ortho" if method is None else method
    if method not in ("basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    dtype = A.dtype if A.dtype in (dtypes.float32, dtypes.float64) else dtypes.float32
    tol = _EPS[dtype.name] ** 0.5 if tol is None else tol
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    largest = True if largest is None else largest
    if A.requires_grad or (B is not None and B.requires_grad):
        return _exact(A, B, k, largest)
    return _iterated(A, B, X, iK, k, n, 1000 if niter is None else niter, tol, largest, dtype)


def _exact(A: Tensor, B: Tensor | None, k: int, largest: bool) -> tuple:
    """The k extreme eigenpairs from the whole decomposition: differentiable to any order."""
    if A.layout is not strided or (B is not None and B.layout is not strided):
        raise NotImplementedError("lobpcg: gradients through a sparse A or B are not "
                                  "supported by autojit")
    A = (A + A.mT) / 2
    if B is None:
        values, vectors = eigh(A)
    else:
        L = cholesky((B + B.mT) / 2)
        # L⁻¹ A L⁻ᵀ y = λ y, x = L⁻ᵀ y: B-orthonormal eigenvectors of the pencil (A, B).
        inner = solve_triangular(L, A, upper=False)
        inner = solve_triangular(L, inner.mT, upper=False).mT
        values, reduced = eigh((inner + inner.mT) / 2)
        vectors = solve_triangular(L.mT, reduced, upper=True)
    if largest:
        values, vectors = values.flip(-1), vectors.flip(-1)
    return values[..., :k], vectors[..., :k]


def _matrix(t: Tensor | None):
    """A tensor as SciPy takes it: a NumPy array, or a SciPy sparse array."""
    if t is None:
        return None
    if t.layout is sparse_coo:
        import scipy.sparse

        t = t.coalesce()
        indices = t.indices().numpy()
        return scipy.sparse.coo_array((t.values().numpy(), (indices[0], indices[1])),
                                      shape=tuple(t.shape)).tocsr()
    if t.layout is sparse_csr:
        import scipy.sparse

        return scipy.sparse.csr_array((t.values().numpy(), t.col_indices().numpy(),
                                       t.crow_indices().numpy()), shape=tuple(t.shape))
    if t.layout is not strided:
        raise NotImplementedError(f"lobpcg: tensors of layout {t.layout} are not supported")
    return t.detach().numpy()


def _norm(matrix) -> float:
    if isinstance(matrix, np.ndarray):
        return float(np.linalg.norm(matrix))
    return float(np.linalg.norm(matrix.data))


def _iterated(A, B, X, iK, k, n, niter, tol, largest, dtype) -> tuple:
    """The k pairs by SciPy's LOBPCG iteration, batch entry by batch entry."""
    import scipy.sparse.linalg

    batch = tuple(A.shape[:-2])
    m = A.shape[-1]
    count = int(np.prod(batch)) if batch else 1
    As = [A] if not batch else list(A.reshape(count, m, m).unbind(0))
    Bs = [B] * count if B is None or not batch else list(B.reshape(count, m, m).unbind(0))
    Xs = [X] * count if X is None or not batch else list(X.reshape(count, m, n).unbind(0))
    preconditioner = _matrix(iK)
    values_out = np.empty((count, k), dtype=dtype.numpy)
    vectors_out = np.empty((count, m, k), dtype=dtype.numpy)
    for index in range(count):
        start = randn((m, n), dtype=dtype) if Xs[index] is None else Xs[index]
        if tuple(start.shape) != (m, n):
            raise ValueError(f"lobpcg: X must have shape ({m}, {n}), got {tuple(start.shape)}")
        a = _matrix(As[index])
        with warnings.catch_warnings():
            # SciPy warns where it stops short of `tol` or solves a small problem densely;
            # torch returns its pairs silently in both cases.
            warnings.simplefilter("ignore")
            values, vectors = scipy.sparse.linalg.lobpcg(
                a, start.detach().numpy().astype(dtype.numpy), B=_matrix(Bs[index]),
                M=preconditioner, tol=tol * max(_norm(a), 1e-300), maxiter=niter,
                largest=largest)
        order = np.argsort(-values if largest else values, kind="stable")[:k]
        values_out[index] = values[order]
        vectors_out[index] = vectors[:, order]
    values_t = from_numpy(values_out.reshape(*batch, k))
    vectors_t = from_numpy(vectors_out.reshape(*batch, m, k))
    return values_t, vectors_t
