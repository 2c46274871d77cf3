"""Ready-made parametrizations, torch.nn.utils.parametrizations's: weight_norm, as a
parametrization (nn/utils/parametrize.py) with torch's `parametrizations.weight.original0`
(magnitude) and `original1` (direction) state_dict keys, spectral_norm (power-iteration
buffers `parametrizations.weight.0._u` and `_v`), and orthogonal (orthogonal_maps.py: the
matrix exponential, Cayley and Householder maps, with the `parametrizations.weight.0.base`
buffer of the dynamic trivialization). They are autojit ops (the power iteration updates its
buffers in place, as batch norm's statistics), so unlike the hook forms (weight_norm.py,
spectral_norm.py) they compile without a graph break."""

from __future__ import annotations

from ...autograd import no_grad
from ...tensor.creation import empty
from ..init import normal_
from ..module import Module
from . import parametrize
from .orthogonal_maps import ORTHOGONAL_MAPS, _Orthogonal
from .weight_norm import norm_except_dim


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize module.<name> as g * v / ||v|| (norm over every dim but `dim`); returns
    the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def _normalize(x, eps: float):
    return x / x.norm().clamp(min=eps)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = self._reshape_weight_to_matrix(weight)
            rows, cols = matrix.shape
            with no_grad():
                u = normal_(empty(rows, dtype=weight.dtype, device=weight.device))
                v = normal_(empty(cols, dtype=weight.dtype, device=weight.device))
                self.register_buffer("_u", _normalize(u, eps))
                self.register_buffer("_v", _normalize(v, eps))
            self._power_method(matrix.detach(), 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, matrix, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(matrix @ self._v, self.eps))
                self._v.copy_(_normalize(matrix.T @ self._u, self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        matrix = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / (u * (matrix @ v)).sum()

    def right_inverse(self, value):
        return value


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None):
    """Divide module.<name> by its spectral norm, estimated by power iteration in training
    mode (a parametrization); returns the module."""
    weight = getattr(module, name, None)
    if not hasattr(weight, "shape"):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def orthogonal(module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True):
    """Make module.<name> (a matrix or a batch of them) orthogonal: orthonormal columns when it
    is tall, rows when it is wide, through `orthogonal_map` ("matrix_exp" by default for square
    matrices, "householder" otherwise, "cayley"); returns the module.

        >>> import autojit
        >>> layer = autojit.nn.utils.parametrizations.orthogonal(autojit.nn.Linear(3, 3))
        >>> q = layer.weight
        >>> bool((q.T @ q - autojit.eye(3)).abs().max() < 1e-5)
        True
    """
    weight = getattr(module, name, None)
    if not hasattr(weight, "shape"):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or \
            weight.is_complex() else "householder"
    if orthogonal_map not in ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    parametrize.register_parametrization(
        module, name, _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True)
    return module


__all__ = ["weight_norm", "spectral_norm", "orthogonal"]
