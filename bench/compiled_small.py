"""Two compiled workloads against torch eager and jax.jit, side by side in one process.

1. chain: 100 elementwise ops on a 64-element float32 tensor, forward and backward (the
   gradient of the sum with respect to two leaf weights). Per-call overhead dominates here.
2. penalty: a gradient-penalty step on an MLP 64-256-256-1 (tanh), batch 128, float32:
   loss = mean(f(x)) + 10 * (|df/dx| - 1)^2 averaged over rows, differentiated with respect to
   the parameters (double backward). torch.compile compiles this step only with
   `torch._dynamo.config.trace_autograd_ops = True`, which its row sets.

Each row is the median wall time per call and the ratio to compiled autojit. Usage:

    python bench/compiled_small.py [--repeats 50]
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import median_seconds


def chain(module, y, w, b, length=100):
    for step in range(length):
        kind = step % 5
        if kind == 0:
            y = y * w
        elif kind == 1:
            y = y + b
        elif kind == 2:
            y = module.tanh(y)
        elif kind == 3:
            y = module.sin(y)
        else:
            y = y * 0.5
    return y.sum()


def chain_inputs():
    generator = np.random.default_rng(0)
    return [generator.standard_normal(64).astype(np.float32) for _ in range(3)]


def autojit_chain(compiled: bool):
    import autojit

    x_data, w_data, b_data = chain_inputs()
    x = autojit.tensor(x_data)
    w = autojit.tensor(w_data, requires_grad=True)
    b = autojit.tensor(b_data, requires_grad=True)

    def step(x):
        w.grad = None
        b.grad = None
        chain(autojit, x, w, b).backward()
        return w.grad, b.grad

    function = autojit.compile(step) if compiled else step
    return lambda: function(x)


def torch_chain():
    import torch

    x_data, w_data, b_data = chain_inputs()
    x = torch.tensor(x_data)
    w = torch.tensor(w_data, requires_grad=True)
    b = torch.tensor(b_data, requires_grad=True)

    def step():
        w.grad = None
        b.grad = None
        chain(torch, x, w, b).backward()
        return w.grad, b.grad

    return step


def jax_chain():
    import jax
    import jax.numpy as jnp

    x_data, w_data, b_data = chain_inputs()
    gradient = jax.jit(jax.grad(lambda w, b, x: chain(jnp, x, w, b), argnums=(0, 1)))
    x, w, b = jnp.asarray(x_data), jnp.asarray(w_data), jnp.asarray(b_data)
    return lambda: jax.block_until_ready(gradient(w, b, x))


PENALTY_SIZES = (64, 256, 256, 1)


def penalty_parameters():
    generator = np.random.default_rng(1)
    arrays = []
    for fan_in, fan_out in zip(PENALTY_SIZES[:-1], PENALTY_SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        arrays.append(generator.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        arrays.append(generator.uniform(-bound, bound, fan_out).astype(np.float32))
    x = np.random.default_rng(2).standard_normal((128, 64)).astype(np.float32)
    return arrays, x


def mlp(module, parameters, x):
    h = x
    for layer in range(3):
        h = h @ parameters[2 * layer] + parameters[2 * layer + 1]
        if layer < 2:
            h = module.tanh(h)
    return h


def autojit_penalty(compiled: bool):
    import autojit

    arrays, x_data = penalty_parameters()
    parameters = [autojit.tensor(a, requires_grad=True) for a in arrays]

    def step(x):
        for p in parameters:
            p.grad = None
        out = mlp(autojit, parameters, x)
        (grad_x,) = autojit.autograd.grad(out.sum(), x, create_graph=True)
        norm = (grad_x * grad_x).sum(dim=1).sqrt()
        loss = out.mean() + 10 * ((norm - 1) ** 2).mean()
        loss.backward()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    return lambda: function(autojit.tensor(x_data, requires_grad=True))


def torch_penalty(compiled: bool = False):
    import torch

    arrays, x_data = penalty_parameters()
    parameters = [torch.tensor(a, requires_grad=True) for a in arrays]

    def step():
        x = torch.tensor(x_data, requires_grad=True)
        for p in parameters:
            p.grad = None
        out = mlp(torch, parameters, x)
        (grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        norm = (grad_x * grad_x).sum(dim=1).sqrt()
        loss = out.mean() + 10 * ((norm - 1) ** 2).mean()
        loss.backward()
        return loss.detach()

    if not compiled:
        return step
    # torch.compile refuses double backward unless dynamo traces the autograd calls too.
    import torch._dynamo.config as dynamo_config

    dynamo_config.trace_autograd_ops = True
    compiled_step = torch.compile(step)
    compiled_step()  # a failure to compile surfaces here, and the row is skipped
    return compiled_step


def torch_compiled_penalty():
    return torch_penalty(compiled=True)


def jax_penalty():
    import jax
    import jax.numpy as jnp

    arrays, x_data = penalty_parameters()

    def loss_fn(parameters, x):
        out = mlp(jnp, parameters, x)
        grad_x = jax.grad(lambda x: mlp(jnp, parameters, x).sum())(x)
        norm = jnp.sqrt((grad_x * grad_x).sum(axis=1))
        return out.mean() + 10 * ((norm - 1) ** 2).mean()

    gradient = jax.jit(jax.grad(loss_fn))
    parameters = [jnp.asarray(a) for a in arrays]
    x = jnp.asarray(x_data)
    return lambda: jax.block_until_ready(gradient(parameters, x))


def run(title: str, rows: list) -> None:
    compiled = rows[0][1]
    print(title)
    print(f"{'':36}{'us/call':>12}{'vs compiled':>14}")
    for name, seconds in rows:
        print(f"{name:36}{seconds * 1e6:12.1f}{seconds / compiled:13.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    options = parser.parse_args()
    for title, autojit_factory, others in (
            ("chain: 100 elementwise ops on 64 float32, forward + backward", autojit_chain,
             (("torch eager", torch_chain), ("jax.jit", jax_chain))),
            ("penalty: MLP 64-256-256-1, batch 128, gradient penalty (double backward)",
             autojit_penalty, (("torch eager", torch_penalty),
                               ("torch.compile (trace_autograd_ops)", torch_compiled_penalty),
                               ("jax.jit", jax_penalty)))):
        rows = [("autojit.compile", median_seconds(autojit_factory(True), options.repeats)),
                ("autojit eager", median_seconds(autojit_factory(False), options.repeats))]
        for name, factory in others:
            try:
                call = factory()
            except ImportError:
                continue
            except Exception as error:  # noqa: BLE001 - torch.compile needs a C++ compiler
                print(f"{name} skipped: {type(error).__name__}: {str(error)[:100]}")
                continue
            rows.append((name, median_seconds(call, options.repeats)))
        run(title, rows)


if __name__ == "__main__":
    main()
