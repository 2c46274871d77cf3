"""Fused elementwise forward and backward on a GPU, against the device's copy bandwidth.

y = (tanh(x) * sigmoid(x) + 0.5 * x * x).sum() and dy/dx for x of 64M float32 elements on the
GPU, compiled (the gradient taken inside the compiled function). The minimum memory traffic is
one read of x and one write of dy/dx (8 bytes per element); the table reports that count over
the median time as GB/s, next to the bandwidth of a device-to-device copy of x measured in the
same run (one read and one write per element): the target is at least 80% of it. torch eager
on the same GPU is measured where torch with CUDA is installed. Usage:

    python bench/cuda_elementwise.py [--size 67108864] [--repeats 20] [--quick]

--quick runs tiny sizes (for a smoke test under Numba's CUDA simulator, which prints no
meaningful figures). Without a GPU (and without the simulator) it exits with a message.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_seconds  # noqa: E402


def require_gpu():
    """autojit with CUDA usable, or exit with a message saying why not."""
    import autojit

    if not autojit.cuda.is_available():
        sys.exit("no CUDA device: this benchmark needs an NVIDIA GPU with numba-cuda (or Numba's "
                 "CUDA simulator, NUMBA_ENABLE_CUDASIM=1, with --quick)")
    return autojit


def synchronized(call, autojit):
    def run():
        result = call()
        autojit.cuda.synchronize()
        return result

    return run


def copy_seconds(size: int, repeats: int, autojit) -> float:
    """Time of a device-to-device copy of `size` float32 elements: `repeats` copies back to
    back between two CUDA events, divided by `repeats` (the device's figure: a copy timed on
    the host, with a synchronization each, understated an H100's bandwidth by half)."""
    cuda = autojit.cuda.driver()
    source = cuda.device_array(size, np.float32)
    target = cuda.device_array(size, np.float32)
    for _ in range(3):
        target.copy_to_device(source)
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(repeats):
        target.copy_to_device(source)
    end.record()
    end.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / repeats
    if seconds > 0:
        return seconds
    # The simulator's events measure nothing: the host's time of a synchronized copy.
    return median_seconds(synchronized(lambda: target.copy_to_device(source), autojit), repeats,
                          warmup=min(repeats - 1, 3))


def autojit_seconds(data: np.ndarray, repeats: int, autojit) -> tuple:
    x = autojit.tensor(data, device="cuda", requires_grad=True)

    @autojit.compile
    def value_and_grad(x):
        y = (x.tanh() * x.sigmoid() + 0.5 * x * x).sum()
        (gradient,) = autojit.autograd.grad(y, x)
        return y.detach(), gradient

    y, gradient = value_and_grad(x)  # compile outside the timing
    expected = np.tanh(data) / (1 + np.exp(-data)) + 0.5 * data * data
    np.testing.assert_allclose(y.item(), expected.sum(dtype=np.float64), rtol=1e-3)
    seconds = median_seconds(synchronized(lambda: value_and_grad(x), autojit), repeats,
                             warmup=min(repeats - 1, 3))
    return seconds, value_and_grad.executables[0].plan.kernel_count


def torch_seconds(data: np.ndarray, repeats: int):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x = torch.tensor(data, device="cuda", requires_grad=True)

    def step():
        y = (torch.tanh(x) * torch.sigmoid(x) + 0.5 * x * x).sum()
        return y, torch.autograd.grad(y, x)[0]

    def run():
        step()
        torch.cuda.synchronize()

    return median_seconds(run, repeats)


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64 * 1024 * 1024)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    options = parser.parse_args(argv)
    if options.quick:
        options.size, options.repeats = 300, 1
    autojit = require_gpu()
    data = np.random.default_rng(0).uniform(-2, 2, options.size).astype(np.float32)
    minimum_bytes = 2 * data.nbytes  # read x, write dy/dx

    copy = copy_seconds(options.size, options.repeats, autojit)
    copy_rate = 2 * data.nbytes / copy / 1e9
    rows = [("device copy (read + write)", copy, copy_rate)]
    compiled, kernels = autojit_seconds(data, options.repeats, autojit)
    rows.append(("autojit.compile", compiled, minimum_bytes / compiled / 1e9))
    torch_time = torch_seconds(data, options.repeats)
    if torch_time is not None:
        rows.append(("torch eager", torch_time, minimum_bytes / torch_time / 1e9))

    print(f"fused elementwise forward+backward, {options.size} float32 on "
          f"{autojit.cuda.get_device_name()}, median of {options.repeats}")
    print(f"{'':28}{'ms':>10}{'GB/s':>10}{'of copy':>10}")
    for name, seconds, rate in rows:
        print(f"{name:28}{seconds * 1e3:10.3f}{rate:10.1f}{rate / copy_rate:9.0%}")
    print(f"autojit: {kernels} kernels per call; GB/s counts {minimum_bytes / 1e6:.1f} MB "
          "(one read of x, one write of the gradient)")
    return rows


if __name__ == "__main__":
    main()
