"""autojit.backends.mkldnn: oneDNN's (MKL-DNN's) switches. autojit's CPU kernels are its own
(LLVM), so `is_available()` is False; `enabled`, `deterministic` and `allow_tf32` are accepted
and readable with torch's defaults, and change nothing. `flags()` sets them for a block and
`verbose(level)` is a context manager that does nothing, as torch's does where oneDNN is not
built in."""

from __future__ import annotations

import contextlib
import sys

from ._flags import checked_flags
from .mkl import verbose  # noqa: F401 - oneDNN's verbose output, accepted and ignored as MKL's

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2
_DEFAULTS = {"enabled": True, "deterministic": False, "allow_tf32": False}
_SETTERS = {"enabled": "set_enabled_mkldnn", "deterministic": "set_deterministic_mkldnn",
            "allow_tf32": "set_allow_tf32_mkldnn"}


def is_available() -> bool:
    """Whether oneDNN can be used: never, autojit does not use it."""
    return False


def is_acl_available() -> bool:
    """Whether oneDNN's Arm Compute Library backend can be used: never."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True):
    """Set the flags for a block, as torch.backends.mkldnn.flags does."""
    module = sys.modules[__name__]
    saved = {name: getattr(module, name) for name in _DEFAULTS}
    try:
        module.enabled, module.deterministic = enabled, deterministic
        module.allow_tf32 = allow_tf32
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


checked_flags(__name__, _DEFAULTS, _SETTERS)
