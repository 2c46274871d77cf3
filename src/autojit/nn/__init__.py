"""Neural-network building blocks: Parameter and the functional API (autojit.nn.functional)."""

from . import functional  # noqa: F401
from .parameter import Parameter

__all__ = ["Parameter", "functional"]
