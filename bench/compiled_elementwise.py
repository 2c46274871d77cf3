"""Fused elementwise forward and backward on a large vector, compiled, against the others.

y = (tanh(x) * sigmoid(x) + 0.5 * x * x).sum() and dy/dx for x of 4M float32 elements. The
minimum memory traffic is one read of x and one write of dy/dx (32 MB); everything else is
arithmetic a fused kernel keeps in registers. Rows: autojit.compile with the gradient taken
inside the compiled function, and with it taken outside (a compiled backward); autojit eager;
torch eager and torch.compile; jax.jit of value_and_grad; Dr.Jit's LLVM backend (traced each
call, and frozen). torch, jax and Dr.Jit are used where installed (torch.compile also needs a
C++ compiler, Dr.Jit an LLVM library). Each row gives the minimum bytes over its time, and
that as a fraction of one core's copy bandwidth over arrays of x's size (bench/stream_peak.py:
a read and a write per element, as here). Usage:

    python bench/compiled_elementwise.py [--repeats 20] [--size 4194304]
"""

from __future__ import annotations

import argparse

import numpy as np
from stream_peak import ceilings
from timing import median_seconds


def autojit_rows(data: np.ndarray) -> list:
    import autojit

    def function(x):
        return (x.tanh() * x.sigmoid() + 0.5 * x * x).sum()

    def value_and_grad(x):
        y = function(x)
        (gradient,) = autojit.autograd.grad(y, x)
        return y, gradient

    x = autojit.tensor(data, requires_grad=True)
    inside = autojit.compile(value_and_grad)
    outside = autojit.compile(function)

    def grad_outside():
        y = outside(x)
        return y, autojit.autograd.grad(y, x)[0]

    return [("autojit.compile", lambda: inside(x)),
            ("autojit.compile, grad outside", grad_outside),
            ("autojit eager", lambda: value_and_grad(x))]


def torch_rows(data: np.ndarray) -> list:
    import torch

    def function(x):
        return (torch.tanh(x) * torch.sigmoid(x) + 0.5 * x * x).sum()

    x = torch.tensor(data, requires_grad=True)

    def eager():
        y = function(x)
        return y, torch.autograd.grad(y, x)[0]

    rows = [("torch eager", eager)]
    try:
        compiled = torch.compile(function)
        y = compiled(x)
        torch.autograd.grad(y, x)

        def with_compile():
            y = compiled(x)
            return y, torch.autograd.grad(y, x)[0]

        rows.append(("torch.compile", with_compile))
    except Exception as error:  # no C++ compiler, or an unsupported platform
        print(f"torch.compile unavailable: {type(error).__name__}: {str(error)[:120]}")
    return rows


def jax_rows(data: np.ndarray) -> list:
    import jax
    import jax.numpy as jnp

    def function(x):
        return jnp.sum(jnp.tanh(x) * jax.nn.sigmoid(x) + 0.5 * x * x)

    step = jax.jit(jax.value_and_grad(function))
    x = jnp.asarray(data)

    def run():
        value, gradient = step(x)
        gradient.block_until_ready()
        return value, gradient

    return [("jax.jit", run)]


def drjit_rows(data: np.ndarray) -> list:
    """Dr.Jit's LLVM backend with its automatic differentiation: traced on every call, its
    kernels cached; and, where Dr.Jit has it, the same function frozen (`dr.freeze` records
    the kernel launches once and replays them)."""
    import drjit as dr
    from drjit.llvm.ad import Float

    if not dr.has_backend(dr.JitBackend.LLVM):
        raise ImportError("Dr.Jit's LLVM backend is not available (no LLVM library)")

    def value_and_grad(x):
        dr.enable_grad(x)
        y = dr.sum(dr.tanh(x) * dr.rcp(1 + dr.exp(-x)) + 0.5 * x * x)
        dr.backward(y)
        gradient = dr.grad(x)
        dr.eval(y, gradient)
        return y, gradient

    def timed(function):
        def run():
            x = Float(data_on_device)
            result = function(x)
            dr.sync_thread()  # the LLVM backend's kernels run on its thread pool
            return result
        return run

    data_on_device = Float(data)
    dr.eval(data_on_device)
    rows = [("Dr.Jit (LLVM)", timed(value_and_grad))]
    if hasattr(dr, "freeze"):
        rows.append(("Dr.Jit (LLVM), frozen", timed(dr.freeze(value_and_grad))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--size", type=int, default=4 * 1024 * 1024)
    options = parser.parse_args()
    data = np.random.default_rng(0).standard_normal(options.size).astype(np.float32)

    rows = autojit_rows(data)
    for factory in (torch_rows, jax_rows, drjit_rows):
        try:
            rows.extend(factory(data))
        except ImportError:
            continue
    times = [(name, median_seconds(call, options.repeats)) for name, call in rows]
    reference = times[0][1]
    megabytes = 2 * data.nbytes / 1e6
    rates = ceilings(data.nbytes)
    print(f"fused elementwise forward+backward, {options.size} float32, median of "
          f"{options.repeats}")
    print(f"one core's bandwidth over arrays of {data.nbytes / 1e6:.1f} MB: copy "
          f"{rates['copy']:.1f} GB/s, triad {rates['triad']:.1f} GB/s (stream_peak.py)")
    print(f"{'':32}{'ms':>9}{'GB/s (min bytes)':>18}{'of copy':>9}{'vs compiled':>13}")
    for name, seconds in times:
        rate = megabytes / 1e3 / seconds
        print(f"{name:32}{seconds * 1e3:9.3f}{rate:18.1f}{rate / rates['copy']:8.0%}"
              f"{seconds / reference:12.2f}x")


if __name__ == "__main__":
    main()
