"""Compiled float32 reductions: their time and their error, against NumPy and torch, and what
their float64 totals cost.

Each row is one compiled function on float32 data: a full sum and a mean of 10M elements, row
and column sums of a 1000x10000 matrix (and of its transpose), a sum over a broadcast
(`ones(1, 10**6).expand(100, 10**6) * 2`), an MSE over 16x3x224x224, and the fused
elementwise forward + backward of bench/compiled_elementwise.py (4M elements, a sum inside).

Each function is compiled twice in this process: as autojit compiles it, and with the float32
sums accumulated in float32 as before (kernel.WIDER_ACCUMULATOR emptied while it compiles;
the disk cache is off so that neither finds the other's kernels). The two are timed taking
turns one call at a time, so that their ratio sees the same machine. Columns: median
times of autojit, of the float32 accumulators, of NumPy and of torch (CPU), autojit's time
relative to the float32 accumulators' and to NumPy's, and the largest relative error of each
against the same reduction in float64 (NumPy and torch are timed after, each by itself).
Usage:

    python bench/compiled_reductions.py [--repeats 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

os.environ["AUTOJIT_DISK_CACHE"] = "0"  # before autojit is imported (see the docstring)


def cases(generator) -> list:
    """(name, function of a module and its tensors, float32 arrays)."""
    big = generator.random(10**7, dtype=np.float32)
    matrix = generator.random((1000, 10000), dtype=np.float32)
    images = [generator.standard_normal((16, 3, 224, 224), dtype=np.float32) for _ in range(2)]
    return [
        ("sum, 10M", lambda m, x: m.sum(x), [big]),
        ("mean, 10M", lambda m, x: m.mean(x), [big]),
        ("row sums, 1000x10000", lambda m, x: m.sum(x, 1), [matrix]),
        ("column sums, 10000x1000", lambda m, x: m.sum(x, 0), [np.ascontiguousarray(matrix.T)]),
        ("sum of 100 x 1M broadcast", lambda m, x: m.sum(m.expand(x, (100, 10**6)) * 2),
         [np.ones((1, 10**6), np.float32)]),
        ("MSE, 16x3x224x224", lambda m, a, b: m.mean((a - b) * (a - b)), images),
    ]


class NumpyModule:
    @staticmethod
    def sum(x, dim=None):
        return np.sum(x, axis=dim)

    @staticmethod
    def mean(x):
        return np.mean(x)

    @staticmethod
    def expand(x, shape):
        return np.broadcast_to(x, shape)


class TensorModule:
    """autojit or torch through the same calls."""

    def __init__(self, module):
        self.module = module

    def sum(self, x, dim=None):
        return x.sum() if dim is None else x.sum(dim)

    def mean(self, x):
        return x.mean()

    def expand(self, x, shape):
        return x.expand(*shape)


def relative_error(result, truth) -> float:
    result = np.asarray(result, np.float64)
    return float(np.max(np.abs(result - truth) / np.maximum(np.abs(truth), 1e-300)))


def float32_accumulators(build):
    """`build()` with float32 sums accumulated in float32, as before their float64 totals."""
    from autojit.codegen import kernel
    from autojit.codegen.cpu import jit as cpu

    saved = dict(kernel.WIDER_ACCUMULATOR)
    kernel.WIDER_ACCUMULATOR.clear()
    cpu.clear_cache()
    try:
        return build()
    finally:
        kernel.WIDER_ACCUMULATOR.update(saved)
        cpu.clear_cache()


def alternating_medians(calls: list, repeats: int, rounds: int) -> list:
    """The median time of each call over `rounds` * `repeats` calls, the calls taking turns
    one call at a time, the first of each turn changing every round (after 3 warm-up calls
    each)."""
    for call in calls:
        for _ in range(3):
            call()
    times: list = [[] for _ in calls]
    for turn in range(rounds * repeats):
        first = turn // repeats % len(calls)
        for position in [*range(first, len(calls)), *range(first)]:
            start = time.perf_counter()
            calls[position]()
            times[position].append(time.perf_counter() - start)
    return [statistics.median(samples) for samples in times]


def row(autojit, torch, name, function, arrays, options) -> str:
    truth = np.asarray(function(NumpyModule, *[a.astype(np.float64) for a in arrays]))
    tensors = [autojit.tensor(a) for a in arrays]

    def build():
        compiled = autojit.compile(lambda *xs: function(TensorModule(autojit), *xs))
        compiled(*tensors)
        return compiled

    ours, before = build(), float32_accumulators(build)
    errors = [relative_error(ours(*tensors).numpy(), truth),
              relative_error(before(*tensors).numpy(), truth),
              relative_error(function(NumpyModule, *arrays), truth), float("nan")]
    times = alternating_medians([lambda: ours(*tensors), lambda: before(*tensors)],
                                options.repeats, options.rounds)
    # NumPy and torch each on their own: a call after NumPy's (which allocates and touches
    # new temporaries) or torch's (whose threads keep spinning after an op) runs slower.
    times += alternating_medians([lambda: function(NumpyModule, *arrays)], options.repeats,
                                 options.rounds)
    times.append(float("nan"))
    if torch is not None:
        torch_tensors = [torch.from_numpy(a) for a in arrays]
        module = TensorModule(torch)
        times[3] = alternating_medians([lambda: function(module, *torch_tensors)],
                                       options.repeats, options.rounds)[0]
        errors[3] = relative_error(function(module, *torch_tensors).numpy(), truth)
    ms = "".join(f"{seconds * 1e3:9.3f}" for seconds in times[:4])
    return (f"{name:27}{ms}{times[0] / times[1]:9.3f}{times[0] / times[2]:9.2f}"
            + "".join(f"{error:10.1e}" for error in errors))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    from compiled_elementwise import autojit_rows as elementwise_rows

    import autojit

    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    generator = np.random.default_rng(0)
    print(f"compiled float32 reductions, medians of {options.rounds * options.repeats} "
          "alternating calls; before: float32 accumulators; err: largest relative error "
          "against float64")
    print(f"{'':27}{'ms':>9}{'before':>9}{'numpy':>9}{'torch':>9}{'/before':>9}{'/numpy':>9}"
          f"{'err':>10}{'before':>10}{'numpy':>10}{'torch':>10}")
    for name, function, arrays in cases(generator):
        print(row(autojit, torch, name, function, arrays, options))
    data = generator.standard_normal(4 * 1024 * 1024).astype(np.float32)
    ours = elementwise_rows(data)[0][1]
    ours()
    before = float32_accumulators(lambda: elementwise_rows(data)[0][1])
    float32_accumulators(before)  # compiled on the first call
    times = alternating_medians([ours, before], options.repeats, options.rounds)
    print(f"fused elementwise forward+backward, 4M float32: {times[0] * 1e3:.3f} ms, before "
          f"{times[1] * 1e3:.3f} ms ({times[0] / times[1]:.3f}x)")


if __name__ == "__main__":
    main()
