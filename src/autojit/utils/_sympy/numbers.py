"""Integer infinities as torch.utils._sympy.numbers names them: `int_oo` (IntInfinity) and
`-int_oo` (NegativeIntInfinity), which compare as unbounded integers."""

from __future__ import annotations

import functools


@functools.total_ordering
class _Unbounded:
    """One of the two infinities: a single instance per class, below (`_sign` -1) or above
    every other value."""

    _sign, _text = 1, ""

    def __new__(cls):
        found = cls.__dict__.get("_instance")
        if found is None:
            found = super().__new__(cls)
            cls._instance = found
        return found

    def __eq__(self, other) -> bool:
        return other is self

    def __lt__(self, other) -> bool:
        return self._sign < 0 and other is not self

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        return self._text


class IntInfinity(_Unbounded):
    """An integer greater than every other (torch's `int_oo`)."""

    _sign, _text = 1, "int_oo"

    def __neg__(self):
        return NegativeIntInfinity()


class NegativeIntInfinity(_Unbounded):
    """An integer less than every other (torch's `-int_oo`)."""

    _sign, _text = -1, "-int_oo"

    def __neg__(self):
        return IntInfinity()


int_oo = IntInfinity()

__all__ = ["IntInfinity", "NegativeIntInfinity", "int_oo"]
