"""One SGD training step of an MLP on a GPU, compiled, against torch eager on the same GPU.

The step of bench/compiled_step.py (784-512-512-10, ReLU, cross-entropy, backward, SGD update of
every parameter) at batch 4096, float32, every tensor on the GPU. The table gives the median
wall time per step (synchronized) and the ratio to compiled autojit; the target is at most
torch eager's time. torch is measured where torch with CUDA is installed. Usage:

    python bench/cuda_mlp_step.py [--batch 4096] [--repeats 30] [--quick]

--quick runs a tiny MLP (for a smoke test under Numba's CUDA simulator, which prints no
meaningful figures). Without a GPU (and without the simulator) it exits with a message.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compiled_step import SIZES, batch, initial_parameters, sgd_step  # noqa: E402
from cuda_elementwise import require_gpu, synchronized  # noqa: E402
from timing import median_seconds  # noqa: E402


def autojit_step(autojit, sizes, x_data, y_data, lr=0.01):
    import autojit.nn.functional as F

    parameters = [autojit.tensor(a, device="cuda", requires_grad=True)
                  for a in initial_parameters(sizes=sizes)]
    x, y = autojit.tensor(x_data, device="cuda"), autojit.tensor(y_data, device="cuda")

    @autojit.compile
    def step(x, y):
        return sgd_step(autojit, F.cross_entropy, parameters, x, y, lr)

    start = time.perf_counter()
    first_loss = step(x, y).item()
    first = time.perf_counter() - start
    return synchronized(lambda: step(x, y), autojit), first, step, first_loss


def torch_step(sizes, x_data, y_data, lr=0.01):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    parameters = [torch.tensor(a, device="cuda", requires_grad=True)
                  for a in initial_parameters(sizes=sizes)]
    x, y = torch.tensor(x_data, device="cuda"), torch.tensor(y_data, device="cuda")

    def step():
        loss = sgd_step(torch, torch.nn.functional.cross_entropy, parameters, x, y, lr)
        torch.cuda.synchronize()
        return loss

    return step


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a tiny MLP: a smoke test")
    options = parser.parse_args(argv)
    sizes = SIZES
    if options.quick:
        sizes, options.batch, options.repeats = (4, 3, 2), 2, 1
    autojit = require_gpu()
    x_data, y_data = batch(options.batch, sizes=sizes)

    compiled_step, first_call, compiled, first_loss = autojit_step(autojit, sizes, x_data,
                                                                   y_data)
    reference = autojit_step_on_cpu(autojit, sizes, x_data, y_data)
    np.testing.assert_allclose(first_loss, reference, rtol=1e-4)
    compiled_time = median_seconds(compiled_step, options.repeats, warmup=0 if options.quick else 3)
    rows = [("autojit.compile", compiled_time)]
    step = torch_step(sizes, x_data, y_data)
    if step is not None:
        rows.append(("torch eager", median_seconds(step, options.repeats)))

    print(f"MLP {'-'.join(map(str, sizes))} SGD step, batch {options.batch}, float32, on "
          f"{autojit.cuda.get_device_name()}, median of {options.repeats}")
    print(f"{'':18}{'ms/step':>10}{'vs compiled':>14}")
    for name, seconds in rows:
        print(f"{name:18}{seconds * 1e3:10.3f}{seconds / compiled_time:13.2f}x")
    plan = compiled.executables[0].plan
    print(f"compiled first call (trace, passes, kernels): {first_call:.3f} s; "
          f"{plan.kernel_count} fused kernels")
    return rows


def autojit_step_on_cpu(autojit, sizes, x_data, y_data) -> float:
    """The first step's loss computed eagerly on the CPU: the GPU run must agree."""
    import autojit.nn.functional as F

    parameters = [autojit.tensor(a) for a in initial_parameters(sizes=sizes)]
    h = autojit.tensor(x_data)
    layers = len(sizes) - 1
    for layer in range(layers):
        h = h @ parameters[2 * layer] + parameters[2 * layer + 1]
        if layer < layers - 1:
            h = h.relu()
    return F.cross_entropy(h, autojit.tensor(y_data)).item()


if __name__ == "__main__":
    main()
