"""One SGD training step of a ResNet-8 on CIFAR-sized images: compiled autojit against autojit
eager, torch eager, torch.compile and jax.jit.

The network is a 3x3 stem of 16 channels and three basic blocks of 16, 32 and 64 channels
(the last two strided by 2, with a 1x1 convolution and BatchNorm as shortcut), BatchNorm
after every convolution, global average pooling and a linear head over 10 classes; the step
is forward, cross-entropy, backward and SGD with momentum 0.9 and weight decay 5e-4, on a
batch of 32 x 3 x 32 x 32. autojit and jax load torch's initial state_dict, and their first
two losses are checked against torch's before timing. The frameworks take turns
(interleaved rounds, each a few steps) and the table gives the median time per step and the
ratio to torch eager (wall time, then the calling thread's CPU time).

Then each runner runs again in a fresh process of its own, which imports only its framework
and reports the first call's time (tracing and compiling, for the compiled runners; autojit's
kernels may come from its disk cache) and the process's peak resident memory over 20 steps
(the high-water mark of its
resident set, VmHWM, the imports included). Usage:

    python bench/resnet_step.py [--rounds 7] [--steps 5] [--threads 2] [--no-memory]
    python bench/resnet_step.py --profile [--threads 1] [--peak 117]

`--profile` times each step of the compiled step's plan instead (bench/plan_profile.py: the
convolution routines per layer, the kernels, the updates), with torch's time for each
convolution product of the same shapes beside it (forward, and aten.convolution_backward for
the input's and the weight's gradient alone), and each product's share of the FMA peak of
`--threads` cores (`--peak`: one core's GFLOP/s from bench/fma_peak.py).

Every framework runs on `--threads` threads (torch.set_num_threads and
autojit.set_num_threads), and the process on as many cores (jax's XLA takes every core it
may use). torch.compile is skipped with the reason when it cannot compile here; jax.jit
where jax is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BATCH, CLASSES, WIDTHS = 32, 10, (16, 32, 64)
LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 5e-4
RUNNERS = ("autojit compiled", "autojit eager", "torch eager", "torch.compile", "jax.jit")


def build(nn):
    """The same module tree in autojit and in torch (`nn` from either)."""

    class Block(nn.Module):
        def __init__(self, inputs: int, outputs: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(outputs)
            self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(outputs)
            self.shortcut = nn.Sequential()
            if stride != 1 or inputs != outputs:
                self.shortcut = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                                              nn.BatchNorm2d(outputs))

        def forward(self, x):
            h = nn.functional.relu(self.bn1(self.conv1(x)))
            return nn.functional.relu(self.bn2(self.conv2(h)) + self.shortcut(x))

    class ResNet8(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, WIDTHS[0], 3, 1, 1, bias=False)
            self.bn = nn.BatchNorm2d(WIDTHS[0])
            blocks, inputs = [], WIDTHS[0]
            for width, stride in zip(WIDTHS, (1, 2, 2), strict=True):
                blocks.append(Block(inputs, width, stride))
                inputs = width
            self.layers = nn.Sequential(*blocks)
            self.fc = nn.Linear(WIDTHS[-1], CLASSES)

        def forward(self, x):
            h = nn.functional.relu(self.bn(self.conv(x)))
            h = self.layers(h)
            return self.fc(nn.functional.adaptive_avg_pool2d(h, 1).flatten(1))

    return ResNet8()


def make_step(framework, model):
    optimizer = framework.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM,
                                    weight_decay=WEIGHT_DECAY)
    cross_entropy = framework.nn.functional.cross_entropy

    def step(x, y):
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return step


def batch():
    generator = np.random.default_rng(0)
    x = generator.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    return x, generator.integers(0, CLASSES, BATCH)


def runner(name: str, state: dict | None):
    """A no-argument callable running one step of `name` and returning its loss as a float;
    the model starts from `state` (a state_dict as NumPy arrays) when given."""
    x, y = batch()
    if name.startswith("autojit"):
        import autojit

        model = build(autojit.nn)
        if state is not None:
            model.load_state_dict({key: autojit.tensor(value) for key, value in state.items()})
        step = make_step(autojit, model)
        step = autojit.compile(step) if name == "autojit compiled" else step
        data = autojit.tensor(x), autojit.tensor(y)
        return lambda: step(*data).item()
    if name.startswith("torch"):
        import torch

        model = build(torch.nn)
        if state is not None:
            model.load_state_dict({key: torch.tensor(value) for key, value in state.items()})
        step = make_step(torch, model)
        step = torch.compile(step) if name == "torch.compile" else step
        data = torch.tensor(x), torch.tensor(y)
        return lambda: step(*data).item()
    import jax.numpy as jnp
    from resnet_jax import make_jax_step

    step = make_jax_step(state)
    data = jnp.asarray(x), jnp.asarray(y)
    return lambda: step(*data)


def set_threads(threads: int) -> None:
    # XLA's CPU client runs on every core whatever its flags say: the process is held to
    # `threads` cores, so that each framework has the same cores.
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cores[:threads])


def measure_alone(name: str, threads: int, steps: int, state_file: str) -> dict:
    """In this (fresh) process: the first call's seconds and the peak resident memory (MiB)
    over `steps` steps, the framework's import included."""
    set_threads(threads)
    framework = name.split()[0].split(".")[0]
    module = __import__(framework)
    if framework != "jax":
        module.set_num_threads(threads)
    with np.load(state_file) as stored:
        state = dict(stored)
    started = time.perf_counter()
    run = runner(name, state)
    run()
    first = time.perf_counter() - started
    for _ in range(steps - 1):
        run()
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the parent's image, while
    # the high-water mark belongs to the process's own address space.
    with open("/proc/self/status", encoding="ascii") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return {"first": first, "peak": peak / 1024}


