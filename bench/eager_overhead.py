"""Per-op cost of eager mode: a 100-op elementwise chain on 64 float32 elements, forward+backward.

Runs the same program with autojit and, where installed, with torch in the same process, and
prints the median cost per op of each and their ratio. Usage:

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


def measure(module, length: int, repeats: int) -> tuple[float, float]:
    """Median seconds of forward and of backward for one chain."""
    rng = np.random.default_rng(0)
    x = module.tensor(rng.standard_normal(64).astype(np.float32))
    w = module.tensor(rng.standard_normal(64).astype(np.float32), requires_grad=True)
    b = module.tensor(rng.standard_normal(64).astype(np.float32), requires_grad=True)
    forward_times, backward_times = [], []
    for _ in range(repeats + 10):
        start = time.perf_counter()
        loss = chain(module, x, w, b, length)
        middle = time.perf_counter()
        loss.backward()
        end = time.perf_counter()
        w.grad = None
        b.grad = None
        forward_times.append(middle - start)
        backward_times.append(end - middle)
    # The first runs warm caches (and torch's dispatcher); they are not counted.
    return statistics.median(forward_times[10:]), statistics.median(backward_times[10:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--ops", type=int, default=100)
    args = parser.parse_args()

    import autojit

    results = {"autojit": measure(autojit, args.ops, args.repeats)}
    try:
        import torch

        torch.set_num_threads(1)
        results["torch"] = measure(torch, args.ops, args.repeats)
    except ImportError:
        print("torch is not installed: printing autojit alone")

    print(f"{args.ops}-op elementwise chain on 64 float32 elements, median of {args.repeats} runs")
    print(f"{'library':<10}{'forward us/op':>16}{'backward us/op':>16}{'total us/op':>14}")
    for name, (forward, backward) in results.items():
        print(f"{name:<10}{forward / args.ops * 1e6:>16.2f}{backward / args.ops * 1e6:>16.2f}"
              f"{(forward + backward) / args.ops * 1e6:>14.2f}")
    if "torch" in results:
        ours, theirs = (sum(results[k]) for k in ("autojit", "torch"))
        print(f"autojit / torch per op: {ours / theirs:.2f}x (target: at most 3x)")


if __name__ == "__main__":
    main()
