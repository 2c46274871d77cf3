"""Eager training steps with each framework alone in its process, as a user runs them.

The side-by-side benchmarks (compiled_step.py --eager, transformer_step.py) run autojit and
torch in one process, where each one's allocations shape the C heap the other allocates from;
here every measurement is a process of its own: autojit eager with its host-memory setting
(tensor/host_memory.py), autojit eager with AUTOJIT_HOST_MEMORY=system (malloc's own
thresholds), and torch eager. The processes take turns over the rounds; the table gives the
median time per step (wall, and the process's CPU time over all its threads) and the ratio
to torch eager. Usage:

    python bench/eager_alone.py [--rounds 3] [--steps 10] [--threads 1]

Both frameworks run on `--threads` threads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WORKLOADS = ("mlp", "transformer")


def _mlp(framework):
    from compiled_step import batch, initial_parameters, sgd_step

    parameters = [framework.tensor(array, requires_grad=True)
                  for array in initial_parameters()]
    x, y = (framework.tensor(array) for array in batch(256))
    cross_entropy = framework.nn.functional.cross_entropy
    return lambda: sgd_step(framework, cross_entropy, parameters, x, y, 0.01)


def _transformer(framework):
    from transformer_step import BATCH, LENGTH, VOCABULARY, build, make_step

    generator = np.random.default_rng(0)
    step = make_step(framework, build(framework.nn, framework))
    ids, targets = (framework.tensor(generator.integers(0, VOCABULARY, (BATCH, LENGTH)))
                    for _ in range(2))
    return lambda: step(ids, targets)


def measure(library: str, workload: str, steps: int, threads: int) -> dict:
    """Seconds per step of one workload, in this process: wall and CPU (every thread)."""
    sys.path.insert(0, str(HERE))
    framework = __import__(library)
    framework.set_num_threads(threads)
    step = (_mlp if workload == "mlp" else _transformer)(framework)
    for _ in range(3):
        step()
    walls, cpus = [], []
    for _ in range(steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        step()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


RUNNERS = {
    "autojit eager": ("autojit", {}),
    "autojit eager, malloc's thresholds": ("autojit", {"AUTOJIT_HOST_MEMORY": "system"}),
    "torch eager": ("torch", {}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="processes per runner (3)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per process (10)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)  # library, workload
    arguments = parser.parse_args()
    if arguments.measure:
        library, workload = arguments.measure
        print(json.dumps(measure(library, workload, arguments.steps, arguments.threads)))
        return
    runners = {name: (library, environment) for name, (library, environment) in RUNNERS.items()
               if library != "torch" or _installed("torch")}
    for workload in WORKLOADS:
        results: dict = {name: [] for name in runners}
        for _ in range(arguments.rounds):
            for name, (library, environment) in runners.items():
                command = [sys.executable, __file__, "--steps", str(arguments.steps),
                           "--threads", str(arguments.threads), "--measure", library, workload]
                completed = subprocess.run(command, capture_output=True, text=True, check=True,
                                           env={**os.environ, **environment})
                results[name].append(json.loads(completed.stdout.strip().splitlines()[-1]))
        medians = {name: {key: statistics.median(run[key] for run in runs)
                          for key in ("wall", "cpu")} for name, runs in results.items()}
        reference = medians.get("torch eager")
        print(f"{workload} step, each framework alone in its process, {arguments.threads} "
              f"thread(s): median of {arguments.rounds} processes of {arguments.steps} steps")
        for name, times in medians.items():
            ratio = (f"   {times['wall'] / reference['wall']:.2f}x torch eager"
                     if reference else "")
            print(f"  {name:36s} {times['wall'] * 1e3:8.2f} ms/step   cpu "
                  f"{times['cpu'] * 1e3:8.2f} ms{ratio}")


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    main()
