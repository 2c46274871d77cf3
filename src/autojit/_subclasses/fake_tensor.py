"""autojit._subclasses.fake_tensor: `is_fake(x)`, torch's test for a tensor without data that
stands for one while a graph is captured (a FakeTensor, under torch.compile or export). In
autojit that is a symbolic tensor of a trace (autojit.compile, make_graph): libraries ask so
that they skip reading values (kornia's checks of its inputs), which would break the graph.
FakeTensorMode is the name only: making one raises NotImplementedError."""

from __future__ import annotations

from ..tensor.tensor import Tensor

__all__ = ["FakeTensor", "FakeTensorMode", "is_fake"]


def is_fake(x: object) -> bool:
    """Whether `x` is a tensor with no data that a trace is capturing (a meta tensor is not:
    it is real, only without values, as in torch)."""
    return isinstance(x, Tensor) and x._payload is None


class _FakeTensorType(type):
    def __instancecheck__(cls, instance) -> bool:
        return is_fake(instance)


class FakeTensor(metaclass=_FakeTensorType):
    """torch's class of the tensors is_fake answers for: `isinstance(x, FakeTensor)` is
    is_fake(x) (autojit's symbolic tensors are Tensors, not instances of a class of their
    own)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("autojit makes no FakeTensor: the symbolic tensors of a trace are "
                        "Tensors (is_fake tells them)")


class FakeTensorMode:
    """torch's dispatch mode under which tensors are made fake (shapes and dtypes, no data).
    autojit has no dispatch modes (its tracer makes the symbolic tensors of a trace), so the
    name exists, for imports, and making one raises NotImplementedError."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "FakeTensorMode is not supported by autojit: it has no dispatch modes (autojit."
            "compile traces a function on symbolic tensors of its own; meta tensors carry "
            "shapes and dtypes without data)")
