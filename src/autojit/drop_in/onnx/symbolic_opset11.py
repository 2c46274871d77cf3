"""torch.onnx.symbolic_opset11 under the drop-in: the ONNX opset 11 symbolic functions that
libraries write their operators' symbolics with (torchvision's nms); every one raises
NotImplementedError if called, as autojit has no ONNX exporter (_symbolics.py)."""

from __future__ import annotations

from ._symbolics import module_getattr

__getattr__ = module_getattr("symbolic_opset11")
