"""autojit.fx.passes.shape_prop: torch.fx's ShapeProp, an Interpreter that runs a GraphModule
on example inputs and records each node's result as `node.meta["tensor_meta"]` (a
TensorMetadata: shape, dtype, requires_grad, stride, memory format) and its type as
`node.type`. Nested results (a tuple of tensors) get a matching nest of TensorMetadata. autojit
has no fake tensor mode, so the example inputs are real tensors and the graph really runs.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...tensor.memory_format import channels_last, channels_last_3d, contiguous_format
from ...tensor.tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result: Tensor) -> TensorMetadata:
    memory_format = None
    for query in (contiguous_format, channels_last, channels_last_3d):
        try:
            if result.is_contiguous(memory_format=query):
                memory_format = query
                break
        except RuntimeError:  # a format for another rank
            continue
    return TensorMetadata(result.shape, result.dtype, result.requires_grad,
                          tuple(result.stride()), memory_format, False, {})


class ShapeProp(Interpreter):
    """`ShapeProp(gm).propagate(*example_inputs)` runs `gm` and annotates its nodes."""

    def __init__(self, gm, fake_mode: Any = None) -> None:
        if fake_mode is not None:
            raise NotImplementedError("autojit has no fake tensor mode: pass fake_mode=None "
                                      "and real example inputs")
        super().__init__(gm)
        self.fake_module = None
        self.fake_mode = None
        self.real_module = self.module

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = []

        def extract(value):
            if isinstance(value, Tensor):
                found.append(True)
                return _extract_tensor_metadata(value)
            return value

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args) -> Any:
        """Run the module on `args`, recording every node's metadata; returns its result."""
        return super().run(*args)
