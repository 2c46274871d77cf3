"""Compile latency of the MLP training step (bench/compiled_step.py) in fresh processes.

Cold: a new interpreter with an empty kernel cache directory compiles every kernel with LLVM.
Warm: a new interpreter whose cache directory the cold run filled loads the kernels' machine
code from disk. "first call" is the first call of the compiled step (trace, passes, schedule,
kernels, the modules the compiler imports on first use, and running the step); "step" is a
later call (the median of 5), and "compile" their difference: the latency compiling adds,
which the targets are about. `import autojit` is shown apart ("import"); of the rest of
autojit only nn.functional (the step's) is imported before `autojit.compile(step)` and the
first call, which the first call's time includes. Each figure is the median over the runs.

Two clocks: "wall" (time.perf_counter) and "cpu" (time.process_time: the CPU time of every
thread of the process, so XLA's compiler threads and autojit's worker threads count). On a
shared machine wall times swing with the load while CPU times move far less; read both.

The breakdown reads the compile stages' own timings (CompiledFunction.stage_seconds,
compiler/stages.py), taken here on the calling thread's CPU clock, and the counters of
codegen/cpu/jit.py and codegen/cpu/compile_threads.py:

    tracing    the trace, prune and guard stages: running the function on symbolic tensors,
               and writing the guards
    passes     the optimize stage: the IR pass pipeline (ir/passes/pipeline.py)
    schedule   the partition, schedule and build stages on the calling thread, kernels
               excluded: fusion planning, rendering kernels, waiting for the compile threads,
               the code generator's modules imported on first use
    kernels    the calling thread's kernel compiles (none where compile threads run) or
               disk-cache loads (warm), from jit.STATISTICS
    run        the rest of the calling thread's time: autojit.compile (the compiler's modules,
               loaded on first use), running the plan the first time and writing results back
    threads    the compile threads' CPU time (compile_threads.STATISTICS): kernels and the
               native gemm compiled beside the calling thread (docs/notes/compile-latency.md)

jax.jit's figures (jax_loss of compiled_step.py, the same SGD update) come from the same kind
of fresh process, run by `--jax-python` (default: this interpreter); cold with an empty
persistent compilation cache (jax_compilation_cache_dir, every entry kept), warm with the one
the cold run filled. Without jax, its rows are left out.

Usage: python bench/compile_latency.py [--runs 3] [--jax-python PATH]. Targets (the
compile-latency issue): cold at most 0.5 s and below jax.jit, warm at most 0.1 s.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

STAGES = ("tracing", "passes", "schedule", "kernels", "run", "threads")
TARGETS = {"cold": 0.5, "warm": 0.1}


class _ThreadClock:
    """Stands in for the `time` module of compiler/stages.py: the stages on this thread's
    CPU clock."""

    perf_counter = staticmethod(time.thread_time)


def _clocks() -> tuple:
    return time.perf_counter(), time.process_time(), time.thread_time()


def _since(start: tuple) -> tuple:
    return tuple(now - then for now, then in zip(_clocks(), start))


def child() -> None:
    """One fresh process: import, compile the step on its first call, report as JSON."""
    start = _clocks()
    import autojit
    imported = _since(start)

    import autojit.compiler.stages as stages

    stages.time = _ThreadClock
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compiled_step import batch, initial_parameters, sgd_step

    import autojit.nn.functional as F

    x_data, y_data = batch(256)
    parameters = [autojit.tensor(a, requires_grad=True) for a in initial_parameters()]
    x, y = autojit.tensor(x_data), autojit.tensor(y_data)
    start = _clocks()  # autojit.compile itself loads the compiler on first use
    step = autojit.compile(lambda x, y: sgd_step(autojit, F.cross_entropy, parameters, x, y,
                                                 0.01))
    step(x, y)
    first = _since(start)
    later = []
    for _ in range(5):
        start = _clocks()
        step(x, y)
        later.append(_since(start))
    jit = sys.modules.get("autojit.codegen.cpu.jit")
    counters = dict(jit.STATISTICS) if jit is not None else {}
    kernels = counters.get("cpu seconds", 0.0)
    threads = sys.modules.get("autojit.codegen.cpu.compile_threads")
    thread_seconds = threads.STATISTICS["cpu seconds"] if threads is not None else 0.0
    seconds = step.stage_seconds
    stages = {
        "tracing": sum(seconds.get(name, 0.0) for name in ("trace", "prune", "guard")),
        "passes": seconds.get("optimize", 0.0),
        "schedule": sum(seconds.get(name, 0.0) for name in ("partition", "schedule", "build"))
        - kernels,
        "kernels": kernels,
        "run": first[2] - sum(seconds.values()),
        "threads": thread_seconds,
    }
    print(json.dumps({"import": imported[:2], "first call": first[:2],
                      "step": [statistics.median(t[i] for t in later) for i in (0, 1)],
                      "stages": stages,
                      "statistics": {name: counters.get(name, 0)
                                     for name in ("compiled", "loaded")},
                      "version": autojit.__version__}))


def jax_child(cache: str) -> None:
    """The same in jax: import, the jitted SGD update's first call, later calls."""
    start = _clocks()
    import jax
    import jax.numpy as jnp
    imported = _since(start)

    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compiled_step import batch, initial_parameters, jax_loss

    lr = 0.01

    @jax.jit
    def update(parameters, x, y):
        loss, grads = jax.value_and_grad(jax_loss)(parameters, x, y)
        return [p - lr * g for p, g in zip(parameters, grads)], loss

    x_data, y_data = batch(256)
    parameters = jax.block_until_ready([jnp.asarray(a) for a in initial_parameters()])
    x, y = jax.block_until_ready((jnp.asarray(x_data), jnp.asarray(y_data)))

    def step(parameters):
        parameters, loss = update(parameters, x, y)
        loss.block_until_ready()
        return parameters

    start = _clocks()
    parameters = step(parameters)
    first = _since(start)
    later = []
    for _ in range(5):
        start = _clocks()
        parameters = step(parameters)
        later.append(_since(start))
    print(json.dumps({"import": imported[:2], "first call": first[:2],
                      "step": [statistics.median(t[i] for t in later) for i in (0, 1)],
                      "version": jax.__version__}))


