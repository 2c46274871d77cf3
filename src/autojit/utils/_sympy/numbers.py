"""Integer infinities as torch.utils._sympy.numbers names them: `int_oo` (IntInfinity) and
`-int_oo` (NegativeIntInfinity), which compare as unbounded integers."""

from __future__ import annotations

import functools


@functools.total_ordering
class IntInfinity:
    """An integer greater than every other (torch's `int_oo`)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __eq__(self, other) -> bool:
        return other is self

    def __lt__(self, other) -> bool:
        return False

    def __hash__(self) -> int:
        return hash("int_oo")

    def __neg__(self):
        return NegativeIntInfinity()

    def __repr__(self) -> str:
        return "int_oo"


@functools.total_ordering
class NegativeIntInfinity:
    """An integer less than every other (torch's `-int_oo`)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __eq__(self, other) -> bool:
        return other is self

    def __lt__(self, other) -> bool:
        return other is not self

    def __hash__(self) -> int:
        return hash("-int_oo")

    def __neg__(self):
        return IntInfinity()

    def __repr__(self) -> str:
        return "-int_oo"


int_oo = IntInfinity()

__all__ = ["IntInfinity", "NegativeIntInfinity", "int_oo"]
