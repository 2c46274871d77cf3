"""Fused elementwise forward and backward on a large vector, compiled, against the others.

y = (tanh(x) * sigmoid(x) + 0.5 * x * x).sum() and dy/dx for x of 4M float32 elements. The
minimum memory traffic is one read of x and one write of dy/dx (32 MB); everything else is
arithmetic a fused kernel keeps in registers. Rows: autojit.compile with the gradient taken
inside the compiled function, and with it taken outside (a compiled backward); autojit eager;
torch eager and torch.compile; jax.jit of value_and_grad. torch and jax are used where
installed (torch.compile also needs a C++ compiler). Usage:

    python bench/compiled_elementwise.py [--repeats 20] [--size 4194304]
"""

from __future__ import annotations

import argparse

import numpy as np
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--size", type=int, default=4 * 1024 * 1024)
    options = parser.parse_args()
    data = np.random.default_rng(0).standard_normal(options.size).astype(np.float32)

    rows = autojit_rows(data)
    for factory in (torch_rows, jax_rows):
        try:
            rows.extend(factory(data))
        except ImportError:
            continue
    times = [(name, median_seconds(call, options.repeats)) for name, call in rows]
    reference = times[0][1]
    megabytes = 2 * data.nbytes / 1e6
    print(f"fused elementwise forward+backward, {options.size} float32, median of "
          f"{options.repeats}")
    print(f"{'':32}{'ms':>9}{'GB/s (min bytes)':>18}{'vs compiled':>13}")
    for name, seconds in times:
        print(f"{name:32}{seconds * 1e3:9.3f}{megabytes / 1e3 / seconds:18.1f}"
              f"{seconds / reference:12.2f}x")


if __name__ == "__main__":
    main()
