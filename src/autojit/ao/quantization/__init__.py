"""autojit.ao.quantization: QuantStub and DeQuantStub, the modules that mark where a model's
values would be quantized and dequantized. In a float model (before torch's prepare and
convert, and always in autojit, which has no quantized kernels) each passes its input through,
as torch's does. Quantization itself (observers, QConfig, prepare, convert, fuse_modules) is
not here: a name of it raises torch's AttributeError for a missing attribute."""

from __future__ import annotations

from ...nn.module import Module

__all__ = ["DeQuantStub", "QuantStub"]


class QuantStub(Module):
    """Where a float value would be quantized: the identity in a float model."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(QuantStub):
    """Where a quantized value would be dequantized: the identity in a float model."""
