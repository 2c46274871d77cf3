"""The native erf loops (mathlib/__init__.py's float64 erf, mathlib/single.py's float32 one, as
eager runs them): time and accuracy.

Times the float64 and float32 loops on 2^20 elements (normal samples times 3) beside
torch.erf, one thread each, taking turns: the best of `--calls` calls of each, CPU time of the
calling thread. `--against OLD/src` adds the loops of another tree (its IR, written by a
process that imports that tree, compiled here under another name), so a before and after run
in one process. `--accuracy` measures each loop's error against mpmath (40 digits, held as a
double-double) in ulps of the exact value: a dense sweep of [-7, 7] (280,001 points), 100,000
uniform and 50,000 normal samples, 30,000 log-uniform magnitudes down to the smallest
subnormal, every multiple of 1/64 in [-7, 7] with its two neighbours, and the special values
(0, -0, the infinities, NaN, tiny and subnormal arguments); float32 over the same points
rounded to float32. It takes about half a minute.

    python bench/erf.py [--against /path/to/older/src] [--calls 15] [--accuracy]
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import subprocess
import sys
import time

import numpy as np

SIZE = 1 << 20
DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
_CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_DUMP = ("import sys, numpy as np; from autojit.codegen.cpu import eager_math; "
         "sys.stdout.write(eager_math._text('erf', np.dtype(sys.argv[1])))")


def older_loops(source: str) -> dict:
    """dtype -> the erf loop of the tree at `source` (its src directory)."""
    from autojit.codegen.cpu.helper_modules import compile_module

    loops = {}
    environment = dict(os.environ, PYTHONPATH=source, PYTHONDONTWRITEBYTECODE="1")
    for dtype in DTYPES:
        text = subprocess.run([sys.executable, "-c", _DUMP, dtype.name], env=environment,
                              capture_output=True, text=True, check=True).stdout
        suffix = "f32" if dtype.itemsize == 4 else "f64"
        text = text.replace(f"autojit_eager_erf_{suffix}", f"older_eager_erf_{suffix}")
        (address,) = compile_module(text, [f"older_eager_erf_{suffix}"],
                                    ("bench-erf-older", text))
        loops[dtype] = _CALL(address)
    return loops


def current_loops() -> dict:
    from autojit.codegen.cpu import eager_math

    return {dtype: eager_math.loop("erf", dtype) for dtype in DTYPES}


def call(loop, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    loop(x.ctypes.data, out.ctypes.data, x.size)
    return out


def timings(rows: dict, calls: int) -> None:
    import torch

    torch.set_num_threads(1)
    print(f"{SIZE} elements, best of {calls} calls each, taking turns; CPU time of the calling "
          f"thread, ms per call")
    for dtype in DTYPES:
        x = (np.random.default_rng(0).standard_normal(SIZE) * 3).astype(dtype)
        out = np.empty_like(x)
        source, target = torch.from_numpy(x), torch.empty(SIZE, dtype=getattr(torch, dtype.name))
        runners = {name: functools.partial(loops[dtype], x.ctypes.data, out.ctypes.data, SIZE)
                   for name, loops in rows.items()}
        runners["torch.erf"] = functools.partial(torch.erf, source, out=target)
        best = dict.fromkeys(runners, float("inf"))
        for run in runners.values():
            run()
        for _ in range(calls):
            for name, run in runners.items():
                start = time.thread_time()
                run()
                best[name] = min(best[name], time.thread_time() - start)
        print(f"  {dtype.name}: " + "  ".join(f"{name} {seconds * 1e3:.2f}"
                                              for name, seconds in best.items()))


def points() -> np.ndarray:
    rng = np.random.default_rng(2024)
    grid = np.arange(-7 * 64, 7 * 64 + 1) / 64.0
    special = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308,
               1e-310, -1e-310, 1e-300, 1e-200, 1e-20, 1e-9, -1e-9, 1e-5, 0.5, 6.0, 5.9, 5.87,
               -5.87, 27.0, 1e300, -1e300, 1.7976931348623157e308]
    magnitudes = np.exp(rng.uniform(np.log(5e-324), np.log(7.0), 30000))
    return np.concatenate([special, np.linspace(-7, 7, 280001), rng.uniform(-7, 7, 100000),
                           rng.standard_normal(50000) * 2.5,
                           magnitudes * rng.choice([-1, 1], 30000),
                           grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf)])


def exact(x: np.ndarray) -> tuple:
    """erf(x) as hi + lo * 2**-600 (lo scaled, so it keeps its bits below the subnormals)."""
    import mpmath

    high, low = np.empty_like(x), np.empty_like(x)
    with mpmath.workdps(40):
        scale = mpmath.mpf(2) ** 600
        for i, value in enumerate(x.tolist()):
            e = mpmath.erf(value)
            high[i] = float(e)
            low[i] = float((e - high[i]) * scale)
    return high, low


def ulps(y: np.ndarray, high: np.ndarray, low: np.ndarray, dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    magnitude = np.abs(high)
    exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1.0)))
    unit = 2.0 ** (np.maximum(exponent, np.log2(float(info.tiny))) - info.nmant)
    with np.errstate(all="ignore"):
        return np.abs((y.astype(np.float64) - high) * 2.0 ** 600 - low) / (unit * 2.0 ** 600)


def accuracy(rows: dict) -> None:
    x = points()
    finite = x[np.isfinite(x)]
    references = {DTYPES[0]: (finite, *exact(finite))}
    with np.errstate(over="ignore"):
        single = np.unique(finite.astype(np.float32))
    single = single[np.isfinite(single)]
    references[DTYPES[1]] = (single, *exact(single.astype(np.float64)))
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-310])
    print(f"error against mpmath, ulps of the exact value ({finite.size} float64 points, "
          f"{single.size} float32)")
    for dtype in DTYPES:
        argument, high, low = references[dtype]
        for name, loops in rows.items():
            error = ulps(call(loops[dtype], argument), high, low, dtype)
            worst = int(np.argmax(error))
            edges = call(loops[dtype], specials.astype(dtype))
            print(f"  {dtype.name} {name}: max {error.max():.4f} at {argument[worst]!r}, mean "
                  f"{error.mean():.4f}, above 1/2 ulp {np.mean(error > 0.5) * 100:.2f}%; "
                  f"erf(0, -0, inf, -inf, nan, 5e-324, 1e-310) = {edges.tolist()}, "
                  f"sign of erf(-0) {bool(np.signbit(edges[1]))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="another tree's src directory")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--accuracy", action="store_true")
    args = parser.parse_args()
    rows = {"this tree": current_loops()}
    if args.against:
        rows["older"] = older_loops(args.against)
    timings(rows, args.calls)
    if args.accuracy:
        accuracy(rows)


if __name__ == "__main__":
    main()
