"""torch.onnx under the drop-in: programs import it (and may guard an export behind a flag);
autojit has no ONNX exporter, so `export` and `dynamo_export` raise NotImplementedError naming
the way to keep a model here (its state_dict, with torch.save).
"""

from __future__ import annotations


def _no_export(name: str):
    def function(*args, **kwargs):
        raise NotImplementedError(
            f"torch.onnx.{name} is missing from autojit: autojit has no ONNX exporter; save the "
            "model's state_dict with torch.save (autojit.save) instead")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.onnx.{name}: raises NotImplementedError (no ONNX exporter)."
    return function


export = _no_export("export")
dynamo_export = _no_export("dynamo_export")


def is_in_onnx_export() -> bool:
    """False: autojit never exports to ONNX."""
    return False


class OperatorExportTypes:
    """torch.onnx's export types, for programs that name one in a call that then raises."""

    ONNX, ONNX_ATEN, ONNX_ATEN_FALLBACK, ONNX_FALLTHROUGH = range(4)


class TrainingMode:
    """torch.onnx's training modes, for programs that name one in a call that then raises."""

    EVAL, PRESERVE, TRAINING = range(3)


__all__ = ["OperatorExportTypes", "TrainingMode", "dynamo_export", "export",
           "is_in_onnx_export"]
