"""Ready-made parametrizations, torch.nn.utils.parametrizations's: weight_norm, as a
parametrization (nn/utils/parametrize.py) with torch's `parametrizations.weight.original0`
(magnitude) and `original1` (direction) state_dict keys. The recombination is autojit ops, so
unlike the hook form (weight_norm.py) it compiles without a graph break."""

from __future__ import annotations

from ..module import Module
from . import parametrize
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


__all__ = ["weight_norm"]