def memory_table(threads: int, steps: int, names, state: dict) -> None:
    print(f"each runner alone in a fresh process, {steps} steps: first call, peak resident "
          "memory (VmHWM, imports included)")
    with tempfile.TemporaryDirectory() as directory:
        state_file = os.path.join(directory, "state.npz")
        np.savez(state_file, **state)
        for name in names:
            _alone(name, threads, steps, state_file)


def _alone(name: str, threads: int, steps: int, state_file: str) -> None:
    completed = subprocess.run(
            [sys.executable, str(Path(__file__)), "--alone", name, "--threads", str(threads),
             "--steps", str(steps), "--state", state_file], capture_output=True, text=True,
            check=False, cwd=HERE)
    if completed.returncode != 0:
        print(f"  {name:<17} failed: {completed.stderr.strip().splitlines()[-1][:100]}")
        return
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    print(f"  {name:<17} first call {figures['first']:7.2f} s   peak {figures['peak']:7.1f} MiB")


def torch_conv_seconds(torch, kind: str, first: tuple, second: tuple, attrs: dict,
                       repeats: int = 30) -> float:
    """torch's median seconds for one convolution product of these shapes (random data)."""
    functional = torch.nn.functional
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(first, generator=generator)
    b = torch.randn(second, generator=generator)
    stride, dilation, groups = list(attrs["stride"]), list(attrs["dilation"]), attrs["groups"]
    padding = [lo for lo, _ in attrs["padding"]]
    backward = torch.ops.aten.convolution_backward
    if kind == "forward":
        def call():
            return functional.conv2d(a, b, None, stride, padding, dilation, groups)
    elif kind == "input":
        x = torch.empty((first[0], second[1] * groups, *attrs["input_size"]))

        def call():
            return backward(a, x, b, None, stride, padding, dilation, False, [0, 0], groups,
                            [True, False, False])
    else:
        w = torch.empty((second[1], first[1] // groups, *attrs["kernel_size"]))

        def call():
            return backward(b, a, w, None, stride, padding, dilation, False, [0, 0], groups,
                            [False, True, False])
    with torch.no_grad():
        for _ in range(3):
            call()
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
    return float(np.median(times))


def torch_convs(convs: list, threads: int) -> list:
    """torch's seconds for each (kind, shapes, attrs) of `convs` (--torch-convs)."""
    import torch

    # As beside autojit in the timed runs: `import autojit` raises malloc's thresholds
    # (tensor/host_memory.py), without which each of torch's results here is fresh pages,
    # faulted in on first write (a 16->16 3x3 product on 32x32 images: 3.5 ms against 1.05).
    import autojit  # noqa: F401

    torch.set_num_threads(threads)
    return [torch_conv_seconds(torch, kind, *(tuple(shape) for shape in shapes),
                               {key: tuple(tuple(v) if isinstance(v, list) else v
                                           for v in value) if isinstance(value, list)
                                else value for key, value in attrs.items()})
            for kind, shapes, attrs in convs]


def profile(threads: int, peak: float, calls: int) -> None:
    """The compiled step's plan, step by step (bench/plan_profile.py), and each convolution
    product against torch's for the same shapes."""
    import torch
    from plan_profile import print_profile, step_times

    import autojit

    autojit.set_num_threads(threads)
    torch.manual_seed(0)
    state = {key: value.numpy().copy() for key, value in build(torch.nn).state_dict().items()}
    model = build(autojit.nn)
    model.load_state_dict({key: autojit.tensor(value) for key, value in state.items()})
    compiled = autojit.compile(make_step(autojit, model))
    x, y = batch()
    data = autojit.tensor(x), autojit.tensor(y)
    rows, program = step_times(compiled, lambda: compiled(*data), calls=calls)
    print(f"ResNet-8 compiled step, plan step by step: {threads} thread(s), median of {calls} "
          f"calls, load average {os.getloadavg()[0]:.1f}")
    print_profile(rows, program, peak, threads)
    plan = compiled.executables[-1].plan
    convs = [(kind.split()[1], [list(value.shape) for value in plan.steps[index].node.inputs],
              plan.steps[index].node.attrs) for index, kind, *_ in rows
             if kind.startswith("conv")]
    # torch in a process of its own: autojit's workers, spinning after each job, would take
    # the cores from torch's threads.
    completed = subprocess.run(
        [sys.executable, str(Path(__file__)), "--torch-convs", json.dumps(convs),
         "--threads", str(threads)], capture_output=True, text=True, check=True, cwd=HERE)
    torch_seconds = iter(json.loads(completed.stdout.strip().splitlines()[-1]))
    print("convolution products against torch's (same shapes, wall us):")
    print(f"  {'product':<8} {'layer':<22} {'autojit':>8} {'torch':>8} {'ratio':>6} "
          f"{'torch GF/s':>10}")
    totals = [0.0, 0.0]
    for _, kind, label, flops, wall, _ in rows:
        if not kind.startswith("conv"):
            continue
        theirs = next(torch_seconds)
        totals[0] += wall
        totals[1] += theirs
        print(f"  {kind.split()[1]:<8} {label:<22} {wall * 1e6:8.1f} {theirs * 1e6:8.1f} "
              f"{wall / theirs:6.2f} {flops / theirs / 1e9:10.1f}")
    print(f"  all convolution products: autojit {totals[0] * 1e3:.2f} ms, torch "
          f"{totals[1] * 1e3:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    parser.add_argument("--steps", type=int, default=5,
                        help="steps per round and runner (5); with --alone, steps in all")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads and cores for every framework (2)")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the fresh processes (first call, peak memory)")
    parser.add_argument("--only", nargs="*", choices=RUNNERS, help="run only these runners")
    parser.add_argument("--profile", action="store_true",
                        help="time each step of the compiled step's plan instead")
    parser.add_argument("--peak", type=float, default=117.3,
                        help="one core's float32 FMA GFLOP/s, for --profile (117.3)")
    parser.add_argument("--alone", choices=RUNNERS, help=argparse.SUPPRESS)
    parser.add_argument("--torch-convs", help=argparse.SUPPRESS)
    parser.add_argument("--state", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if args.alone:
        print(json.dumps(measure_alone(args.alone, args.threads, args.steps, args.state)))
        return

    set_threads(args.threads)
    if args.torch_convs:
        print(json.dumps(torch_convs(json.loads(args.torch_convs), args.threads)))
        return
    if args.profile:
        profile(args.threads, args.peak, 20)
        return
    import torch
    from timing import interleaved_medians, print_against

    import autojit

    torch.set_num_threads(args.threads)
    autojit.set_num_threads(args.threads)
    torch.manual_seed(0)
    state = {key: value.numpy().copy() for key, value in build(torch.nn).state_dict().items()}
    names = args.only or RUNNERS
    runners, notes = {}, []
    reference = runner("torch eager", state)
    expected = [reference(), reference()]
    for name in names:
        if name == "jax.jit" and importlib.util.find_spec("jax") is None:
            notes.append("jax.jit skipped: jax is not installed")
            continue
        try:
            candidate = runner(name, state)
            started = time.perf_counter()
            losses = [candidate()]
            first = time.perf_counter() - started
            losses.append(candidate())
        except Exception as error:  # noqa: BLE001 - a peer that cannot compile is reported
            if not name.startswith("torch.compile"):
                raise
            notes.append(f"{name} skipped: {type(error).__name__}: "
                         f"{str(error).splitlines()[0][:100]}")
            continue
        if not np.allclose(losses, expected, rtol=1e-3):
            raise AssertionError(f"{name}'s first losses {losses} are not torch's {expected}")
        print(f"{name}: first call {first:.2f} s, losses {losses[0]:.4f} {losses[1]:.4f}")
        runners[name] = candidate

    cpu: dict = {}
    medians = interleaved_medians(runners, args.rounds, args.steps, cpu, settle=0.3)
    print(f"ResNet-8 step: widths {WIDTHS}, BatchNorm, batch {BATCH}x3x32x32, SGD momentum "
          f"{MOMENTUM} weight decay {WEIGHT_DECAY}; median of {args.rounds} interleaved rounds "
          f"of {args.steps} steps, {args.threads} thread(s), load average "
          f"{os.getloadavg()[0]:.1f}")
    reference_name = "torch eager" if "torch eager" in medians else next(iter(medians))
    print_against(medians, reference_name, cpu)
    for note in notes:
        print("  " + note)
    if not args.no_memory:
        memory_table(args.threads, 20, [name for name in names if name in runners], state)


if __name__ == "__main__":
    main()
