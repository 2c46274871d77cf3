"""What the examples share: the eager/compiled switch, BLAS threads, a progress bar, timing.

The examples import this file from their own folder (`python examples/NAME.py` puts examples/
on the import path). It holds no modelling code: each example reads top to bottom on its own,
and only the plumbing around a training loop lives here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

import autojit


def add_mode_arguments(parser: argparse.ArgumentParser, compare: bool = False) -> None:
    """--compile (and, for examples that compare by default, --eager)."""
    if compare:
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--compile", action="store_true",
                           help="train with the compiled step only (no eager comparison)")
        group.add_argument("--eager", action="store_true",
                           help="train eagerly only (no compiled step)")
    else:
        parser.add_argument("--compile", action="store_true",
                            help="run the training step through autojit.compile")


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


def compare_speed(steps: dict, batches: list, rounds: int = 3) -> dict:
    """Steps per second of each step function over the same batches.

    The functions take turns, one pass over `batches` each per round, and each keeps its best
    round: on a shared machine the fastest pass is the one least disturbed by other work, and
    taking turns exposes every function to the same background load.
    """
    best = {name: float("inf") for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            started = time.perf_counter()
            for batch in batches:
                step(*batch)
            best[name] = min(best[name], time.perf_counter() - started)
    return {name: len(batches) / seconds for name, seconds in best.items()}
