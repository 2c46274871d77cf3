"""autojit.nn.modules.activation: the activation layers, at torch's module path (the classes are
autojit.nn's)."""

from __future__ import annotations

from ..activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Tanh,
)

__all__ = [
    "ELU", "GELU", "LeakyReLU", "LogSigmoid", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax",
    "Softmin", "Softplus", "Tanh"
]
