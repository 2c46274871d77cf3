"""Peak resident memory and the first two calls of training steps, each runner alone in a
fresh process: autojit compiled, autojit eager and torch eager.

The steps: bench/resnet_step.py's ResNet-8 SGD step (batch 32x3x32x32), and a GPT-style
AdamW step of bench/transformer_step.py's model at nanoGPT's small sizes (d_model 256, 4
heads, feed-forward 1024, batch 8 of 128 tokens) with 4 and with 8 layers. Each process
imports only its framework, builds the model, runs 20 steps and reports the first, second and
third call's seconds (the third is a compiled step's executable's first run), the median of the
later calls, and its peak resident memory (VmHWM, the imports included: torch's own
libraries are about 240 MiB of its figure). autojit's kernels come from its disk cache where
an earlier run left them (run twice: the second run is the warm one). Each call is timed on
two clocks: wall time and the calling thread's CPU time (time.thread_time), which moves far
less than wall time on a shared machine. autojit's modules are compiled to bytecode first
where the interpreter would not write it (PYTHONDONTWRITEBYTECODE), so that a first call's
imports are not timed as compiling source. `--models` and `--runners` pick rows (names
separated by semicolons). Usage:

    python bench/step_memory.py [--steps 20] [--threads 1] [--models "M;..."] [--runners "R;..."]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RUNNERS = ("autojit compiled", "autojit eager", "torch eager")
MODELS = ("resnet-8", "gpt, 4 layers", "gpt, 8 layers")


def _gpt_step(framework, layers: int, compiled: bool):
    import transformer_step as gpt
    from gpt_step import configure

    configure(layers)
    framework.manual_seed(0)
    step = gpt.make_step(framework, gpt.build(framework.nn, framework))
    step = framework.compile(step) if compiled else step
    ids = np.random.default_rng(0).integers(0, gpt.VOCABULARY, (gpt.BATCH, gpt.LENGTH + 1))
    batch = framework.tensor(ids[:, :-1]), framework.tensor(ids[:, 1:])
    return lambda: step(*batch).item()


def alone(model: str, runner: str, steps: int, threads: int) -> dict:
    """In this fresh process: the first two calls' seconds and the peak resident MiB."""
    sys.path.insert(0, str(HERE))
    framework = __import__(runner.split()[0])
    framework.set_num_threads(threads)
    if model == "resnet-8":
        import resnet_step

        run = resnet_step.runner(runner, None)
    else:
        run = _gpt_step(framework, int(model.split()[1]), runner == "autojit compiled")
    calls, cpu = [], []
    for _ in range(max(steps, 3)):
        started, started_cpu = time.perf_counter(), time.thread_time()
        run()
        calls.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - started_cpu)
    with open("/proc/self/status", encoding="ascii") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    # The third call is a compiled step's executable's first run (its program assembled, its
    # guards compiled); "steady" is the median of the calls after it, where there are any.
    steady = float(np.median(calls[3:])) if len(calls) > 3 else float("nan")
    return {"first": calls[0], "second": calls[1], "third": calls[2], "first cpu": cpu[0],
            "second cpu": cpu[1], "steady": steady, "peak": peak / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", default=";".join(MODELS))
    parser.add_argument("--runners", default=";".join(RUNNERS))
    parser.add_argument("--alone", nargs=2, metavar=("MODEL", "RUNNER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.alone:
        print(json.dumps(alone(*args.alone, args.steps, args.threads)))
        return
    _cache_bytecode()
    print(f"each runner alone in a fresh process, {args.steps} steps, {args.threads} thread(s)")
    print("| step | runner | first call s (cpu) | second call s (cpu) | third call s | "
          "steady call s | peak resident MiB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for model in args.models.split(";"):
        for runner in args.runners.split(";"):
            completed = subprocess.run(
                [sys.executable, __file__, "--alone", model, runner, "--steps",
                 str(args.steps), "--threads", str(args.threads)],
                capture_output=True, text=True, check=False, cwd=HERE)
            if completed.returncode != 0:
                print(f"| {model} | {runner} | failed: "
                      f"{completed.stderr.strip().splitlines()[-1][:80]} | | | | |")
                continue
            figures = json.loads(completed.stdout.strip().splitlines()[-1])
            print(f"| {model} | {runner} | {figures['first']:.2f} ({figures['first cpu']:.2f}) | "
                  f"{figures['second']:.2f} ({figures['second cpu']:.2f}) | "
                  f"{figures['third']:.3f} | {figures['steady']:.3f} | {figures['peak']:.1f} |")


def _cache_bytecode() -> None:
    """Compile autojit's modules to bytecode where the interpreter would not write it, as
    bench/compile_latency.py does: a first call imports the code generator."""
    import autojit

    compileall.compile_dir(os.path.dirname(autojit.__file__), quiet=1)


if __name__ == "__main__":
    main()
