"""What a benchmark measured: `TaskSpec` (the statement and its labels) and `Measurement` (the
times of its blocks, with median, mean, IQR and torch's text form), plus the unit and
significant-figure helpers that `Timer` and `Compare` (the other modules of
autojit.utils.benchmark) format with."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ...config import get_num_threads, set_num_threads

__all__ = [
    "TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
    "ordered_unique", "set_torch_threads",
]

_MAX_SIGNIFICANT_FIGURES = 4
# No real statement takes less than a few timer ticks, so a narrower interval is noise.
_MIN_CONFIDENCE_INTERVAL = 25e-9
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how its results are labelled (everything but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (with its sub-label), else the one-line statement, else the statement."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub_label = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub_label}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's part of a Measurement's text form."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{section}\n" if "\n" in section else section
                         for section in sections if section)


_TASK_SPEC_FIELDS = tuple(field.name for field in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one or more blocks of `number_per_run` runs of a statement.

    `times` are per run; `median`, `mean` and `iqr` summarize them (quantiles interpolate
    linearly, as torch's do). The TaskSpec's fields read through: `m.label`, `m.num_threads`.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASK_SPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        return [time / self.number_per_run for time in self.raw_times]

    @property
    def median(self) -> float:
        self._summarize()
        return self._median

    @property
    def mean(self) -> float:
        self._summarize()
        return self._mean

    @property
    def iqr(self) -> float:
        self._summarize()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the interquartile times supports.

        It uses a fixed z of 1.645 (a 90% interval), as the number of replicates is not small.
        """
        self._summarize()
        count = len(self._sorted_times)
        interquartile = self._sorted_times[count // 4:math.ceil(3 * count / 4)]
        spread = float(np.std(interquartile)) if interquartile else 0.0
        interval = max(1.645 * spread / math.sqrt(max(len(interquartile), 1)),
                       _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._summarize()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def _summarize(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = np.asarray(self._sorted_times, dtype=np.float64)
        self._median = float(np.quantile(times, 0.5))
        self._mean = float(times.mean())
        self._p25 = float(np.quantile(times, 0.25))
        self._p75 = float(np.quantile(times, 0.75))
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        relative_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {relative_iqr:.1f}% "
            f"of the median measurement.\n           {message}",
        )

    def __repr__(self) -> str:
        self._summarize()
        count = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if count > 1 else ''}{self._median / scale:.2f} {unit}"]
        if count >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {count} measurement{'s' if count > 1 else ''}, {self.number_per_run} "
                     f"runs {'per measurement,' if count > 1 else ','} {threads}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per TaskSpec, its times scaled to one run each (metadata dropped)."""
        grouped: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for measurement in measurements:
            grouped[measurement.task_spec].extend(measurement.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=task_spec)
                for task_spec, times in grouped.items()]


def select_unit(time: float) -> tuple[str, float]:
    """The unit (ns, us, ms or s) that shows `time` seconds with one to three leading digits."""
    exponent = math.floor(math.log10(time) // 3) if time > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(unit: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[unit]


def trim_sigfig(value: float, figures: int) -> float:
    """`value` rounded to `figures` significant figures (3.14159, 2 -> 3.1)."""
    if figures != int(figures):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(math.log10(abs(value)))
    scale = 10 ** (magnitude - figures)
    return float(np.round(value / scale) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(count: int) -> Iterator[None]:
    """Run the block with autojit's kernels on `count` threads, then restore the setting."""
    prior = get_num_threads()
    try:
        set_num_threads(count)
        yield
    finally:
        set_num_threads(prior)
