"""Compile time of many small functions at several shapes, with small kernels' code shared
across sizes (codegen/cpu/jit.py's shares_small_code) and without.

Ten small functions (elementwise, a softmax, a cumsum, reductions), each with its gradient,
compiled at six shapes in turn: sixty compiles, as a test suite's samples or a model's layers
of several widths make them. Each mode runs in fresh processes with an empty kernel cache; the
table gives the median over `--runs` of the milliseconds a compile takes (first call, the run
included) and the compile threads' CPU seconds in all. Usage:

    python bench/small_compiles.py [--runs 3] [--compiles 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def _functions(torch):
    return [torch.sin, torch.exp, torch.tanh, torch.sigmoid, lambda x: x * x + 1, torch.log1p,
            lambda x: x.sum(0), lambda x: x.softmax(-1), lambda x: x.cumsum(0),
            lambda x: x.abs().max()]


def child(compiles: int, share: bool) -> dict:
    import autojit as torch
    from autojit.codegen.cpu import compile_threads, jit

    jit.SHARE_SMALL_CODE = share
    functions = _functions(torch)
    started = time.perf_counter()
    for index in range(compiles):
        op = functions[index % len(functions)]

        def step(x, op=op):
            y = op(x)
            (gradient,) = torch.autograd.grad(y.sum(), x)
            return y, gradient

        x = torch.randn(3 + index // len(functions), 4, requires_grad=True)
        torch.compile(step)(x)
    seconds = time.perf_counter() - started
    return {"ms": seconds / compiles * 1e3, "threads": compile_threads.STATISTICS["cpu seconds"],
            "kernels": jit.STATISTICS["compiled"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compiles", type=int, default=60)
    parser.add_argument("--child", choices=["shared", "per-size"], help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(child(arguments.compiles, arguments.child == "shared")))
        return
    results: dict = {"shared": [], "per-size": []}
    for _ in range(arguments.runs):
        for mode in results:  # alternated, so that the machine's load falls on both
            with tempfile.TemporaryDirectory() as cache:
                done = subprocess.run(
                    [sys.executable, __file__, "--child", mode, "--compiles",
                     str(arguments.compiles)], env={**os.environ, "AUTOJIT_CACHE_DIR": cache},
                    capture_output=True, text=True, check=True)
            results[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{arguments.compiles} small compiles, {arguments.runs} fresh processes per mode")
    print(f"{'small kernels':<14}{'ms a compile':>14}{'thread CPU s':>14}{'LLVM kernels':>14}")
    for mode, runs in results.items():
        print(f"{mode:<14}{np.median([run['ms'] for run in runs]):>14.1f}"
              f"{np.median([run['threads'] for run in runs]):>14.3f}"
              f"{np.median([run['kernels'] for run in runs]):>14.0f}")


if __name__ == "__main__":
    main()
