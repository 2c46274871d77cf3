"""The cost of summing a float32 library product's inner extent in blocks (codegen/cpu/workers.py).

A compiled plan's float32 product that the library computes (fewer than 16 rows or a narrow
result, where the generated gemm is not used, and every product on a host without AVX-512) sums
each element's k's, where there are more than FLOAT32_LONG_INNER of them, in blocks of
FLOAT32_INNER_BLOCK, each one library call into a scratch matrix, accumulated in float64 and
rounded once; one library call summed them all in one float32 chain. (The MLP rows' k's, 512
and 256, are now under FLOAT32_LONG_INNER: kind 2 runs them as one call too.) The two run
here on the same arrays, as the workers run a record, in interleaved rounds: record kind 2 (blocked)
against kind 0 (one call), on the float32 products of the training benchmarks and of a small
convolution's weight gradient that take that path. Prints the median microseconds of each,
their ratio, and each one's largest error against the float64 product.

    python bench/long_float32_products.py [--rounds 41]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from autojit.codegen.cpu import workers
from autojit.codegen.cpu.gemm import blas

# (label, rows, inner, columns, a transposed)
SHAPES = [("MLP output layer, forward", 256, 512, 10, False),
          ("MLP output layer, weight gradient", 512, 256, 10, True),
          ("conv 3->8 weight gradient, batch 16 of 16x16", 8, 4096, 27, True),
          ("conv 8->8 weight gradient, batch 16 of 16x16", 8, 4096, 72, True),
          ("conv 3->8 weight gradient, batch 64 of 32x32", 8, 65536, 27, True)]
_KIND = blas._RECORD_POSITIONS["kind"]


def _records(a, b, out, kind: int) -> np.ndarray:
    (record,) = blas.gemm_records(a, b, out, 1.0, 0.0)
    record = list(record)
    record[_KIND] = kind
    return np.array([record], np.int64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    arguments = parser.parse_args()
    native = workers.shared()
    if native is None or not blas.native_gemm(np.float32):
        raise SystemExit("no native workers here: the records cannot run")
    generator = np.random.default_rng(0)
    print(f"{'product':48s} {'blocked us':>10s} {'one call':>9s} {'ratio':>6s} "
          f"{'err blocked':>11s} {'err one':>9s}")
    for label, rows, inner, columns, transposed in SHAPES:
        a = generator.standard_normal((inner, rows) if transposed else (rows, inner))
        a -= a.mean(axis=0 if transposed else 1, keepdims=True)  # BN-like: zero-sum rows
        b = generator.standard_normal((inner, columns)) + 3.0
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        a32, a = (a32.T, a.T) if transposed else (a32, a)
        exact = a @ b
        times: dict = {2: [], 0: []}
        errors = {}
        with blas.one_thread():
            for kind in (2, 0):
                out = np.empty((rows, columns), np.float32)
                table = _records(a32, b32, out, kind)
                native.run(native.gemm_part, workers.data_address(table), 1)
                errors[kind] = np.abs(out - exact).max()
            for _ in range(arguments.rounds):
                for kind in (2, 0):
                    out = np.empty((rows, columns), np.float32)
                    table = _records(a32, b32, out, kind)
                    start = time.perf_counter()
                    native.run(native.gemm_part, workers.data_address(table), 1)
                    times[kind].append(time.perf_counter() - start)
        blocked, whole = (statistics.median(times[kind]) * 1e6 for kind in (2, 0))
        print(f"{label:48s} {blocked:10.1f} {whole:9.1f} {blocked / whole:5.2f}x "
              f"{errors[2]:11.3g} {errors[0]:9.3g}")


if __name__ == "__main__":
    main()
