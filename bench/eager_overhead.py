"""Per-op cost of eager mode: a 100-op elementwise chain on 64 float32 elements, forward+backward.

Runs the same program with autojit and, where installed, with torch in the same process, the
two taking turns (one chain each), and prints the median cost per op of each and their ratio.
Usage:

    python bench/eager_overhead.py [--repeats 200] [--ops 100]

The chain cycles through binary ops with leaf weights (mul, add), unary math (sin, tanh,
sigmoid, exp of a bounded value) and a scalar op, so both the forward dispatch and the backward
engine (VJP rules, gradient accumulation into two leaves) are exercised.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def chain(module, x, w, b, length):
    y = x
    for step in range(length):
        kind = step % 6
        if kind == 0:
            y = y * w
        elif kind == 1:
            y = y + b
        elif kind == 2:
            y = module.sin(y)
        elif kind == 3:
            y = module.tanh(y)
        elif kind == 4:
            y = module.sigmoid(y)
        else:
            y = y * 0.5
    return y.sum()


def setup(module):
    """The chain's input and its two leaf parameters, the same values for every library."""
    rng = np.random.default_rng(0)
    x = module.tensor(rng.standard_normal(64).astype(np.float32))
    w = module.tensor(rng.standard_normal(64).astype(np.float32), requires_grad=True)
    b = module.tensor(rng.standard_normal(64).astype(np.float32), requires_grad=True)
    return x, w, b


def run_once(module, tensors, length: int) -> tuple[float, float]:
    """Seconds of forward and of backward for one chain."""
    x, w, b = tensors
    start = time.perf_counter()
    loss = chain(module, x, w, b, length)
    middle = time.perf_counter()
    loss.backward()
    end = time.perf_counter()
    w.grad = None
    b.grad = None
    return middle - start, end - middle


def measure(modules: dict, length: int, repeats: int) -> dict:
    """Median seconds of forward and of backward for one chain, per library. The libraries
    take turns, one chain each, so that background load falls on all of them alike."""
    tensors = {name: setup(module) for name, module in modules.items()}
    times = {name: ([], []) for name in modules}
    for repeat in range(repeats + 10):
        for name, module in modules.items():
            forward, backward = run_once(module, tensors[name], length)
            if repeat >= 10:  # the first runs warm caches (and torch's dispatcher)
                times[name][0].append(forward)
                times[name][1].append(backward)
    return {name: (statistics.median(forward), statistics.median(backward))
            for name, (forward, backward) in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--ops", type=int, default=100)
    args = parser.parse_args()

    import autojit

    modules = {"autojit": autojit}
    try:
        import torch

        torch.set_num_threads(1)
        modules["torch"] = torch
    except ImportError:
        print("torch is not installed: printing autojit alone")
    results = measure(modules, args.ops, args.repeats)

    print(f"{args.ops}-op elementwise chain on 64 float32 elements, median of {args.repeats} runs")
    print(f"{'library':<10}{'forward us/op':>16}{'backward us/op':>16}{'total us/op':>14}")
    for name, (forward, backward) in results.items():
        print(f"{name:<10}{forward / args.ops * 1e6:>16.2f}{backward / args.ops * 1e6:>16.2f}"
              f"{(forward + backward) / args.ops * 1e6:>14.2f}")
    if "torch" in results:
        ours, theirs = (sum(results[k]) for k in ("autojit", "torch"))
        print(f"autojit / torch per op: {ours / theirs:.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()
