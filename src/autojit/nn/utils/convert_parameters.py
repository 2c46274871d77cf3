"""parameters_to_vector and vector_to_parameters, with torch.nn.utils's names: all parameters
as one flat vector and back (the flat form second-order methods and model averaging use)."""

from __future__ import annotations

from ...ops.layout import cat
from ...tensor.tensor import Tensor


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated, in order, into one vector."""
    return cat([param.reshape(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of `vec` into the parameters' data, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[offset:offset + count].view_as(param).data
        offset += count


__all__ = ["parameters_to_vector", "vector_to_parameters"]
