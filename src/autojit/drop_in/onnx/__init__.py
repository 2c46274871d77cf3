"""torch.onnx under the drop-in: programs import it (and may guard an export behind a flag);
autojit has no ONNX exporter, so `export` and `dynamo_export` raise NotImplementedError naming
the way to keep a model here (its state_dict, with torch.save).

Libraries register ONNX symbolic functions for their operators when they are imported
(torchvision's nms, roi_align): `register_custom_op_symbolic` keeps them, and the symbolic
helpers they are written with (symbolic_opset11.py, symbolic_helper.py) exist, each raising
NotImplementedError if called, which only an export would do.
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


class ONNXProgram:
    """torch.onnx.ONNXProgram, the result type of torch's dynamo export, named in libraries'
    annotations; no export makes one here."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.onnx.ONNXProgram: autojit has no ONNX exporter")


def is_in_onnx_export() -> bool:
    """False: autojit never exports to ONNX."""
    return False


class OperatorExportTypes:
    """torch.onnx's export types, for programs that name one in a call that then raises."""

    ONNX, ONNX_ATEN, ONNX_ATEN_FALLBACK, ONNX_FALLTHROUGH = range(4)


class TrainingMode:
    """torch.onnx's training modes, for programs that name one in a call that then raises."""

    EVAL, PRESERVE, TRAINING = range(3)


class TensorProtoDataType:
    """ONNX's element type numbers (TensorProto.DataType), which symbolic functions cast to."""

    UNDEFINED, FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, \
        DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = range(17)


# (operator's qualified name, opset version) -> its symbolic function, as registered.
custom_op_symbolics: dict = {}


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn, opset_version: int) -> None:
    """Keep `symbolic_fn` as the ONNX symbolic of the operator `symbolic_name` ("ns::op") at
    `opset_version`, as torch does (no exporter here reads it)."""
    if "::" not in symbolic_name:
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name must "
                         "match the format domain::name, and should start with a letter and "
                         "contain only alphanumerical characters")
    custom_op_symbolics[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    custom_op_symbolics.pop((symbolic_name, opset_version), None)


__all__ = ["ONNXProgram", "OperatorExportTypes", "TensorProtoDataType", "TrainingMode",
           "dynamo_export", "export", "is_in_onnx_export", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic"]
