"""autojit.fx.experimental.symbolic_shapes: torch's guards and queries over symbolic sizes
(guard_or_false, statically_known_true, free_symbols and the rest libraries import), on
autojit's SymInt and SymFloat (tensor/symbolic.py).

autojit's symbolic scalars all have a hint (their value in the call being traced), and a
decision on one (`bool`, a comparison) is made with the hint and recorded as a guard; there are
no unbacked symbols (sizes known only at run time with no hint). So `guard_or_false(x)` and
`guard_or_true(x)` are `bool(x)`, which guards; `statically_known_true(x)` is True only for a
plain True, the one case that needs no guard; `free_unbacked_symbols` is always empty.
`free_symbols` gives the names of the symbols (strings such as "s0"), as autojit's
expressions are not sympy's.
"""

from __future__ import annotations

from ...tensor.symbolic import SymFloat, SymInt
from ...tensor.tensor import Tensor

__all__ = ["GuardOnDataDependentSymNode", "SymTypes", "definitely_false", "definitely_true",
           "expect_true", "free_symbols", "free_unbacked_symbols", "guard_bool", "guard_float",
           "guard_int", "guard_or_false", "guard_or_true", "guard_scalar",
           "guard_size_oblivious", "has_free_symbols", "has_hint", "hint_int",
           "is_concrete_bool", "is_concrete_float", "is_concrete_int", "statically_known_true",
           "sym_eq"]

SymTypes = (SymInt, SymFloat)


class GuardOnDataDependentSymNode(RuntimeError):
    """Raised in torch where a decision needs the value of an unbacked symbol; autojit has none,
    so it raises it nowhere, but libraries catch it by name."""

    def __init__(self, cond=None, *args):
        super().__init__(*args)
        self.cond = cond


def _symbolic(value) -> bool:
    # type(), not isinstance: a SymInt read at run time answers isinstance(x, int) with True.
    return type(value) in SymTypes


def guard_bool(a) -> bool:
    """`bool(a)`, recording the guard a symbolic `a` needs."""
    return bool(a)


def guard_int(a) -> int:
    """`int(a)`: a symbolic `a` is specialized to its hint (a guard records it)."""
    return int(a)


def guard_float(a) -> float:
    """`float(a)`, specializing a symbolic `a`."""
    return float(a)


def guard_scalar(a):
    """`a` as a Python bool, int or float, guarding a symbolic one."""
    if isinstance(a, bool):
        return a
    if type(a) is SymFloat or isinstance(a, float):
        return float(a)
    return int(a)


def guard_or_false(a) -> bool:
    """`a`'s truth, guarded (torch answers False where it cannot decide; autojit always can)."""
    return bool(a)


def guard_or_true(a) -> bool:
    """`a`'s truth, guarded (torch answers True where it cannot decide; autojit always can)."""
    return bool(a)


def guard_size_oblivious(expr) -> bool:
    """`expr`'s truth, guarded."""
    return bool(expr)


def expect_true(a, skip: int = 0) -> bool:
    """`a`'s truth, guarded (torch defers it to a runtime assert for unbacked symbols)."""
    return bool(a)


def statically_known_true(x) -> bool:
    """True only where `x` is true without a guard: a plain True (a comparison on autojit's
    symbolic sizes has been decided, and guarded, already)."""
    return x is True


def definitely_true(a) -> bool:
    """Whether `a` is true, deciding with the hint (every autojit symbol has one)."""
    return bool(a)


def definitely_false(a) -> bool:
    """Whether `a` is false, deciding with the hint."""
    return not bool(a)


def has_hint(a) -> bool:
    """Whether `a` has a value to decide with: always, in autojit."""
    return True


def hint_int(a, fallback: int | None = None) -> int:
    """`a`'s value in the call being traced, without a guard."""
    return a.hint if type(a) is SymInt else int(a)


def is_concrete_int(a) -> bool:
    """Whether `a` is a plain int (not symbolic)."""
    return isinstance(a, int) and not _symbolic(a)


def is_concrete_float(a) -> bool:
    """Whether `a` is a plain float (not symbolic)."""
    return isinstance(a, float) and not _symbolic(a)


def is_concrete_bool(a) -> bool:
    """Whether `a` is a plain bool."""
    return isinstance(a, bool)


def free_symbols(val) -> set[str]:
    """The names of the symbols `val` depends on: a SymInt's or SymFloat's, a tensor's sizes',
    or those of a list or tuple of them."""
    if _symbolic(val):
        return set(val.names())
    if isinstance(val, Tensor):
        return free_symbols(tuple(val.shape))
    if isinstance(val, (list, tuple)):
        found: set[str] = set()
        for item in val:
            found |= free_symbols(item)
        return found
    return set()


def has_free_symbols(val) -> bool:
    """Whether `val` depends on any symbol."""
    return bool(free_symbols(val))


def free_unbacked_symbols(x) -> set[str]:
    """The unbacked symbols of `x`: none, as autojit has no unbacked symbols."""
    return set()


def sym_eq(x, y) -> bool:
    """Equality of scalars, or of lists/tuples item by item (with a guard per symbolic one)."""
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(sym_eq(a, b) for a, b in zip(x, y, strict=True))
    return bool(x == y)
