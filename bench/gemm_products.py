"""The generated ?gemm (codegen/cpu/gemm/kernel.py) against the BLAS library's, single-threaded.

Both are called through ctypes with the same CBLAS row-major arguments on the training
benchmarks' float32 product shapes; the two run in interleaved rounds, so the machine's
drift reaches both alike. Prints the median microseconds of each and their ratio.

    python bench/gemm_products.py [--rounds 31]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time

import numpy as np

from autojit.codegen.cpu.gemm import blas
from autojit.codegen.cpu.gemm import kernel as gemm_kernel

_ROW_MAJOR, _NO_TRANSPOSE, _TRANSPOSE = 101, 111, 112
# (rows, inner, columns, a transposed, b transposed, lda when a is transposed and wider)
SHAPES = [(64, 256, 256, False, False, 0), (128, 256, 256, False, False, 0),
          (128, 256, 256, False, True, 0), (256, 128, 256, True, False, 0),
          (128, 256, 64, False, True, 0), (128, 784, 512, False, False, 0),
          (256, 512, 512, False, False, 0), (392, 256, 512, True, False, 0),
          (392, 256, 512, True, False, 784)]


def _function(address: int):
    word, pointer, scalar = ctypes.c_int64, ctypes.c_void_p, ctypes.c_float
    return ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, word, word,
                            word, scalar, pointer, word, pointer, word, scalar, pointer,
                            word)(address)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    arguments = parser.parse_args()
    threads, address = blas._blas_threads(), blas._gemm_address(np.float32)
    if threads is None or address is None:
        print("no OpenBLAS with 64-bit integers is loaded: nothing to compare against")
        return
    with blas.one_thread():  # as the workers call it: one core per call
        _compare(address, arguments.rounds)


def _compare(address: int, rounds: int) -> None:
    generator = np.random.default_rng(0)
    library = _function(address)
    print(f"{'product (rows x inner x columns)':44} {'generated us':>13} {'library us':>11}"
          f" {'ratio':>6}")
    for rows, inner, columns, transpose_a, transpose_b, lead in SHAPES:
        generated = gemm_kernel.address(np.float32, transpose_a, transpose_b, rows, columns)
        if generated is None:
            print("the generated gemm does not run on this host (it needs AVX-512)")
            return
        a = generator.standard_normal((inner, lead or rows) if transpose_a else
                                      (rows, inner)).astype(np.float32)
        b = generator.standard_normal((columns, inner) if transpose_b else
                                      (inner, columns)).astype(np.float32)
        c = np.empty((rows, columns), np.float32)
        call = (_ROW_MAJOR, _TRANSPOSE if transpose_a else _NO_TRANSPOSE,
                _TRANSPOSE if transpose_b else _NO_TRANSPOSE, rows, columns, inner, 1.0,
                a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1], 0.0, c.ctypes.data,
                columns)
        functions = {"generated": _function(generated), "library": library}
        times = {name: [] for name in functions}
        calls = max(1, int(2e7 / (rows * inner * columns)))
        for _ in range(rounds):
            for name, function in functions.items():
                start = time.perf_counter()
                for _ in range(calls):
                    function(*call)
                times[name].append((time.perf_counter() - start) / calls)
        label = f"{rows}x{inner}x{columns}" + (", a transposed" if transpose_a else "") + \
            (", b transposed" if transpose_b else "") + (f", lda {a.shape[1]}" if lead else "")
        mine, theirs = (statistics.median(times[name]) * 1e6 for name in functions)
        print(f"{label:44} {mine:13.1f} {theirs:11.1f} {mine / theirs:6.2f}")


if __name__ == "__main__":
    main()
