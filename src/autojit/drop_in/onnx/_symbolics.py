"""What torch.onnx's symbolic modules hold for the drop-in: their functions build an ONNX graph
during an export, which autojit cannot run, so each name is a function raising
NotImplementedError when called (a library only calls them from an export)."""

from __future__ import annotations


def unavailable(module: str, name: str):
    """A function named `name` of torch.onnx's `module` that raises when called."""
    def symbolic(*args, **kwargs):
        raise NotImplementedError(
            f"torch.onnx.{module}.{name} is missing from autojit: it builds an ONNX graph during "
            "an export, and autojit has no ONNX exporter")

    symbolic.__name__ = symbolic.__qualname__ = name
    symbolic.__module__ = f"torch.onnx.{module}"
    return symbolic


def module_getattr(module: str):
    """A module __getattr__ giving such a function for a public name."""
    def __getattr__(name: str):
        if name.startswith("_"):
            raise AttributeError(f"module 'torch.onnx.{module}' has no attribute {name!r}")
        return unavailable(module, name)

    return __getattr__
