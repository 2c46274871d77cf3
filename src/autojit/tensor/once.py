"""Warnings given once per process (torch's TORCH_WARN_ONCE): `warn_once`, and torch's switch
that gives them every time (`set_warn_always`, `is_warn_always_enabled`).

Each is named by a key; `given` holds the keys of those given. While a compiled function is
traced, `warnings.warn` is intercepted (ir/printing.py) and a warning becomes an effect that
every run of the executable repeats, as eager repeats the call. A once-per-process warning
must not be repeated, and must still come in its place among the call's other warnings and
prints: the trace's capture makes it an effect that the first run gives (marking the key
given then), and later runs skip. Were the trace thrown away (a graph break), the key is not
marked, so the call's eager run gives the warning.
"""

from __future__ import annotations

import warnings

from .state import state

given: set = set()
_warn = warnings.warn  # bound before any trace replaces the module's attribute
_WARN_ALWAYS = [False]


def set_warn_always(b: bool) -> None:
    """Record whether warnings torch gives once should be given every time (autojit's are
    Python warnings, whose filters decide)."""
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """What set_warn_always set."""
    return _WARN_ALWAYS[0]


def warn_once(key, message: str, category=UserWarning, stacklevel: int = 1) -> None:
    """Warn unless the warning `key` names was given (or set_warn_always is on, as torch's
    TORCH_WARN_ONCE); stacklevel counts from the caller."""
    if key in given and not _WARN_ALWAYS[0]:
        return
    tracer = state.tracer
    capture = getattr(tracer, "prints", None) if tracer is not None else None
    if capture is not None and capture.capture_once(key, message, category, stacklevel + 1):
        return
    given.add(key)
    _warn(message, category, stacklevel=stacklevel + 1)
