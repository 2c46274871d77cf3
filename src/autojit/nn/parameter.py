"""Parameter: a leaf Tensor that requires grad by default and marks a module's weights."""

from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf, requires_grad=True unless told otherwise."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad: bool = True):
        from ..creation import empty

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
