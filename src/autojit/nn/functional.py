"""autojit.nn.functional: activations, softmax family and losses, written as composites."""

from __future__ import annotations

from ..ops.composite import gelu, relu, silu, softplus  # noqa: F401
from ..ops.elementwise import sigmoid, tanh  # noqa: F401
