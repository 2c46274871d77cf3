"""torch._functorch.utils under the drop-in: `enable_single_level_autograd_function`, the
switch torch's functorch turns on around a `_SingleLevelFunction` it applies inside a
transform's rule, and `argnums_t`, the type of a transform's argnums.
"""

from __future__ import annotations

import contextlib
import threading

argnums_t = int | tuple[int, ...]

_switch = threading.local()


def get_single_level_autograd_function_allowed() -> bool:
    """Whether a single-level autograd Function may be applied here (in this thread)."""
    return getattr(_switch, "allowed", False)


def set_single_level_autograd_function_allowed(allowed: bool) -> None:
    _switch.allowed = bool(allowed)


@contextlib.contextmanager
def enable_single_level_autograd_function():
    """Inside, single-level autograd Functions may be applied; the previous setting comes back
    on exit, as with torch's."""
    previous = get_single_level_autograd_function_allowed()
    try:
        set_single_level_autograd_function_allowed(True)
        yield
    finally:
        set_single_level_autograd_function_allowed(previous)


__all__ = ["argnums_t", "enable_single_level_autograd_function"]
