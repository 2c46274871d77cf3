"""Hessian-vector products of elementwise functions, compiled whole, against the memory they
must move: where a compiled second-order graph stands against one core's bandwidth.

For each f below, H v = the gradient of <grad f(x), v> as torch programs write it
(`autograd.grad` with create_graph=True, then `autograd.grad` again), on x and v of 1M float64:
autojit.compile of the whole function, autojit eager, torch eager and torch.compile (with
torch._dynamo.config.trace_autograd_ops = True), one thread each, taking turns (interleaved
rounds, bench/timing.py). A pass that reads x and v once and writes H v once moves 25.2 MB: each
row gives that over its time in GB/s, beside the copy and triad bandwidth of one core over
arrays of x's size (bench/stream_peak.py). `--kernels` prints the compiled plan of each: per
kernel, the bytes it reads and writes, against those 25.2 MB.

    python bench/second_order_elementwise.py [--rounds 5] [--steps 3] [--only sin,norm]
        [--kernels] [--no-torch-compile]
    python bench/second_order_elementwise.py --floors

`--floors` times compiled kernels over the same arrays instead: x * v (the memory alone),
sin(x) * v, and the sin HVP's closed form beside the HVP itself.

It uses autojit's public API and its plans only, so it runs on an older tree too
(PYTHONPATH=that/src) for a before and after.
"""

from __future__ import annotations

import argparse
import functools
import math

import numpy as np
from stream_peak import ceilings
from timing import interleaved_medians

SIZE = 1 << 20

FUNCTIONS = {
    "sin": lambda lib, x: (x.sin() * x + x * x * x / 3).sum(),
    "tanh": lambda lib, x: x.tanh().sum(),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x).sum(),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x).sum(),
    "silu-mean": lambda lib, x: lib.nn.functional.silu(x).mean(),
    "quartic": lambda lib, x: (x ** 4).sum() + x.cos().sum(),
    "log1p": lambda lib, x: (x * x).log1p().mean(),
    "norm": lambda lib, x: (x * x).sum().sqrt(),
}


def double_backward(lib, f):
    def hvp(x, v):
        x = x.detach().requires_grad_(True)
        (g,) = lib.autograd.grad(f(lib, x), x, create_graph=True)
        (h,) = lib.autograd.grad((g * v).sum(), x)
        return h
    return hvp


def kernel_bytes(plan) -> list:
    """(kernel name, bytes read, bytes written) per kernel of a compiled plan."""
    rows = []
    for step in plan.steps:
        kernel = getattr(step, "kernel", None)
        if kernel is None:
            continue
        read = sum(math.prod(value.shape) * value.dtype.itemsize for value in step.sources)
        written = sum(math.prod(kernel.output_shape(output)) * np.dtype(output.dtype.numpy).itemsize
                      for output in kernel.outputs)
        rows.append((kernel.name, read, written))
    return rows


def floors(autojit, x, v, args, moved: int) -> None:
    """What a kernel over the same three arrays costs: a product (memory alone), sin(x) * v
    (its transcendental function), and the sin HVP's closed form v (2 cos x - x sin x + 2x)
    against the HVP as differentiation writes it."""
    kernels = {"x * v": lambda x, v: x * v, "sin(x) * v": lambda x, v: x.sin() * v,
               "closed form": lambda x, v: v * (2 * x.cos() - x * x.sin() + 2 * x),
               "sin HVP": double_backward(autojit, FUNCTIONS["sin"])}
    runners = {}
    for name, kernel in kernels.items():
        compiled = autojit.compile(kernel)
        runners[name] = functools.partial(compiled, x, v)
    cpu: dict = {}
    interleaved_medians(runners, args.rounds, args.steps, cpu)
    for name, seconds in cpu.items():
        print(f"  {name:12} {seconds * 1e3:6.2f} ms {moved / seconds / 1e9:5.1f} GB/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--only", default=",".join(FUNCTIONS))
    parser.add_argument("--kernels", action="store_true", help="print each plan's bytes")
    parser.add_argument("--no-torch-compile", action="store_true")
    parser.add_argument("--floors", action="store_true",
                        help="time the compiled kernels that bound the sin HVP's instead")
    args = parser.parse_args()
    import torch

    import autojit
    torch.set_num_threads(1)
    autojit.set_num_threads(1)
    generator = np.random.default_rng(0)
    x_np, v_np = generator.uniform(-1, 1, SIZE), generator.uniform(-1, 1, SIZE)
    x, v = autojit.tensor(x_np), autojit.tensor(v_np)
    tx, tv = torch.tensor(x_np), torch.tensor(v_np)
    moved = 3 * x_np.nbytes
    rates = ceilings(x_np.nbytes)
    print(f"H v of 1M float64, {args.rounds} interleaved rounds of {args.steps} calls, 1 thread; "
          f"CPU time of the calling thread; {moved / 1e6:.1f} MB at the least")
    print(f"one core over arrays of {x_np.nbytes / 1e6:.1f} MB: copy {rates['copy']:.1f} GB/s, "
          f"triad {rates['triad']:.1f} GB/s")
    if args.floors:
        floors(autojit, x, v, args, moved)
        return
    print(f"  {'':10} {'compiled':>17} {'autojit eager':>14} {'torch eager':>12} "
          f"{'torch.compile':>14} {'compiled/tc':>12} {'eager/te':>9}")
    if not args.no_torch_compile:
        import torch._dynamo.config as dynamo_config

        dynamo_config.trace_autograd_ops = True
    for name in args.only.split(","):
        f = FUNCTIONS[name]
        compiled = autojit.compile(double_backward(autojit, f))
        runners = {"compiled": functools.partial(compiled, x, v),
                   "eager": functools.partial(double_backward(autojit, f), x, v),
                   "torch eager": functools.partial(double_backward(torch, f), tx, tv)}
        if not args.no_torch_compile:
            traced = torch.compile(double_backward(torch, f))
            runners["torch.compile"] = functools.partial(traced, tx, tv)
        expected = double_backward(torch, f)(tx, tv).numpy()
        for runner in runners.values():
            assert np.allclose(np.asarray(runner()), expected, rtol=1e-9, atol=1e-12), name
        cpu: dict = {}
        interleaved_medians(runners, args.rounds, args.steps, cpu)
        tc = cpu.get("torch.compile", math.nan)
        rate = moved / cpu["compiled"] / 1e9
        print(f"  {name:10} {cpu['compiled'] * 1e3:6.2f} ms {rate:4.1f} GB/s"
              f" {cpu['eager'] * 1e3:11.2f} ms {cpu['torch eager'] * 1e3:9.2f} ms "
              f"{tc * 1e3:11.2f} ms {cpu['compiled'] / tc:11.2f}x "
              f"{cpu['eager'] / cpu['torch eager']:8.2f}x")
        if args.kernels:
            for kernel, read, written in kernel_bytes(compiled.executables[0].plan):
                print(f"      {kernel:<28} read {read / 1e6:6.1f} MB  written "
                      f"{written / 1e6:6.1f} MB")


if __name__ == "__main__":
    main()
