"""Deterministic algorithms: torch's process-wide switch (`use_deterministic_algorithms`, the
debug mode that is the same switch as a number) and what it changes here.

autojit's CPU kernels, eager and compiled, are deterministic: a result does not depend on
thread timing (reductions split over cores combine their parts in a fixed order), so on the CPU
the switch changes what it changes in torch: `empty` and its kin fill their memory (NaN, an
integer dtype's largest value, True) while `autojit.utils.deterministic.fill_uninitialized_memory`
is on. On CUDA, the eager kernels that add with atomics where two writes may meet (scatter_add,
index_put with accumulate=True, on floats) call `alert_not_deterministic`, which raises torch's
error (or warns, with warn_only=True) while the switch is on; docs/differences.md lists the
compiled CUDA reductions that also add atomically.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes


class _Settings:
    enabled = False
    warn_only = False
    fill_uninitialized_memory = True


SETTINGS = _Settings()


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make ops that have no deterministic implementation raise (with warn_only, warn) while
    `mode` is on, and fill the memory of `empty` tensors (see the module docstring)."""
    if mode.__class__ is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if warn_only.__class__ is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    SETTINGS.enabled = mode
    SETTINGS.warn_only = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether use_deterministic_algorithms(True) is in effect."""
    return SETTINGS.enabled


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether use_deterministic_algorithms was turned on with warn_only=True."""
    return SETTINGS.warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """The same switch as a level: 0 or "default" (off), 1 or "warn" (warn_only), 2 or
    "error" (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 when the switch is off, 1 when it only warns, 2 when it raises."""
    if not SETTINGS.enabled:
        return 0
    return 1 if SETTINGS.warn_only else 2


def alert_not_deterministic(caller: str) -> None:
    """torch's alert for an op without a deterministic implementation: an error, or a
    warning with warn_only, while deterministic algorithms are on."""
    if not SETTINGS.enabled:
        return
    message = (f"{caller} does not have a deterministic implementation, but you set "
               "'autojit.use_deterministic_algorithms(True)'. You can turn off determinism just "
               "for this operation, or you can use the 'warn_only=True' option, if that's "
               "acceptable for your application.")
    if SETTINGS.warn_only:
        warnings.warn(message, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(message)


def uninitialized_fill(dtype):
    """The value `empty` fills with while deterministic algorithms fill uninitialized memory
    (torch's: NaN, the integer dtype's largest value, True), else None."""
    if not (SETTINGS.enabled and SETTINGS.fill_uninitialized_memory):
        return None
    if dtype.is_floating_point:
        return float("nan")
    if dtype.category == dtypes.BOOL:
        return True
    return int(np.iinfo(dtype.numpy).max)
