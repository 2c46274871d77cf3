"""The text of a symbolic scalar (SymInt, SymFloat in symbolic_scalars.py).

The symbol's name where autojit asks (a graph's text, a log line), the call's value where the
user's code does (a print, an f-string, `str(n)`), and, while tracing, what ir/ installs in
FORMATTER: a token printed with each call's value.
"""

from __future__ import annotations

import os
import sys

from .symbolic_expr import poly_source

# How a symbolic scalar formats while tracing (`f"{loss.item():.3f}"`): installed by ir/trace.py
# (a token printed with each call's value, ir/printing.py), else the value specializes.
FORMATTER: list = []


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _from_autojit() -> bool:
    """Whether the text of a symbolic size is asked for by autojit itself (a graph's text, a
    log line: the symbol's name), not by the user's code (a print, an f-string, `str(n)`: the
    value, each run's own)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        if frame.f_code.co_name not in ("__repr__", "__str__", "__format__"):
            return True
        frame = frame.f_back  # autojit's own repr of a shape the user prints
    return False


# Above 0 while a traced print() formats its arguments (ir/printing.py): a size inside one
# (`print(tuple(out.shape))`) takes each run's text, as the size itself does.
PRINTING = [0]


def user_text(value, spec: str = "", sink: bool = False) -> str:
    """A symbolic scalar formatted as the user's code formats it (`print(n)` of a size: the
    value, each run's own), whoever calls this; `sink`: the text goes straight to a print
    (each run's own text, whatever the source says)."""
    if (sink or PRINTING[0]) and FORMATTER and len(FORMATTER) > 1:
        return FORMATTER[1](value, spec)
    return _format(value, spec)


def _format(value, spec: str) -> str:
    if FORMATTER:
        # A print or log of the value is filled in by each run; other text specializes.
        return FORMATTER[0](value, spec)
    return format(value.hint if value.is_value else str(value), spec) if spec else \
        str(value.hint if value.is_value else poly_source(value.poly))
