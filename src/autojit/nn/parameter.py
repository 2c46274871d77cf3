"""Parameter: a leaf Tensor that requires grad by default and marks a module's weights.

Assigning a Parameter to a Module attribute registers it (nn/module.py), so that parameters(),
state_dict() and optimizers find it.
"""

from __future__ import annotations

from ..interop import serialization
from ..tensor.tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf, requires_grad=True unless told otherwise.

    It shares storage with the tensor it is made from.

        >>> import autojit
        >>> weight = autojit.nn.Parameter(autojit.zeros(2))
        >>> weight.requires_grad, weight.is_leaf
        (True, True)
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad: bool = True):
        from ..tensor.creation import empty

        source = empty(0) if data is None else data
        self = object.__new__(cls)
        self._init(source._concrete("Parameter()"), source.dtype)
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data=None, requires_grad: bool = True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        copied = type(self)(Tensor._make(self._concrete("deepcopy").copy(), self._dtype),
                            self._requires_grad)
        if self._grad is not None:
            copied._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._concrete("pickle"), self._dtype.name,
                                     self._requires_grad))


def _rebuild_parameter(data, dtype_name, requires_grad):
    from ..tensor import dtypes

    return Parameter(Tensor._make(data.copy(), dtypes.from_name(dtype_name)), requires_grad)


serialization.register_tensor_class("parameter", Parameter)  # autojit.save keeps the kind
