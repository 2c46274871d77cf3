"""The orthogonal parametrization's module (parametrizations.orthogonal registers it): a matrix,
or a batch of them, mapped to an orthogonal one by the matrix exponential or the Cayley map of
a skew-symmetric matrix, or by a product of Householder reflectors, as torch's
`_Orthogonal` does, with its dynamic trivialization (Lezcano-Casado, 2019): a `base` buffer
that the map's result multiplies.

The matrix exponential and the Householder product are written here from matmul and
elementwise ops, so their gradients (and second derivatives) come from autograd; torch has
them as ops of their own (matrix_exp, linalg.householder_product) with the same values.
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd import no_grad
from ...ops.layout import cat
from ...ops.linalg.decompositions import qr
from ...ops.linalg.solvers import solve
from ...tensor.creation import eye, randn, tensor
from ...tensor.type_info import finfo
from ..module import Module

ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")

# The Taylor series is summed for matrices scaled to a 1-norm of at most this, then squared
# back: its 18 terms leave an error below double precision's epsilon.
_TAYLOR_NORM = 0.5
_TAYLOR_DEGREE = 18


def matrix_exp(a):
    """exp(a) of a square matrix or batch: scaling and squaring around a Taylor series. The
    number of squarings follows from a's norm, so a compiled function breaks its graph here."""
    n = a.shape[-1]
    norm = float(a.detach().abs().sum(-2).amax()) if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm / _TAYLOR_NORM))) if norm > _TAYLOR_NORM else 0
    scaled = a / 2.0 ** squarings
    identity = eye(n, dtype=a.dtype, device=a.device)
    result = identity
    for k in range(_TAYLOR_DEGREE, 0, -1):  # Horner: I + X (I + X/2 (I + X/3 (...)))
        result = identity + (scaled @ result) / k
    for _ in range(squarings):
        result = result @ result
    return result


def householder_product(reflectors, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i column i of the
    (..., n, k) `reflectors` below the diagonal with a 1 on it (LAPACK's orgqr)."""
    n, k = reflectors.shape[-2], reflectors.shape[-1]
    vectors = reflectors.tril(-1) + eye(n, k, dtype=reflectors.dtype, device=reflectors.device)
    result = eye(n, k, dtype=reflectors.dtype, device=reflectors.device)
    result = result.expand(*reflectors.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = vectors[..., :, i:i + 1]
        result = result - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mT @ result))
    return result


def _householder_form(matrix):
    """The reflectors of matrix = QR in LAPACK's geqrf form (through NumPy), with the signs of
    R's diagonal on the diagonal, flipped where tau is 0: what forward maps back to Q."""
    packed, tau = np.linalg.qr(matrix.detach().numpy(), mode="raw")
    packed = np.ascontiguousarray(np.swapaxes(packed, -1, -2))
    diagonal = np.arange(tau.shape[-1])
    signs = np.sign(packed[..., diagonal, diagonal])
    signs[tau == 0.0] *= -1
    packed[..., diagonal, diagonal] = signs
    return tensor(packed, dtype=matrix.dtype)


def _is_orthogonal(q) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    identity = eye(k, dtype=q.dtype, device=q.device)
    return bool(((q.mT @ q) - identity).abs().le(10.0 * n * finfo(q.dtype).eps).all())


def _make_orthogonal(a):
    """The Q of a = QR (a tall) with the diagonal of R non-negative."""
    q, r = qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """original -> an orthogonal matrix, by `orthogonal_map`; with use_trivialization the
    result is `base @ map(original)` and assigning a value resets `base` to it."""

    def __init__(self, weight, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex():
            raise ValueError("autojit's orthogonal parametrization takes real matrices only")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            skew = x - x.mT
            if self.orthogonal_map == "matrix_exp":
                q = matrix_exp(skew)
            else:
                identity = eye(n, dtype=skew.dtype, device=skew.device)
                q = solve(identity - 0.5 * skew, identity + 0.5 * skew)
            if n != k:
                q = q[..., :k]
        else:
            below = x.tril(-1)
            tau = 2.0 / (1.0 + (below * below).sum(dim=-2))
            q = householder_product(below, tau)
            # The diagonal's integer part (-1 as right_inverse sets it) flips column signs.
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q):
        with no_grad():
            if tuple(q.shape) != tuple(self.shape):
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {q.shape}.")
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                packed = _householder_form(q)
                return packed.mT if transpose else packed
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                completion = randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = _make_orthogonal(cat([q, completion], dim=-1))
            self.base = q
            negative_identity = q_init.new_zeros(q_init.shape)
            negative_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return negative_identity
