"""autojit._subclasses: torch._subclasses' question libraries ask of a tensor, whether it is a
fake tensor (fake_tensor.is_fake). torch's FakeTensor carries a shape and a dtype without data
while a graph is captured; autojit's counterpart is the symbolic tensor of a trace."""

from .fake_tensor import FakeTensor

__all__ = ["FakeTensor"]
