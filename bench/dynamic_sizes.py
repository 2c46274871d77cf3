"""The cost of a new batch size: the MLP training step of bench/compiled_step.py called with a
sequence of batch sizes, compiled with and without dynamic shapes, against jax.jit and
torch.compile.

Each framework runs in its own process. It calls the step once at each size in turn; that
first call includes whatever tracing and compiling the size needs. The table gives the first
call at the first size; the median first call over the sizes after the first two, by which time
every framework that generalizes has done so; the median warm step at the first size (256 by
default); and how often the Python step function ran to be traced. autojit uses a fresh kernel
cache directory, so every kernel it needs is compiled by LLVM in this run. Usage:

    python bench/dynamic_sizes.py [--sizes 256,200,128,96,64,48,32,17]
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

from compiled_step import SIZES, batch, initial_parameters, jax_loss, sgd_step
from timing import median_seconds


class Counter:
    """How often a step function ran. Slots keep the count out of autojit's guards (which
    watch the Python scalars a compiled function can reach)."""

    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


def autojit_runner(dynamic):
    import autojit
    import autojit.nn.functional as F

    parameters = [autojit.tensor(a, requires_grad=True) for a in initial_parameters()]
    traces = Counter()

    def step(x, y):
        traces.count += 1
        return sgd_step(autojit, F.cross_entropy, parameters, x, y, 0.01)

    compiled = autojit.compile(step, dynamic=dynamic)

    def make(x_data, y_data):
        x, y = autojit.tensor(x_data), autojit.tensor(y_data)
        return lambda: compiled(x, y)

    return make, traces


def jax_runner():
    import jax
    import jax.numpy as jnp

    traces = Counter()

    def loss_fn(parameters, x, y):
        traces.count += 1
        return jax_loss(parameters, x, y)

    @jax.jit
    def update(parameters, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(parameters, x, y)
        return [p - 0.01 * g for p, g in zip(parameters, grads)], loss

    state = {"parameters": [jnp.asarray(a) for a in initial_parameters()]}

    def make(x_data, y_data):
        x, y = jnp.asarray(x_data), jnp.asarray(y_data)

        def call():
            state["parameters"], loss = update(state["parameters"], x, y)
            loss.block_until_ready()

        return call

    return make, traces


def torch_runner():
    import torch

    parameters = [torch.tensor(a, requires_grad=True) for a in initial_parameters()]

    def step(x, y):
        return sgd_step(torch, torch.nn.functional.cross_entropy, parameters, x, y, 0.01)

    compiled = torch.compile(step)

    def make(x_data, y_data):
        x, y = torch.tensor(x_data), torch.tensor(y_data)
        return lambda: compiled(x, y)

    # torch.compile replays the counter's increment on every call, so it counts calls, not
    # traces: the table shows no trace count for it.
    return make, None


def measure(name, factory, sizes, repeats):
    try:
        make, traces = factory()
    except ImportError:
        return None
    first_calls, warm = [], None
    for size in sizes:
        call = make(*batch(size, sizes=SIZES))
        start = time.perf_counter()
        call()
        first_calls.append(time.perf_counter() - start)
        if warm is None:  # the first size, once compiled
            warm = median_seconds(call, repeats)
    later = statistics.median(first_calls[2:]) if len(first_calls) > 2 else float("nan")
    return name, first_calls[0], later, warm, None if traces is None else traces.count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,200,128,96,64,48,32,17")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--no-torch-compile", action="store_true")
    parser.add_argument("--only", type=int, help=argparse.SUPPRESS)  # one runner, in a child
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    runners = [("autojit, dynamic=False", lambda: autojit_runner(False)),
               ("autojit, dynamic=None", lambda: autojit_runner(None)),
               ("autojit, dynamic=True", lambda: autojit_runner(True)),
               ("jax.jit", jax_runner)]
    if not options.no_torch_compile:
        runners.append(("torch.compile", torch_runner))
    if options.only is not None:
        # A fresh process and kernel cache directory per runner: no runner finds kernels
        # another one compiled.
        os.environ["AUTOJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="autojit-bench-")
        name, factory = runners[options.only]
        print(json.dumps(measure(name, factory, sizes, options.repeats)))
        return
    rows = []
    for index in range(len(runners)):
        completed = subprocess.run([sys.executable, __file__, "--only", str(index), "--sizes",
                                    options.sizes, "--repeats", str(options.repeats)],
                                   capture_output=True, text=True, check=False)
        lines = completed.stdout.strip().splitlines()
        row = json.loads(lines[-1]) if completed.returncode == 0 and lines else None
        if row is not None:
            rows.append(row)
        elif completed.returncode != 0:
            error = (completed.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"{runners[index][0]} failed: {error}")
    print(f"MLP {'-'.join(map(str, SIZES))} SGD step, batch sizes {sizes} in that order")
    print(f"{'':24}{'first size':>12}{'new size':>12}{'warm step':>12}{'traces':>8}")
    for name, first, later, warm, traces in rows:
        count = "-" if traces is None else str(traces)
        print(f"{name:24}{first * 1e3:10.1f}ms{later * 1e3:10.1f}ms{warm * 1e3:10.2f}ms"
              f"{count:>8}")
    print(f"new size: the median first call at a size after the first two; warm step: batch "
          f"{sizes[0]}")


if __name__ == "__main__":
    main()
