"""autojit.backends.cudnn: cuDNN's flags. autojit has no cuDNN (its CUDA kernels are its own), so
`is_available()` is False and `version()` None; `enabled`, `benchmark`, `deterministic` and
`allow_tf32` are accepted and readable, with torch's defaults, and change nothing: autojit's
kernels are deterministic and compute float32 in float32."""

from __future__ import annotations

import contextlib
import sys

from ._flags import checked_flags

_DEFAULTS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
# torch's names in its error for a non-bool (allow_tf32's names cuBLAS, as torch's does).
_SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
            "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}
benchmark_limit = 10


def is_available() -> bool:
    """Whether cuDNN can be used: never, autojit does not use cuDNN."""
    return False


def version() -> None:
    """cuDNN's version: None, autojit does not use cuDNN."""
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, **_ignored):
    """Set the flags for a block, as torch.backends.cudnn.flags does."""
    module = sys.modules[__name__]
    saved = {name: getattr(module, name) for name in _DEFAULTS}
    chosen = {"enabled": enabled, "benchmark": benchmark, "deterministic": deterministic,
              "allow_tf32": allow_tf32}
    try:
        for name, value in chosen.items():
            setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


checked_flags(__name__, _DEFAULTS, _SETTERS)
