"""One SGD training step of an MLP, compiled, against autojit eager, torch eager and jax.jit.

The step is forward (784-512-512-10, ReLU), cross-entropy, backward and an SGD update of every
parameter, on a batch of 256 float32 rows. Each framework runs the same step in the same
process; the table gives the median wall time per step and the ratio to compiled autojit.
torch and jax are used where installed. Usage:

    python bench/compiled_step.py [--repeats 30] [--batch 256] [--eager]

Also printed: the compiled function's first-call time (trace + passes + kernel compiles) and
its kernel count. With --eager, autojit eager and torch eager alone, taking turns (rounds of 3
steps each): no compiled function runs in the process, so NumPy's BLAS keeps its threads (a
compiled product sets it to one, codegen/cpu/gemm/blas.py).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from timing import interleaved_medians, median_seconds, print_against

SIZES = (784, 512, 512, 10)


def initial_parameters(seed: int = 0, sizes: tuple = SIZES) -> list[np.ndarray]:
    generator = np.random.default_rng(seed)
    arrays = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        arrays.append(generator.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        arrays.append(generator.uniform(-bound, bound, fan_out).astype(np.float32))
    return arrays


def batch(size: int, seed: int = 1, sizes: tuple = SIZES) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(seed)
    return (generator.standard_normal((size, sizes[0])).astype(np.float32),
            generator.integers(0, sizes[-1], size).astype(np.int64))


def sgd_step(framework, cross_entropy, parameters, x, y, lr):
    """The benchmarked step, written once for autojit and torch (`framework` is either module):
    an MLP with ReLU between the layers of `parameters` (weight, bias pairs), cross-entropy,
    backward, and an SGD update of every parameter."""
    layers = len(parameters) // 2
    h = x
    for layer in range(layers):
        h = h @ parameters[2 * layer] + parameters[2 * layer + 1]
        if layer < layers - 1:
            h = h.relu()
    loss = cross_entropy(h, y)
    loss.backward()
    with framework.no_grad():
        for p in parameters:
            p.sub_(lr * p.grad)
            p.grad = None
    return loss.detach()


def autojit_step(compiled: bool, x_data, y_data, lr=0.01):
    import autojit
    import autojit.nn.functional as F

    parameters = [autojit.tensor(a, requires_grad=True) for a in initial_parameters()]
    x, y = autojit.tensor(x_data), autojit.tensor(y_data)

    def step(x, y):
        return sgd_step(autojit, F.cross_entropy, parameters, x, y, lr)

    function = autojit.compile(step) if compiled else step
    start = time.perf_counter()
    function(x, y)
    first = time.perf_counter() - start
    return (lambda: function(x, y)), first, function


def torch_step(x_data, y_data, lr=0.01):
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads()))
    parameters = [torch.tensor(a, requires_grad=True) for a in initial_parameters()]
    x, y = torch.tensor(x_data), torch.tensor(y_data)

    def step():
        return sgd_step(torch, torch.nn.functional.cross_entropy, parameters, x, y, lr)

    return step


def jax_loss(parameters, x, y):
    """The step's loss in JAX (bench/dynamic_sizes.py uses it too)."""
    import jax
    import jax.numpy as jnp

    h = x
    for layer in range(3):
        h = h @ parameters[2 * layer] + parameters[2 * layer + 1]
        if layer < 2:
            h = jax.nn.relu(h)
    log_probabilities = jax.nn.log_softmax(h)
    return -jnp.mean(jnp.take_along_axis(log_probabilities, y[:, None], axis=1))


def jax_step(x_data, y_data, lr=0.01):
    import jax
    import jax.numpy as jnp

    @jax.jit
    def update(parameters, x, y):
        loss, grads = jax.value_and_grad(jax_loss)(parameters, x, y)
        return [p - lr * g for p, g in zip(parameters, grads)], loss

    state = {"parameters": [jnp.asarray(a) for a in initial_parameters()]}
    x, y = jnp.asarray(x_data), jnp.asarray(y_data)

    def step():
        state["parameters"], loss = update(state["parameters"], x, y)
        loss.block_until_ready()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--eager", action="store_true",
                        help="autojit eager against torch eager only, taking turns")
    options = parser.parse_args()
    x_data, y_data = batch(options.batch)
    if options.eager:
        eager_step, _, _ = autojit_step(False, x_data, y_data)
        runners = {"autojit eager": eager_step, "torch eager": torch_step(x_data, y_data)}
        medians = interleaved_medians(runners, options.repeats, 3, settle=0.3)
        print(f"MLP {'-'.join(map(str, SIZES))} SGD step, batch {options.batch}, float32, "
              f"median of {options.repeats} interleaved rounds of 3 steps")
        print_against(medians, "torch eager")
        return

    rows = []
    compiled_step, first_call, compiled = autojit_step(True, x_data, y_data)
    compiled_time = median_seconds(compiled_step, options.repeats)
    rows.append(("autojit.compile", compiled_time))
    eager_step, _, _ = autojit_step(False, x_data, y_data)
    rows.append(("autojit eager", median_seconds(eager_step, options.repeats)))
    for name, factory in (("torch eager", torch_step), ("jax.jit", jax_step)):
        try:
            step = factory(x_data, y_data)
        except ImportError:
            continue
        rows.append((name, median_seconds(step, options.repeats)))

    print(f"MLP {'-'.join(map(str, SIZES))} SGD step, batch {options.batch}, float32, "
          f"median of {options.repeats}")
    print(f"{'':18}{'ms/step':>10}{'vs compiled':>14}")
    for name, seconds in rows:
        print(f"{name:18}{seconds * 1e3:10.3f}{seconds / compiled_time:13.2f}x")
    plan = compiled.executables[0].plan if compiled.executables else None
    kernels = plan.kernel_count if plan is not None else 0
    print(f"compiled first call (trace, passes, kernels): {first_call:.3f} s; "
          f"{kernels} fused kernels")


if __name__ == "__main__":
    main()
