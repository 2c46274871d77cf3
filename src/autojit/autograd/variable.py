"""The deprecated autograd.Variable: kept so that old code runs; it returns Tensors.

Since tensors carry autograd state themselves, `Variable(tensor, requires_grad=...)` is a new
leaf sharing the tensor's storage and version counter (the tensor's `detach()`), with
requires_grad set as asked. `isinstance(x, Variable)` is true for every Tensor, as in torch.
"""

from __future__ import annotations

import warnings

from ..tensor.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False, volatile=False) -> Tensor (deprecated)."""

    from .graph_tasks import ExecutionEngine as _engine_type

    _execution_engine = _engine_type()
    del _engine_type

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "autojit.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            from ..tensor.creation import tensor

            return tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        result = data.detach()
        if requires_grad:
            result.requires_grad_(True)
        return result
