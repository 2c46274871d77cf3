"""What the examples share: the eager/compiled switch, BLAS threads, a progress bar, timing.

The examples import this file from their own folder (`python examples/NAME.py` puts examples/
on the import path). It holds no modelling code: each example reads top to bottom on its own,
and only the plumbing around a training loop lives here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from dataclasses import dataclass

import autojit


def add_mode_arguments(parser: argparse.ArgumentParser, compiled_by_default: bool,
                       compares: bool = False) -> None:
    """--compile and --eager, which every example takes.

    With neither, an example trains its default way; one that `compares` then times its
    compiled step against its eager one. Either flag trains that way only, without the timing.
    """
    group = parser.add_mutually_exclusive_group()
    after = " (no speed comparison)" if compares else ""
    default = " (the default)"
    group.add_argument("--compile", action="store_true",
                       help="train with the step run through autojit.compile"
                       + (after or (default if compiled_by_default else "")))
    group.add_argument("--eager", action="store_true",
                       help="train with the step run eagerly"
                       + (after or ("" if compiled_by_default else default)))


def training_mode(args: argparse.Namespace, compiled_by_default: bool,
                  compares: bool = False) -> tuple[bool, bool]:
    """(compiled, compare): whether the step is compiled and whether to time it both ways."""
    compiled = args.compile or (compiled_by_default and not args.eager)
    return compiled, compares and not (args.compile or args.eager)


def compile_disabled() -> bool:
    """AUTOJIT_DISABLE=1 makes every autojit.compile run eagerly; say so instead of timing it."""
    return autojit.config.disabled()


def describe_mode(compiled: bool) -> str:
    if compiled and compile_disabled():
        return "eager (AUTOJIT_DISABLE=1 turns autojit.compile off)"
    return "compiled (autojit.compile)" if compiled else "eager"


def limit_blas_threads() -> str:
    """Run NumPy's BLAS on one thread, unless the user chose a thread count.

    The matrices here are small (64 x 128): one thread multiplies them in tens of microseconds,
    while extra BLAS threads only add synchronization, and on a busy machine a thread waiting for
    a core can make each matmul take milliseconds. threadpoolctl ships with scikit-learn; without
    it the setting is left alone.
    """
    chosen = [name for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
              if name in os.environ]
    if chosen:
        return f"BLAS threads: as set by {chosen[0]}={os.environ[chosen[0]]}"
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "BLAS threads: library default (threadpoolctl not installed)"
    threadpool_limits(limits=1, user_api="blas")
    return "BLAS threads: 1"


def require(module: str, purpose: str):
    """Import an optional dependency or exit with a message saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        package = {"sklearn": "scikit-learn"}.get(top, top)
        raise SystemExit(f"{purpose} needs {package}, which is not installed: "
                         f"pip install 'autojit[examples]' (or pip install {package})") from None


class ProgressBar:
    """One line per epoch: redrawn in place with \\r on a terminal, printed once otherwise.

    update() takes the number of steps done, the latest loss and the samples seen; finish()
    ends the line with the epoch's summary. When stdout is not a terminal (a log file, CI),
    only the summary line is printed, so logs hold plain text without carriage returns.
    """

    def __init__(self, label: str, total: int, width: int = 24, stream=None):
        self.label = label
        self.total = max(total, 1)
        self.width = width
        self.stream = stream or sys.stdout
        self.interactive = self.stream.isatty()
        self.started = time.perf_counter()
        self.samples = 0
        self.last_draw = 0.0
        self.drawn = 0  # length of the line on screen: a shorter one must blank the rest

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _line(self, done: int, loss: float) -> str:
        filled = int(self.width * min(done, self.total) / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        rate = self.samples / max(self.elapsed(), 1e-9)
        return (f"{self.label} [{bar}] {done}/{self.total} loss {loss:.4f} "
                f"{rate:,.0f} samples/s")

    def update(self, done: int, loss: float, samples: int) -> None:
        self.samples += samples
        if not self.interactive:
            return
        now = time.perf_counter()
        if now - self.last_draw < 0.05 and done < self.total:  # at most 20 redraws a second
            return
        self.last_draw = now
        self._draw(self._line(done, loss))
        self.stream.flush()

    def _draw(self, line: str) -> None:
        self.stream.write("\r" + line.ljust(self.drawn))
        self.drawn = len(line)

    def finish(self, loss: float, extra: str = "") -> float:
        """End the line; returns the epoch's seconds."""
        seconds = self.elapsed()
        line = self._line(self.total, loss) + f" {seconds:.2f}s" + (f" {extra}" if extra else "")
        if self.interactive:
            self._draw(line)
        else:
            self.stream.write(line)
        self.stream.write("\n")
        self.stream.flush()
        return seconds


def traces(step) -> int:
    """How often a compiled function has traced (0 for a plain function)."""
    stats = getattr(step, "stats", None)
    return stats().traces if stats is not None else 0


@dataclass
class Speed:
    """What compare_speed measured: each function's calls per second in every round, and how
    often each traced again while timed (compiling inside a timed pass would count against
    it)."""

    rounds: dict
    traced_while_timed: dict

    def __getitem__(self, name: str) -> float:
        """The function's median calls per second over the rounds."""
        return statistics.median(self.rounds[name])

    @property
    def ratio(self) -> float:
        """Compiled calls per second over eager ones (medians): above 1, compiled is faster."""
        return self["compiled"] / self["eager"]

    def spread(self) -> tuple:
        """The lowest and highest compiled/eager ratio of one round (the two functions timed
        one after the other, so under the same background load)."""
        ratios = [c / e for c, e in zip(self.rounds["compiled"], self.rounds["eager"],
                                        strict=True)]
        return min(ratios), max(ratios)

    def summary(self) -> str:
        """How the ratio was taken, with its spread: 'median of 5 rounds, 5.1x-6.2x'."""
        low, high = self.spread()
        return f"median of {len(self.rounds['compiled'])} rounds, {low:.2f}x-{high:.2f}x"

    def note(self) -> str:
        """A line naming the functions that traced while timed, or '' when none did."""
        traced = {name: count for name, count in self.traced_while_timed.items() if count}
        if not traced:
            return ""
        named = ", ".join(f"{name} {count} time(s)" for name, count in traced.items())
        return f"note: traced again while timed ({named}), so those figures include compiling"


def compare_speed(steps: dict, batches: list, rounds: int = 5, warmup: int = 2,
                  min_seconds: float = 0.05) -> Speed:
    """Calls per second of each step function over the same batches, in every round.

    Each function is first called `warmup` times on the first batch, untimed: a compiled step
    traces on its first call and, when that call changed the state it reads (an optimizer
    creating its moment estimates), once more on its second. Then the functions take turns,
    each round timing every function over whole passes of `batches` for at least
    `min_seconds`. A pass of a small compiled step takes a few milliseconds, short enough for
    one descheduling or a worker thread woken late to halve its figure, so a round covers
    several passes, the figures are the rounds' medians and Speed.spread gives the range of
    the rounds' ratios: the printed figure moves with the machine's load, and the range shows
    by how much.
    """
    for step in steps.values():
        for _ in range(warmup):
            step(*batches[0])
    before = {name: traces(step) for name, step in steps.items()}
    rates = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            calls, started = 0, time.perf_counter()
            while True:
                for batch in batches:
                    step(*batch)
                calls += len(batches)
                elapsed = time.perf_counter() - started
                if elapsed >= min_seconds:
                    break
            rates[name].append(calls / elapsed)
    return Speed(rates, {name: traces(step) - before[name] for name, step in steps.items()})