def run_child(arguments: list, environment: dict, python: str = sys.executable) -> dict:
    completed = subprocess.run([python, os.path.abspath(__file__), *arguments],
                               env={**os.environ, **environment}, capture_output=True,
                               text=True, timeout=600)
    if completed.returncode != 0:
        raise RuntimeError(f"the measuring process failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def median_report(reports: list) -> dict:
    def pair(field):
        return [statistics.median(r[field][i] for r in reports) for i in (0, 1)]

    summary = {"import": pair("import"), "first call": pair("first call"), "step": pair("step"),
               "compile": [statistics.median(r["first call"][i] - r["step"][i]
                                             for r in reports) for i in (0, 1)]}
    if "stages" in reports[0]:
        summary["stages"] = {stage: statistics.median(r["stages"][stage] for r in reports)
                             for stage in STAGES}
        summary["statistics"] = reports[-1]["statistics"]
    return summary


def _jax_available(python: str) -> bool:
    completed = subprocess.run([python, "-c", "import jax"], capture_output=True)
    return completed.returncode == 0


def _cache_bytecode() -> None:
    """Compile autojit's modules to bytecode where the interpreter would not write it
    (PYTHONDONTWRITEBYTECODE): a first call imports the code generator, and compiling its
    source on every import would be counted as compile latency."""
    import autojit

    package = os.path.dirname(autojit.__file__)
    compileall.compile_dir(package, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per figure")
    parser.add_argument("--jax-python", default=sys.executable,
                        help="the interpreter that has jax (default: this one)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jax-child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child()
        return
    if options.jax_child:
        jax_child(options.jax_child)
        return
    _cache_bytecode()
    with_jax = _jax_available(options.jax_python)
    reports: dict = {"cold": [], "warm": [], "jax cold": [], "jax warm": []}
    for _ in range(options.runs):
        cache = tempfile.mkdtemp(prefix="autojit-latency-")
        jax_cache = tempfile.mkdtemp(prefix="jax-latency-")
        try:
            environment = {"AUTOJIT_CACHE_DIR": cache, "AUTOJIT_DISK_CACHE": "1"}
            reports["cold"].append(run_child(["--child"], environment))
            reports["warm"].append(run_child(["--child"], environment))
            if with_jax:
                for name in ("jax cold", "jax warm"):
                    reports[name].append(run_child(["--jax-child", jax_cache], {},
                                                   options.jax_python))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(jax_cache, ignore_errors=True)
    rows = {name: median_report(runs) for name, runs in reports.items() if runs}
    print(f"Compile latency of the MLP 784-512-512-10 SGD step (batch 256, float32), first call "
          f"in a fresh process, median of {options.runs}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"{'':9}{'compile':>9}{'cpu':>8}{'target':>8}{'first call':>12}{'cpu':>8}"
          f"{'step':>8}{'import':>8}{'cpu':>8}")
    for name, report in rows.items():
        target = TARGETS.get(name)
        print(f"{name:9}{report['compile'][0]:8.3f}s{report['compile'][1]:7.3f}s"
              f"{f'{target:.1f}s' if target else '':>8}{report['first call'][0]:11.3f}s"
              f"{report['first call'][1]:7.3f}s{report['step'][0]:7.3f}s"
              f"{report['import'][0]:7.3f}s{report['import'][1]:7.3f}s")
    for name in ("cold", "warm"):
        if name == "cold" and "jax cold" in rows:
            for clock, index in (("wall", 0), ("cpu", 1)):
                print(f"cold compile against jax.jit ({clock}): "
                      f"{rows['cold']['compile'][index] / rows['jax cold']['compile'][index]:.2f}x")
    print(f"autojit breakdown, CPU time of the calling thread, then of the compile threads:"
          f"\n{'':9}" +
          "".join(f"{stage:>10}" for stage in STAGES) + "   kernels compiled/loaded")
    for name in ("cold", "warm"):
        report = rows[name]
        counts = report["statistics"]
        print(f"{name:9}" + "".join(f"{report['stages'][stage]:9.3f}s" for stage in STAGES) +
              f"   {counts.get('compiled', 0)}/{counts.get('loaded', 0)}")


if __name__ == "__main__":
    main()
