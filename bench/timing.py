"""Shared timing for the benchmarks: the median wall time of a call after a warm-up."""

from __future__ import annotations

import statistics
import time


def median_seconds(call, repeats: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(runners: dict, rounds: int, steps: int) -> dict:
    """The median seconds per call of each runner (name -> no-argument callable), the runners
    taking turns: each round calls every runner `steps` times, so background load falls on all
    of them alike. Each runner is called once first, as a warm-up."""
    for run in runners.values():
        run()
    times = {name: [] for name in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            start = time.perf_counter()
            for _ in range(steps):
                run()
            times[name].append((time.perf_counter() - start) / steps)
    return {name: statistics.median(values) for name, values in times.items()}


def print_against(medians: dict, reference: str) -> None:
    """One line per runner: milliseconds per step and the ratio to the reference runner."""
    for name, seconds in medians.items():
        print(f"  {name:<17} {seconds * 1e3:8.2f} ms/step  {seconds / medians[reference]:5.2f}x "
              f"{reference}")
