"""Compiled float32 reductions: their time and their error, against NumPy and torch.

Each row is one compiled function on float32 data: a full sum and a mean of 10M elements, row
and column sums of a 1000x10000 matrix (and its transpose), a sum over a broadcast
(`ones(1, 10**6).expand(100, 10**6) * 2`), an MSE over 16x3x224x224, and the fused
elementwise forward + backward of bench/compiled_elementwise.py (4M elements, a sum inside).
Columns: the median time of autojit.compile, NumPy and torch (CPU) on the same data in the
same process, autojit's time relative to NumPy's, and the largest relative error of each
result against the same reduction computed in float64. Usage:

    python bench/compiled_reductions.py [--repeats 20]
"""

from __future__ import annotations

import argparse

import numpy as np
from compiled_elementwise import autojit_rows as elementwise_rows
from timing import median_seconds


def cases(generator) -> list:
    """(name, function of the module's tensors, arrays): each function takes a module
    (autojit, torch or a NumPy adapter) and its tensors."""
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


def row(autojit, torch, name: str, function, arrays: list, repeats: int) -> str:
    """One case measured: times, the ratio to NumPy, errors against float64."""
    truth = np.asarray(function(NumpyModule, *[a.astype(np.float64) for a in arrays]))
    compiled = autojit.compile(lambda *xs: function(TensorModule(autojit), *xs))
    tensors = [autojit.tensor(a) for a in arrays]
    ours = median_seconds(lambda: compiled(*tensors), repeats)
    error = relative_error(compiled(*tensors).numpy(), truth)
    theirs = median_seconds(lambda: function(NumpyModule, *arrays), repeats)
    numpy_error = relative_error(function(NumpyModule, *arrays), truth)
    torch_time = torch_error = float("nan")
    if torch is not None:
        torch_tensors = [torch.from_numpy(a) for a in arrays]
        module = TensorModule(torch)
        torch_time = median_seconds(lambda: function(module, *torch_tensors), repeats)
        torch_error = relative_error(function(module, *torch_tensors).numpy(), truth)
    return (f"{name:28}{ours * 1e3:11.3f}{theirs * 1e3:10.3f}{torch_time * 1e3:10.3f}"
            f"{ours / theirs:9.2f}x{error:13.1e}{numpy_error:11.1e}{torch_error:11.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    import autojit

    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    generator = np.random.default_rng(0)
    print(f"compiled float32 reductions, median of {options.repeats}; error: largest relative "
          "error against float64")
    print(f"{'':28}{'autojit ms':>11}{'numpy ms':>10}{'torch ms':>10}{'vs numpy':>10}"
          f"{'autojit err':>13}{'numpy err':>11}{'torch err':>11}")
    for name, function, arrays in cases(generator):
        print(row(autojit, torch, name, function, arrays, options.repeats))
    data = generator.standard_normal(4 * 1024 * 1024).astype(np.float32)
    name, call = elementwise_rows(data)[0]
    seconds = median_seconds(call, options.repeats)
    print(f"fused elementwise forward+backward, 4M float32 ({name}): {seconds * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
