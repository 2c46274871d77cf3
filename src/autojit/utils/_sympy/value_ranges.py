"""torch.utils._sympy.value_ranges.ValueRanges on Python numbers: a closed range [lower,
upper] of an integer or float quantity (or a bool), with membership, intersection and union."""

from __future__ import annotations

import dataclasses
import math

from .numbers import IntInfinity, NegativeIntInfinity, int_oo


class ValueRangeError(RuntimeError):
    """An empty range (lower above upper)."""


@dataclasses.dataclass(frozen=True)
class ValueRanges:
    lower: object
    upper: object

    def __post_init__(self):
        if self.lower > self.upper:
            raise ValueRangeError(f"Invalid ranges [{self.lower}:{self.upper}]")

    @property
    def is_bool(self) -> bool:
        return isinstance(self.lower, bool) and isinstance(self.upper, bool)

    @property
    def is_int(self) -> bool:
        def integral(bound):
            return isinstance(bound, (int, IntInfinity, NegativeIntInfinity)) and \
                not isinstance(bound, bool)

        return integral(self.lower) and integral(self.upper)

    @property
    def is_float(self) -> bool:
        return not self.is_bool and not self.is_int

    @classmethod
    def unknown(cls) -> ValueRanges:
        return cls(-math.inf, math.inf)

    @classmethod
    def unknown_int(cls) -> ValueRanges:
        return cls(-int_oo, int_oo)

    @classmethod
    def unknown_bool(cls) -> ValueRanges:
        return cls(False, True)

    @classmethod
    def wrap(cls, value) -> ValueRanges:
        return value if isinstance(value, ValueRanges) else cls(value, value)

    def is_singleton(self) -> bool:
        return self.lower == self.upper

    def __contains__(self, value) -> bool:
        return self.lower <= value <= self.upper

    def issubset(self, other: ValueRanges) -> bool:
        return other.lower <= self.lower and self.upper <= other.upper

    def __and__(self, other: ValueRanges) -> ValueRanges:
        return ValueRanges(max(self.lower, other.lower), min(self.upper, other.upper))

    def __or__(self, other: ValueRanges) -> ValueRanges:
        return ValueRanges(min(self.lower, other.lower), max(self.upper, other.upper))


__all__ = ["ValueRangeError", "ValueRanges"]
