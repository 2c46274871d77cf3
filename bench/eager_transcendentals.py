"""Eager transcendental functions on 2^20 elements: autojit eager against NumPy and torch.

For exp, log, log1p, expm1, tanh, sigmoid, erf, sin and cos of a float64 and a float32 array of
2^20 elements (contiguous: the size and layout for which autojit runs its native loops,
ops/elementwise/native_math.py), one call of each library's function, taking turns (interleaved
rounds, bench/timing.py), one thread each: autojit eager (`autojit.tanh(t)`, the dispatch included),
the NumPy function the eager impl runs below the native loops' size (SciPy's expit and erf for
sigmoid and erf), and torch eager. Medians of the calling thread's CPU time, ms per call, and
autojit / torch.

    python bench/eager_transcendentals.py [--rounds 7] [--steps 3] [--only tanh,erf]

It uses autojit's public API only, so it runs on an older tree too (PYTHONPATH=that/src).
"""

from __future__ import annotations

import argparse
import functools

import numpy as np
from timing import interleaved_medians

SIZE = 1 << 20
NAMES = ("exp", "log", "log1p", "expm1", "tanh", "sigmoid", "erf", "sin", "cos")


def arguments(name: str, dtype) -> np.ndarray:
    """Normal samples times 3, their absolute values for log and log1p."""
    x = np.random.default_rng(0).standard_normal(SIZE) * 3
    return (np.abs(x) if name in ("log", "log1p") else x).astype(dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--only", default=",".join(NAMES))
    args = parser.parse_args()
    import scipy.special
    import torch

    import autojit
    torch.set_num_threads(1)
    autojit.set_num_threads(1)
    numpy_functions = {name: getattr(np, name, None) for name in NAMES}
    numpy_functions.update(sigmoid=scipy.special.expit, erf=scipy.special.erf)
    print(f"{SIZE} elements, {args.rounds} interleaved rounds of {args.steps} calls, 1 thread; "
          f"CPU time of the calling thread, ms per call")
    print(f"  {'':16} {'autojit':>8} {'NumPy':>8} {'torch':>8} {'autojit/torch':>14} "
          f"{'NumPy/torch':>12}")
    for dtype in (np.float64, np.float32):
        for name in args.only.split(","):
            x = arguments(name, dtype)
            mine, theirs = autojit.tensor(x), torch.tensor(x)
            runners = {"autojit": functools.partial(getattr(autojit, name), mine),
                       "NumPy": functools.partial(numpy_functions[name], x),
                       "torch": functools.partial(getattr(torch, name), theirs)}
            cpu: dict = {}
            interleaved_medians(runners, args.rounds, args.steps, cpu)
            print(f"  {np.dtype(dtype).name:8} {name:7} {cpu['autojit'] * 1e3:8.2f} "
                  f"{cpu['NumPy'] * 1e3:8.2f} {cpu['torch'] * 1e3:8.2f} "
                  f"{cpu['autojit'] / cpu['torch']:13.2f}x {cpu['NumPy'] / cpu['torch']:11.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
