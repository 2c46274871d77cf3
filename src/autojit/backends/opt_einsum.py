"""autojit.backends.opt_einsum: the switches of the opt_einsum package, which torch.einsum
asks for the order in which to contract three or more operands. autojit's einsum contracts in
its own order; `is_available()` says whether the package is installed, and `enabled` and
`strategy` are accepted and readable with torch's defaults (True, "auto")."""

from __future__ import annotations

import importlib.util
import sys

from ._flags import checked_flags

_STRATEGIES = ("auto", "greedy", "optimal")


def is_available() -> bool:
    """Whether the opt_einsum package is installed."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum():
    """The opt_einsum package if installed, else None."""
    if not is_available():
        return None
    import opt_einsum

    return opt_einsum


class _Strategy:
    """The module's `strategy`: one of "auto", "greedy", "optimal" (torch's check)."""

    def __get__(self, module, owner=None):
        return module.__dict__.get("_strategy", "auto")

    def __set__(self, module, value) -> None:
        if not is_available():
            raise ValueError("opt_einsum is not available, so setting `strategy` will not "
                             "take effect.")
        if value not in _STRATEGIES:
            raise ValueError(f"`strategy` must be one of the following: {list(_STRATEGIES)} "
                             f"but got {value}")
        module.__dict__["_strategy"] = value


checked_flags(__name__, {"enabled": True}, {"enabled": "set_enabled_opt_einsum"})
type(sys.modules[__name__]).strategy = _Strategy()
