"""The per-call cost of a compiled function's guards: the check that runs before every call.

Each workload is compiled, called twice, and then its latest executable's guard check
(`executable.guards.failure(args)`, what every call runs first) is timed on its own, over
many repetitions; the table gives the median time per check and the number of conditions.
Usage:

    python bench/guard_cost.py [--repeats 30] [--number 2000]

Workloads:
- tensor list SGD: bench/compiled_step.py's step (weights in a Python list), batch 64;
- module SGD: an nn.Sequential MLP (Linear, ReLU, Linear, ReLU, Linear) with cross-entropy
  and optim.SGD(momentum=0.9);
- module Adam: the same model with optim.Adam;
- small function: a few ops on one argument, reading a dict of scalars.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from compiled_step import batch, initial_parameters, sgd_step

import autojit
import autojit.nn as nn
import autojit.nn.functional as F


def tensor_list_sgd():
    parameters = [autojit.tensor(array, requires_grad=True)
                  for array in initial_parameters(0, (64, 32, 32, 10))]
    x, y = batch(64, 1, (64, 32, 32, 10))
    step = autojit.compile(lambda a, b: sgd_step(autojit, F.cross_entropy, parameters, a, b,
                                                 0.01))
    return step, (autojit.tensor(x), autojit.tensor(y))


def module_step(optimizer_class, **options):
    def make():
        autojit.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                              nn.Linear(32, 10))
        optimizer = optimizer_class(model.parameters(), **options)

        def step(x, y):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            return loss.detach()

        x, y = batch(64, 1, (64, 32, 32, 10))
        return autojit.compile(step), (autojit.tensor(x), autojit.tensor(y))
    return make


def small_function():
    settings = {"scale": 2.0, "shift": 0.5}

    def f(x):
        return (x * settings["scale"] + settings["shift"]).tanh()

    return autojit.compile(f), (autojit.ones(16),)


WORKLOADS = [
    ("tensor list SGD", tensor_list_sgd),
    ("module SGD", module_step(autojit.optim.SGD, lr=0.01, momentum=0.9)),
    ("module Adam", module_step(autojit.optim.Adam, lr=1e-3)),
    ("small function", small_function),
]


def measure(make, repeats: int, number: int) -> tuple[float, int]:
    compiled, args = make()
    compiled(*args)
    compiled(*args)
    guards = compiled.executables[0].guards
    assert guards.failure(args) is None, guards.failure(args)
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(number):
            guards.failure(args)
        samples.append((time.perf_counter() - started) / number)
    return float(np.median(samples)), len(guards)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--number", type=int, default=2000)
    options = parser.parse_args()
    print(f"{'workload':<18} {'guard check':>12} {'conditions':>11}")
    for name, make in WORKLOADS:
        seconds, count = measure(make, options.repeats, options.number)
        print(f"{name:<18} {seconds * 1e6:>9.2f} µs {count:>11}")


if __name__ == "__main__":
    main()
