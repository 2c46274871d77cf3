"""`Timer`: times a Python statement as torch.utils.benchmark's Timer does, with autojit's
kernels on the Timer's thread count and a GPU synchronized around each block, and returns
`Measurement`s (measurement.py). `blocked_autorange` picks a block size that makes the timer's
own cost negligible; `adaptive_autorange` repeats blocks until their spread settles."""

from __future__ import annotations

import enum
import sys
import textwrap
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from .measurement import Measurement, TaskSpec, set_torch_threads

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """The time now, once queued GPU work has finished (kernels run asynchronously)."""
    from ... import cuda

    if cuda.is_available():
        cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Measures how long `stmt` takes, after `setup`, in the namespace `globals` (copied;
    `torch` names autojit there unless the caller gave it).

    `timeit(number)` times one block of `number` runs after a warm-up; `blocked_autorange`
    and `adaptive_autorange` time many blocks. `label`, `sub_label`, `description` and `env`
    label the results for `Compare`; `num_threads` sets autojit's thread count while timing.
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        # A copy, so that the statement's assignments (and eval's __builtins__) stay here.
        self._globals = dict(globals or {})
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError(
                "autojit.utils.benchmark.Timer times Python statements only: autojit has no "
                "C++ API to time")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                "simply be moved to `setup`.")
        # Python imported the root package before this module, so it is there to name.
        self._globals.setdefault("torch", sys.modules[__name__.partition(".")[0]])
        stmt, setup = _tidy(stmt), _tidy(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label,
            sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        # A floor of 1 ns: no statement is faster, and it keeps ratios finite.
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of `number` runs, after a warm-up of number // 100 (at least 2)."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                               task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, time_hook, stop_hook, min_run_time,
                          max_run_time=None, callback=None) -> list[float]:
        total_time, can_stop, times = 0.0, False, []
        with set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = time_hook()
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The runs per block at which the timer's overhead is under 0.01% of a block (or a
        block takes min_run_time); finding it warms the statement up."""
        with set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                time_taken = self._timeit(number)
                if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of a size that amortizes the timer, until `min_run_time` seconds are spent."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda: self._timeit(number), lambda times: True,
                                       min_run_time=min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None) -> Measurement:
        """Blocks until more than 3 are timed, `min_run_time` has passed and IQR / median is
        under `threshold`, or until `max_run_time` seconds."""
        number = self._estimate_block_size(min_run_time=0.05)

        def settled(times: list[float]) -> bool:
            return len(times) > 3 and Measurement(
                number_per_run=number, raw_times=times, task_spec=self._task_spec,
            ).meets_confidence(threshold=threshold)

        times = self._measurement_loop(number, lambda: self._timeit(number), settled,
                                       min_run_time, max_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError(
            "Timer.collect_callgrind counts instructions of torch's C++ core under Valgrind; "
            "autojit has none to count (time with blocked_autorange instead)")


def _tidy(code: str) -> str:
    """Dedent a block string and drop its leading newline, so that statements written in a
    function's body neither raise IndentationError nor print oddly."""
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()
