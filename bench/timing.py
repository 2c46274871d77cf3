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
