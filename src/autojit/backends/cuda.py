"""autojit.backends.cuda: the CUDA backend's switches, and the float32 matmul precision
(autojit.set_float32_matmul_precision, linked to `matmul.allow_tf32` as torch links them).

autojit's CUDA products are its own tiled kernels in full float32 (no TF32, no reduced-precision
reductions), whatever these settings say: torch documents them as permissions, which a backend
may leave unused.
"""

from __future__ import annotations

import importlib.util
import warnings

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest", "fp16_reduction": True, "bf16_reduction": True}


def is_built() -> bool:
    """Whether autojit can run CUDA tensors here at all: numba (numba-cuda) is installed. Whether
    a GPU is present is autojit.cuda.is_available()."""
    return importlib.util.find_spec("numba") is not None


def set_float32_matmul_precision(precision: str) -> None:
    """Record the precision float32 products may use ("highest", "high" or "medium"); autojit
    computes them in float32 at every setting."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision set_float32_matmul_precision recorded ("highest" at first)."""
    return _state["precision"]


def _check_bool(value, setter: str) -> bool:
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    return value


class _Matmul:
    """`autojit.backends.cuda.matmul`: allow_tf32 (True when the float32 matmul precision is not
    "highest", as torch ties them) and the reduced-precision reduction flags."""

    @property
    def allow_tf32(self) -> bool:
        return _state["precision"] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value) -> None:
        _state["precision"] = "high" if _check_bool(value, "set_allow_tf32_cublas") else \
            "highest"

    @property
    def allow_fp16_reduced_precision_reduction(self) -> bool:
        return _state["fp16_reduction"]

    @allow_fp16_reduced_precision_reduction.setter
    def allow_fp16_reduced_precision_reduction(self, value) -> None:
        _state["fp16_reduction"] = _check_bool(
            value, "set_allow_fp16_reduced_precision_reduction")

    @property
    def allow_bf16_reduced_precision_reduction(self) -> bool:
        return _state["bf16_reduction"]

    @allow_bf16_reduced_precision_reduction.setter
    def allow_bf16_reduced_precision_reduction(self, value) -> None:
        _state["bf16_reduction"] = _check_bool(
            value, "set_allow_bf16_reduced_precision_reduction")


matmul = _Matmul()
