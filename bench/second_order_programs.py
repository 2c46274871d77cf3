"""Two training programs that differentiate through gradients, run under torch, autojit eager
and autojit compiled, and how far apart they drift (docs/differences.md).

- A physics-informed network (PINN): a tanh MLP u(x) (1-32-32-1) fitted to the 1-D Poisson
  problem u'' = -(2 pi)^2 sin(2 pi x) on [0, 1], u(0) = u(1) = 0 (solution sin(2 pi x)) at 64
  points; the loss reads u'' through two autograd.grad calls with create_graph=True, and Adam
  (lr 1e-2) updates the weights.
- MAML on sinusoid regression: a ReLU MLP (1-40-40-1) adapted to each of 4 tasks per step by
  one inner SGD step (lr 0.01) taken with create_graph=True, the query loss of the adapted
  weights differentiated through that step, and Adam (lr 1e-2) on the meta-parameters.

Both are deterministic: the initial weights are torch's (torch.manual_seed(0)) copied into
every run, and the data is drawn once from a seeded NumPy generator. torch also runs from
initial weights moved by one float32 ulp (`nudge`), which shows how far training carries a
difference of one rounding. `run_pinn` and `run_maml`
return the loss and the mean prediction on a fixed grid at the steps asked for.
tests/test_second_order_programs_torch.py checks a few float64 steps; the full runs:

    python bench/second_order_programs.py [--pinn-steps 500] [--maml-steps 800]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

PINN_SIZES = (1, 32, 32, 1)
MAML_SIZES = (1, 40, 40, 1)


def initial_weights(sizes: tuple) -> list:
    """torch's nn.Linear initial weights (seed 0) of an MLP of these sizes, as float64 arrays
    in (fan_in, fan_out) layout, with the biases."""
    import torch

    torch.manual_seed(0)
    arrays = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        layer = torch.nn.Linear(fan_in, fan_out, dtype=torch.float64)
        arrays += [layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy()]
    return arrays


def nudged(arrays: list, seed: int) -> list:
    """The arrays with about half their elements moved up by one float32 ulp (seed 0: as they
    are): a perturbation of the size of one rounding, to see how far training carries it."""
    if not seed:
        return arrays
    generator = np.random.default_rng(seed)
    moved = []
    for array in arrays:
        single = array.astype(np.float32)
        up = np.nextafter(single, np.float32(np.inf))
        moved.append(np.where(generator.random(array.shape) < 0.5, up, single).astype(np.float64))
    return moved


def _mlp(lib, weights: list, x, activation):
    h = x
    layers = len(weights) // 2
    for layer in range(layers):
        h = h @ weights[2 * layer] + weights[2 * layer + 1]
        if layer < layers - 1:
            h = activation(h)
    return h


def _leaves(lib, arrays: list, dtype):
    return [lib.tensor(array).to(dtype).requires_grad_() for array in arrays]


def _compile(lib, step, compiled: bool):
    return lib.compile(step) if compiled else step


def run_pinn(lib, dtype_name: str = "float64", steps: int = 500, checkpoints=(100, 250, 500),
             compiled: bool = False, lr: float = 1e-2, frequency: float = 2.0,
             nudge: int = 0) -> dict:
    """step -> (loss, mean of u over 101 points of [0, 1]) at each checkpoint; the source is
    -(f pi)^2 sin(f pi x) for the frequency f (the solution sin(f pi x))."""
    dtype = getattr(lib, dtype_name)
    weights = _leaves(lib, nudged(initial_weights(PINN_SIZES), nudge), dtype)
    optimizer = lib.optim.Adam(weights, lr=lr)
    points = lib.tensor(np.linspace(0.0, 1.0, 66)[1:-1].reshape(-1, 1)).to(dtype)
    source = -(frequency * np.pi) ** 2 * lib.sin(frequency * np.pi * points)
    boundary = lib.tensor([[0.0], [1.0]]).to(dtype)
    grid = lib.tensor(np.linspace(0.0, 1.0, 101).reshape(-1, 1)).to(dtype)

    def step(x):
        optimizer.zero_grad()
        x = x.detach().requires_grad_()
        u = _mlp(lib, weights, x, lib.tanh)
        (du,) = lib.autograd.grad(u.sum(), x, create_graph=True)
        (d2u,) = lib.autograd.grad(du.sum(), x, create_graph=True)
        loss = ((d2u - source) ** 2).mean() + (_mlp(lib, weights, boundary, lib.tanh) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    run = _compile(lib, step, compiled)
    trace = {}
    for number in range(1, steps + 1):
        loss = run(points)
        if number in checkpoints:
            with lib.no_grad():
                mean = float(_mlp(lib, weights, grid, lib.tanh).mean())
            trace[number] = (float(loss), mean)
    return trace


def maml_tasks(iterations: int, tasks: int = 4, shots: int = 10, seed: int = 0):
    """Per meta-iteration, the support and query sets of `tasks` sinusoids A sin(x - phase),
    A in [0.1, 5], phase in [0, pi], x in [-5, 5]: arrays (iterations, tasks, shots, 1)."""
    generator = np.random.default_rng(seed)
    amplitude = generator.uniform(0.1, 5.0, (iterations, tasks, 1, 1))
    phase = generator.uniform(0.0, np.pi, (iterations, tasks, 1, 1))
    sets = []
    for _ in range(2):
        x = generator.uniform(-5.0, 5.0, (iterations, tasks, shots, 1))
        sets += [x, amplitude * np.sin(x - phase)]
    return sets  # support x, support y, query x, query y


def run_maml(lib, dtype_name: str = "float64", steps: int = 800,
             checkpoints=(100, 400, 800), compiled: bool = False, inner_lr: float = 0.01,
             lr: float = 1e-2, inner_steps: int = 1, nudge: int = 0) -> dict:
    """step -> (meta loss, mean prediction of the meta-parameters over 101 points of
    [-5, 5]) at each checkpoint."""
    dtype = getattr(lib, dtype_name)
    weights = _leaves(lib, nudged(initial_weights(MAML_SIZES), nudge), dtype)
    optimizer = lib.optim.Adam(weights, lr=lr)
    data = [lib.tensor(array).to(dtype) for array in maml_tasks(steps)]
    grid = lib.tensor(np.linspace(-5.0, 5.0, 101).reshape(-1, 1)).to(dtype)

    def step(support_x, support_y, query_x, query_y):
        optimizer.zero_grad()
        total = 0.0
        for task in range(support_x.shape[0]):
            adapted = weights
            for _ in range(inner_steps):
                prediction = _mlp(lib, adapted, support_x[task], lib.relu)
                inner = ((prediction - support_y[task]) ** 2).mean()
                grads = lib.autograd.grad(inner, adapted, create_graph=True)
                adapted = [w - inner_lr * g for w, g in zip(adapted, grads)]
            query = _mlp(lib, adapted, query_x[task], lib.relu)
            total = total + ((query - query_y[task]) ** 2).mean()
        loss = total / support_x.shape[0]
        loss.backward()
        optimizer.step()
        return loss.detach()

    run = _compile(lib, step, compiled)
    trace = {}
    for number in range(1, steps + 1):
        loss = run(*(array[number - 1] for array in data))
        if number in checkpoints:
            with lib.no_grad():
                mean = float(_mlp(lib, weights, grid, lib.relu).mean())
            trace[number] = (float(loss), mean)
    return trace


def _differences(traces: dict, reference: str) -> dict:
    """name -> step -> (relative difference of the loss, of the mean) against `reference`."""
    result = {}
    for name, trace in traces.items():
        if name == reference:
            continue
        result[name] = {step: tuple(abs(mine - theirs) / max(abs(theirs), 1e-300)
                                    for mine, theirs in zip(values, traces[reference][step]))
                        for step, values in trace.items()}
    return result


def _checkpoints(wanted: tuple, steps: int) -> tuple:
    return tuple(sorted({step for step in wanted if step <= steps} | {steps}))


def main() -> None:
    import torch

    import autojit

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pinn-steps", type=int, default=500)
    parser.add_argument("--maml-steps", type=int, default=800)
    arguments = parser.parse_args()
    programs = [("PINN", run_pinn, arguments.pinn_steps, _checkpoints((100, 250, 500),
                                                                      arguments.pinn_steps)),
                ("MAML", run_maml, arguments.maml_steps, _checkpoints((100, 400, 800),
                                                                      arguments.maml_steps))]
    for title, program, steps, checkpoints in programs:
        for dtype in ("float64", "float32"):
            traces = {}
            runs = [("torch", torch, False, 0), ("eager", autojit, False, 0),
                    ("compiled", autojit, True, 0)]
            # torch again from initial weights one float32 ulp away: rounding's own spread.
            runs += [(f"torch+ulp{seed}", torch, False, seed) for seed in (1, 2)]
            for name, lib, compiled, nudge in runs:
                start = time.perf_counter()
                traces[name] = program(lib, dtype, steps, checkpoints, compiled=compiled,
                                       nudge=nudge)
                seconds = time.perf_counter() - start
                values = "  ".join(f"{step}: loss {loss:.6g} mean {mean:.6g}"
                                   for step, (loss, mean) in traces[name].items())
                print(f"{title} {dtype} {name:11s} ({seconds:5.1f} s)  {values}")
            for name, differences in _differences(traces, "torch").items():
                values = "  ".join(f"{step}: loss {loss:.2g} mean {mean:.2g}"
                                   for step, (loss, mean) in differences.items())
                print(f"{title} {dtype} {name:11s} vs torch, relative:  {values}")


if __name__ == "__main__":
    main()
