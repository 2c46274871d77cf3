"""autojit.backends.cuda: the CUDA backend's switches, the float32 matmul precision
(autojit.set_float32_matmul_precision, linked to `matmul.allow_tf32` as torch links them), and
the attention backends scaled_dot_product_attention may use (SDPBackend, sdpa_kernel, which
torch.nn.attention exports).

autojit's CUDA products are its own tiled kernels in full float32 (no TF32, no reduced-precision
reductions), whatever these settings say: torch documents them as permissions, which a backend
may leave unused.
"""

from __future__ import annotations

import contextlib
import enum
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


# ---- scaled_dot_product_attention's backends ------------------------------------------------
# torch chooses among several attention kernels; autojit has one, the explicit composite of
# nn/functional/attention.py, which is torch's math backend. The flags are torch's settings,
# read back as set; scaled_dot_product_attention refuses to run when they leave out the math
# backend, as torch refuses when no enabled kernel fits (docs/nn.md).

class SDPBackend(enum.IntEnum):
    """The backends of scaled_dot_product_attention, as torch.nn.attention.SDPBackend names
    them; autojit's one kernel is MATH."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SDP_NAMES = {SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.FLASH_ATTENTION: "flash",
              SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.MATH: "math",
              SDPBackend.OVERRIDEABLE: "overrideable"}
_sdp_enabled = dict.fromkeys(_SDP_NAMES, True)


def _set_sdp(backend: SDPBackend, setter: str, enabled) -> None:
    _sdp_enabled[backend] = _check_bool(enabled, setter)


def flash_sdp_enabled() -> bool:
    return _sdp_enabled[SDPBackend.FLASH_ATTENTION]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid flash attention (autojit has none: its attention is the math kernel)."""
    _set_sdp(SDPBackend.FLASH_ATTENTION, "set_sdp_use_flash", enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp_enabled[SDPBackend.EFFICIENT_ATTENTION]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid memory-efficient attention (autojit has none)."""
    _set_sdp(SDPBackend.EFFICIENT_ATTENTION, "set_sdp_use_mem_efficient", enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp_enabled[SDPBackend.CUDNN_ATTENTION]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid cuDNN attention (autojit has none)."""
    _set_sdp(SDPBackend.CUDNN_ATTENTION, "set_sdp_use_cudnn", enabled)


def math_sdp_enabled() -> bool:
    """Whether the math backend, autojit's only attention kernel, may run."""
    return _sdp_enabled[SDPBackend.MATH]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math backend; forbidden, scaled_dot_product_attention raises."""
    _set_sdp(SDPBackend.MATH, "set_sdp_use_math", enabled)


def is_flash_attention_available() -> bool:
    """False: autojit has no flash attention kernel."""
    return False


def enabled_sdp_backends() -> list:
    """The backends the flags allow, in SDPBackend's order."""
    return [backend for backend in _SDP_NAMES if _sdp_enabled[backend]]


def set_sdp_backends(backends) -> None:
    for backend in _SDP_NAMES:
        _sdp_enabled[backend] = backend in backends


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Allow only `backends` (an SDPBackend or a list of them) in scaled_dot_product_attention
    for a `with` block, as torch.nn.attention.sdpa_kernel; the flags are restored after it.
    Without SDPBackend.MATH the attention raises: autojit's only kernel is the math one."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = enabled_sdp_backends()
    try:
        set_sdp_backends(list(dict.fromkeys(backends)))
        yield {}
    finally:
        set_sdp_backends(previous)


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True):
    """The deprecated form of sdpa_kernel (a FutureWarning, as torch's)."""
    warnings.warn("`autojit.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`autojit.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=3)
    chosen = [backend for backend, on in ((SDPBackend.FLASH_ATTENTION, enable_flash),
                                          (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                                          (SDPBackend.MATH, enable_math),
                                          (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    with sdpa_kernel(chosen) as context:
        yield context
