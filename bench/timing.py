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


def interleaved_medians(runners: dict, rounds: int, steps: int, cpu: dict | None = None,
                        settle: float = 0.0, means: dict | None = None) -> dict:
    """The median seconds per call of each runner (name -> no-argument callable), the runners
    taking turns: each round calls every runner `steps` times, so background load falls on all
    of them alike. Each runner is called once first, as a warm-up. `cpu`, when given, receives
    the median CPU time of the calling thread per call (time.thread_time): on a machine shared
    with other work, the time the step computed rather than waited for a core (meaningful for
    runners on one thread). `settle`: seconds slept, untimed, before each runner's turn, so that
    the threads the previous runner's libraries leave spinning (OpenBLAS's and OpenMP's wait
    busily for about a tenth of a second after a multi-threaded call) do not take a core from
    the next. `means`, when given, receives each runner's mean seconds per call over every
    round: the median of rounds leaves out a round that holds a rare cost (a full collection
    of Python's cyclic garbage collector), which the mean keeps, as a program's run time does."""
    for run in runners.values():
        run()
    times = {name: [] for name in runners}
    thread_times = {name: [] for name in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            time.sleep(settle)
            start, start_cpu = time.perf_counter(), time.thread_time()
            for _ in range(steps):
                run()
            times[name].append((time.perf_counter() - start) / steps)
            thread_times[name].append((time.thread_time() - start_cpu) / steps)
    if cpu is not None:
        cpu.update({name: statistics.median(values) for name, values in thread_times.items()})
    if means is not None:
        means.update({name: statistics.fmean(values) for name, values in times.items()})
    return {name: statistics.median(values) for name, values in times.items()}


def print_against(medians: dict, reference: str, cpu: dict | None = None,
                  moved: int | None = None) -> None:
    """One line per runner: milliseconds per step and the ratio to the reference runner (and
    the same for the calling thread's CPU time, when `cpu` holds it). `moved`: the bytes a
    step must read and write at the least; each line then gives them over its time, in GB/s
    (to set beside bench/stream_peak.py's copy and triad ceilings)."""
    for name, seconds in medians.items():
        line = (f"  {name:<17} {seconds * 1e3:8.2f} ms/step  {seconds / medians[reference]:5.2f}x "
                f"{reference}")
        if cpu:
            line += f"   cpu {cpu[name] * 1e3:8.2f} ms  {cpu[name] / cpu[reference]:5.2f}x"
        if moved:
            line += f"   {moved / seconds / 1e9:6.1f} GB/s"
        print(line)
