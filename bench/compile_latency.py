"""Compile latency of the MLP training step (bench/compiled_step.py) in fresh processes.

Cold: a new interpreter with an empty kernel cache directory compiles every kernel with LLVM.
Warm: a new interpreter whose cache directory the cold run filled loads the kernels' object
code from disk. "first call" is the first call of the compiled step (trace, passes, schedule,
kernels, and running the step); "step" is a later call (the median of 5), and "compile" their
difference: the latency compiling adds, which the targets are about. Each figure is the median
over the runs; `import autojit` is shown apart. The breakdown reads the compile stages' own
timings (CompiledFunction.stage_seconds, compiler/stages.py), with the kernels' compiles timed
by wrapping the CPU backend's compile_kernel:

    tracing    the trace, prune and guard stages: running the function on symbolic tensors,
               and writing the guards
    passes     the optimize stage: the IR pass pipeline (ir/passes/pipeline.py)
    schedule   the partition, schedule and build stages, kernels excluded: fusion planning and
               kernel building (codegen/schedule/fusion.py), the executable
    kernels    compile_kernel: LLVM compiles (cold) or disk-cache loads (warm), the one-time
               LLVM target set-up excluded (shown apart as "llvm init")
    run        the rest of the first call: running the plan (the first time: NumPy's BLAS
               and the kernels' pages warm up) and writing results back

Usage: python bench/compile_latency.py [--runs 3]. Targets (the compiler issue): cold at most
2 s, warm at most 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

STAGES = ("tracing", "passes", "schedule", "kernels", "llvm init", "run")


def _wrap(owner, name, totals, bucket):
    """Replace owner.name by a version that adds its wall time to totals[bucket]."""
    original = getattr(owner, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[bucket] = totals.get(bucket, 0.0) + time.perf_counter() - start

    setattr(owner, name, timed)


def child() -> None:
    """One fresh process: import, compile the step on its first call, report as JSON."""
    start = time.perf_counter()
    import autojit
    from autojit.codegen.cpu import jit as cpu
    imported = time.perf_counter() - start

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compiled_step import autojit_step, batch

    totals: dict = {}
    _wrap(cpu, "compile_kernel", totals, "kernels")
    _wrap(cpu._Backend, "__init__", totals, "llvm init")
    x_data, y_data = batch(256)
    step, first_call, compiled = autojit_step(True, x_data, y_data)
    later = []
    for _ in range(5):
        start = time.perf_counter()
        step()
        later.append(time.perf_counter() - start)
    seconds = compiled.stage_seconds
    stages = {
        "tracing": sum(seconds.get(name, 0.0) for name in ("trace", "prune", "guard")),
        "passes": seconds.get("optimize", 0.0),
        "schedule": sum(seconds.get(name, 0.0) for name in ("partition", "schedule", "build"))
        - totals.get("kernels", 0.0),
        "kernels": totals.get("kernels", 0.0) - totals.get("llvm init", 0.0),
        "llvm init": totals.get("llvm init", 0.0),
        "run": first_call - sum(seconds.values()),
    }
    print(json.dumps({"import": imported, "first call": first_call,
                      "step": statistics.median(later), "stages": stages,
                      "statistics": dict(cpu.STATISTICS),
                      "executables": len(compiled.executables),
                      "version": autojit.__version__}))


def run_child(cache: str) -> dict:
    env = {**os.environ, "AUTOJIT_CACHE_DIR": cache}
    env.pop("AUTOJIT_DISK_CACHE", None)
    completed = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                               capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        raise SystemExit(f"the measuring process failed:\n{completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def median_report(reports: list) -> dict:
    return {
        "import": statistics.median(r["import"] for r in reports),
        "first call": statistics.median(r["first call"] for r in reports),
        "step": statistics.median(r["step"] for r in reports),
        "compile": statistics.median(r["first call"] - r["step"] for r in reports),
        "stages": {stage: statistics.median(r["stages"][stage] for r in reports)
                   for stage in STAGES},
        "statistics": reports[-1]["statistics"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per figure")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child()
        return
    cold, warm = [], []
    for _ in range(options.runs):
        cache = tempfile.mkdtemp(prefix="autojit-latency-")
        try:
            cold.append(run_child(cache))
            warm.append(run_child(cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    rows = [("cold", median_report(cold), 2.0), ("warm", median_report(warm), 0.2)]
    print(f"Compile latency of the MLP 784-512-512-10 SGD step (batch 256, float32), first call "
          f"in a fresh process, median of {options.runs}")
    print(f"{'':6}{'compile':>9}{'target':>8}{'first call':>12}{'step':>8}{'import':>9}" +
          "".join(f"{stage:>11}" for stage in STAGES) + "   kernels compiled/loaded")
    for name, report, target in rows:
        counts = report["statistics"]
        print(f"{name:6}{report['compile']:8.3f}s{target:7.1f}s{report['first call']:11.3f}s"
              f"{report['step']:7.3f}s{report['import']:8.3f}s" +
              "".join(f"{report['stages'][stage]:10.3f}s" for stage in STAGES) +
              f"   {counts.get('compiled', 0)}/{counts.get('loaded', 0)}")


if __name__ == "__main__":
    main()
