"""torch._dynamo._trace_wrapped_higher_order_op's TransformGetItemToIndex, which libraries
enter around index functions they vmap (transformers' attention masks): within it, indexing a
tensor with ints and tensors indexes with them all as int64 tensors, so that a 0-d tensor index
(a batched one under vmap) is never read as a Python number."""

from __future__ import annotations

from ..autograd.pytree import tree_flatten
from ..tensor.creation import tensor
from ..tensor.dtypes import int64
from ..tensor.tensor import Tensor
from ..tensor.torch_function import TorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """Within it, `x[i, j]` with ints and tensors indexes with tensors (see the module)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is Tensor.__getitem__ and isinstance(args[0], Tensor):
            indices = tree_flatten(args[1])[0]
            if all(isinstance(x, (Tensor, int)) and not isinstance(x, bool) for x in indices):
                converted = tuple(x if isinstance(x, Tensor) else tensor(x, dtype=int64)
                                  for x in indices)
                return func(args[0], converted)
        return func(*args, **(kwargs or {}))
