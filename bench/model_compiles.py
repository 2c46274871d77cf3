"""The library models' first compiled calls with large kernels' code shared across sizes
(codegen/cpu/jit.py's shares_large_code) and with each size its own code.

Each model of bench/models.py is trained by its compiled step (`torch.compile(step)` through the
drop-in: forward, cross-entropy, backward, AdamW) in a fresh process with an empty kernel
cache, once with `jit.SHARED_INNER_EXTENT` as it is and once set to None (small kernels share
their code in both). The first call runs eagerly; the second traces and compiles. The table
gives, per model and mode, the median over `--runs` of the first two calls' seconds, the LLVM
compiles and the compile threads' CPU seconds during them, and the median of `--steps` steps
after three more. The modes alternate, so that the machine's load falls on both. Usage:

    python bench/model_compiles.py [--models efficientnet_b0,resnet18_timm] [--runs 2]
                                   [--steps 10] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

VISION = ("resnet18_timm", "convnext_atto", "efficientnet_b0", "mobilenetv3_small_100")


def child(name: str, shared: bool, steps: int, threads: int) -> dict:
    import autojit.drop_in

    autojit.drop_in.install()
    import torch
    from models import _define_torchvision_operators, build, training_step

    from autojit.codegen.cpu import compile_threads, jit

    if not shared:
        jit.SHARED_INNER_EXTENT = None
    torch.set_num_threads(threads)
    _keep = _define_torchvision_operators(torch)  # noqa: F841 - the library stays alive
    torch.manual_seed(0)
    model, batch, loss_of = build(name, torch)
    step = training_step(torch, model, loss_of, "compiled step")
    inputs = batch(torch.Generator().manual_seed(1))
    first = []
    for _ in range(2):
        started = time.perf_counter()
        float(step(*inputs))
        first.append(time.perf_counter() - started)
    kernels, threads_cpu = jit.STATISTICS["compiled"], compile_threads.STATISTICS["cpu seconds"]
    for _ in range(3):  # the steady state: kept buffers allocated, the native program recorded
        float(step(*inputs))
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        float(step(*inputs))
        times.append(time.perf_counter() - started)
    return {"first": first, "kernels": kernels, "threads": threads_cpu,
            "step": statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(VISION))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=["shared", "per-size"], help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(child(arguments.child, arguments.mode == "shared", arguments.steps,
                               arguments.threads)))
        return
    here = os.path.dirname(os.path.abspath(__file__))
    print(f"{'model':<24}{'large kernels':<15}{'first call':>11}{'second':>9}"
          f"{'LLVM kernels':>14}{'thread CPU s':>14}{'step ms':>9}")
    for name in arguments.models.split(","):
        results: dict = {"shared": [], "per-size": []}
        for _ in range(arguments.runs):
            for mode in results:
                with tempfile.TemporaryDirectory() as cache:
                    done = subprocess.run(
                        [sys.executable, __file__, "--child", name, "--mode", mode,
                         "--steps", str(arguments.steps), "--threads", str(arguments.threads)],
                        env={**os.environ, "AUTOJIT_CACHE_DIR": cache,
                             "PYTHONPATH": os.pathsep.join(
                                 [here, os.environ.get("PYTHONPATH", "")])},
                        capture_output=True, text=True, check=True)
                results[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
        for mode, runs in results.items():
            print(f"{name:<24}{mode:<15}"
                  f"{np.median([run['first'][0] for run in runs]):>10.2f}s"
                  f"{np.median([run['first'][1] for run in runs]):>8.2f}s"
                  f"{np.median([run['kernels'] for run in runs]):>14.0f}"
                  f"{np.median([run['threads'] for run in runs]):>14.2f}"
                  f"{np.median([run['step'] for run in runs]) * 1e3:>9.1f}")


if __name__ == "__main__":
    main()
