"""torch._VF under the drop-in: torch's handle on its C++ functions (torch._C._VariableFunctions),
which torch's Python code and some libraries call directly (`_VF.einsum`, `_VF.unique_dim`).
Each name is autojit's top-level function of that name, with the few that torch keeps off its
public namespace (unique_dim) defined here.
"""

from __future__ import annotations

import sys


def unique_dim(input, dim: int, sorted: bool = True,  # noqa: A002 - torch's names
               return_inverse: bool = False, return_counts: bool = False) -> tuple:
    """The distinct slices along `dim`, the inverse indices and the counts: torch's kernel
    computes all three whatever is asked."""
    from ..ops.counting import unique

    return unique(input, sorted, True, True, dim)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(sys.modules["autojit"], name)
