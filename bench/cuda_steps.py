"""Training steps on a GPU, compiled by autojit, against torch eager and torch.compile there.

Four workloads, every tensor on the GPU, float32:
- elementwise: bench/cuda_elementwise.py's fused forward+backward on 64M elements;
- mlp: bench/cuda_mlp_step.py's SGD step of a 784-512-512-10 MLP at batch 4096;
- gpt: bench/gpt_step.py's nanoGPT step with 4 layers (W12: AdamW, clip_grad_norm_);
- resnet: bench/resnet_step.py's ResNet-8 SGD step (W11: BatchNorm, momentum, weight decay).

For each runner ("autojit compiled", "torch eager", then, after every workload's first two,
"torch.compile"; torch's where torch with CUDA is installed) it reports: the first call's time
(tracing and compiling, synchronized), the median synchronized time per step, the median host
time per step (the call's own time, from a synchronized start to its return: what the host
spends launching, plus any synchronizing read-back inside the call), and kernels per step
(autojit: launches counted by autojit.cuda.counters, with the read-backs, uploads, device
copies and allocations beside them; torch: the CUDA kernels torch.profiler sees in one step,
where it can). The device's copy bandwidth (a device-to-device copy, bytes read and written)
heads the table, and the elementwise workload's GB/s is given against it. The first losses of
every runner are checked against torch eager's (or autojit's on the CPU where torch has no
CUDA). Usage:

    python bench/cuda_steps.py [--workloads elementwise mlp gpt resnet] [--repeats 20]
                               [--json FILE] [--runner-timeout 150] [--no-torch-compile]
    python bench/cuda_steps.py --profile mlp [--json FILE] [--cprofile FILE]

`--profile WORKLOAD` times each step of the compiled step's plan once instead (CUDA events
around every step, and its host time and launches): bench/cuda_profile.py.
`--quick` runs tiny sizes (for the smoke test under Numba's CUDA simulator, whose figures
mean nothing). Without a GPU (and without the simulator) it exits with a message. The JSON
file is rewritten after each workload, so a run stopped by a time limit keeps what it measured.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_elementwise import copy_seconds, require_gpu  # noqa: E402

WORKLOADS = ("elementwise", "mlp", "gpt", "resnet")
RUNNERS = ("autojit compiled", "torch eager", "torch.compile")


def cuda_torch():
    """torch, where it is installed with a usable GPU; else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


class Deadline(Exception):
    """A runner ran past --runner-timeout."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise Deadline in the main thread after `seconds` (0: no limit)."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise Deadline(f"ran past {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---- the workloads: make(runner) -> a no-argument step returning its loss (a device tensor) ----

def elementwise(runner: str, quick: bool, autojit, torch):
    size = 300 if quick else 64 * 1024 * 1024
    data = np.random.default_rng(0).uniform(-2, 2, size).astype(np.float32)
    info = {"size": size, "bytes": 2 * data.nbytes}
    if runner.startswith("autojit"):
        device = "cpu" if runner == "autojit cpu" else "cuda"
        x = autojit.tensor(data, device=device, requires_grad=True)

        @autojit.compile
        def value_and_grad(x):
            y = (x.tanh() * x.sigmoid() + 0.5 * x * x).sum()
            (gradient,) = autojit.autograd.grad(y, x)
            return y.detach(), gradient

        return (lambda: value_and_grad(x)[0]), value_and_grad, info
    x = torch.tensor(data, device="cuda", requires_grad=True)

    def step(x):
        y = (torch.tanh(x) * torch.sigmoid(x) + 0.5 * x * x).sum()
        return y.detach(), torch.autograd.grad(y, x)[0]

    step = torch.compile(step) if runner == "torch.compile" else step
    return (lambda: step(x)[0]), None, info


def mlp(runner: str, quick: bool, autojit, torch):
    from compiled_step import SIZES, batch, initial_parameters, sgd_step

    sizes, rows = ((4, 3, 2), 2) if quick else (SIZES, 4096)
    x_data, y_data = batch(rows, sizes=sizes)
    info = {"sizes": list(sizes), "batch": rows}
    framework = autojit if runner.startswith("autojit") else torch
    device = "cuda" if runner != "autojit cpu" else "cpu"
    parameters = [framework.tensor(a, device=device, requires_grad=True)
                  for a in initial_parameters(sizes=sizes)]
    x, y = framework.tensor(x_data, device=device), framework.tensor(y_data, device=device)
    cross_entropy = framework.nn.functional.cross_entropy

    def step(x, y):
        return sgd_step(framework, cross_entropy, parameters, x, y, 0.01)

    if runner == "autojit compiled":
        step = autojit.compile(step)
    elif runner == "torch.compile":
        step = torch.compile(step)
    return (lambda: step(x, y)), (step if runner == "autojit compiled" else None), info


def _model_state(build, quick: bool) -> dict:
    """A torch model's initial state_dict as arrays (torch on the CPU is enough), or None."""
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    model = build(torch)
    return {name: value.detach().cpu().numpy().copy()
            for name, value in model.state_dict().items()}


def gpt(runner: str, quick: bool, autojit, torch):
    import gpt_step
    import transformer_step

    gpt_step.configure(4)
    if quick:
        for name, value in {"D_MODEL": 8, "HEADS": 2, "FEEDFORWARD": 16, "BATCH": 2,
                            "LENGTH": 4, "LAYERS": 1}.items():
            setattr(transformer_step, name, value)
    module = transformer_step
    info = {name.lower(): getattr(module, name) for name in
            ("LAYERS", "D_MODEL", "HEADS", "FEEDFORWARD", "BATCH", "LENGTH")}
    ids = np.random.default_rng(0).integers(0, module.VOCABULARY,
                                            (module.BATCH, module.LENGTH + 1))
    state = _model_state(lambda framework: module.build(framework.nn, framework), quick)
    framework = autojit if runner.startswith("autojit") else torch
    device = "cpu" if runner == "autojit cpu" else "cuda"
    model = module.build(framework.nn, framework)
    if state is not None:
        model.load_state_dict({name: framework.tensor(value) for name, value in state.items()})
    model.to(device)
    step = gpt_step.make_step(framework, model)
    if runner == "autojit compiled":
        step = autojit.compile(step)
    elif runner == "torch.compile":
        step = torch.compile(step)
    inputs = (framework.tensor(ids[:, :-1], device=device),
              framework.tensor(ids[:, 1:], device=device))
    return (lambda: step(*inputs)), (step if runner == "autojit compiled" else None), info


def resnet(runner: str, quick: bool, autojit, torch):
    import resnet_step

    if quick:
        resnet_step.WIDTHS = (2, 4, 4)
    rows, side = (2, 8) if quick else (resnet_step.BATCH, 32)
    info = {"widths": list(resnet_step.WIDTHS), "batch": rows, "image": [3, side, side]}
    generator = np.random.default_rng(0)
    x_data = generator.standard_normal((rows, 3, side, side)).astype(np.float32)
    y_data = generator.integers(0, resnet_step.CLASSES, rows)
    state = _model_state(lambda framework: resnet_step.build(framework.nn), quick)
    framework = autojit if runner.startswith("autojit") else torch
    device = "cpu" if runner == "autojit cpu" else "cuda"
    model = resnet_step.build(framework.nn)
    if state is not None:
        model.load_state_dict({name: framework.tensor(value) for name, value in state.items()})
    model.to(device)
    step = resnet_step.make_step(framework, model)
    if runner == "autojit compiled":
        step = autojit.compile(step)
    elif runner == "torch.compile":
        step = torch.compile(step)
    inputs = framework.tensor(x_data, device=device), framework.tensor(y_data, device=device)
    return (lambda: step(*inputs)), (step if runner == "autojit compiled" else None), info


MAKERS = {"elementwise": elementwise, "mlp": mlp, "gpt": gpt, "resnet": resnet}


# ---- measuring ------------------------------------------------------------------------------

def synchronizer(runner: str, autojit, torch):
    return autojit.cuda.synchronize if runner.startswith("autojit") else torch.cuda.synchronize


def measure(run, sync, repeats: int, warmup: int) -> dict:
    """First call, then medians of synchronized and host time per step."""
    sync()
    start = time.perf_counter()
    loss = float(run())
    sync()
    first = time.perf_counter() - start
    second = float(run())
    for _ in range(warmup):
        run()
    walls, hosts = [], []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        run()
        returned = time.perf_counter()
        sync()
        walls.append(time.perf_counter() - start)
        hosts.append(returned - start)
    return {"first_call_s": first, "median_ms": statistics.median(walls) * 1e3,
            "host_ms": statistics.median(hosts) * 1e3, "losses": [loss, second]}


def autojit_counts(run, sync, autojit) -> dict:
    """The launch path's counters over one more step (autojit.cuda.counters)."""
    from autojit.cuda import counters

    sync()
    before = counters.snapshot()
    run()
    sync()
    return counters.difference(before)


def torch_kernels(run, torch) -> int | None:
    """CUDA kernels (and copies) torch runs in one step, as torch.profiler sees them."""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as recorded:
            run()
            torch.cuda.synchronize()
        return sum(1 for event in recorded.events()
                   if str(getattr(event, "device_type", "")).endswith("CUDA"))
    except Exception:  # noqa: BLE001 - the profiler is optional
        return None


def run_workload(name: str, options, autojit, torch, runners: list,
                 result: dict | None = None) -> dict:
    """Measure `runners` on workload `name`, into `result` (a new one when None)."""
    result = {"runners": {}, "notes": []} if result is None else result
    for runner in runners:
        try:
            with time_limit(options.runner_timeout):
                run, compiled, info = MAKERS[name](runner, options.quick, autojit, torch)
                result["info"] = info
                sync = synchronizer(runner, autojit, torch)
                figures = measure(run, sync, options.repeats, options.warmup)
                if runner == "autojit compiled":
                    figures["per_step"] = autojit_counts(run, sync, autojit)
                    figures["kernels"] = figures["per_step"]["launches"]
                    figures["fused_kernels"] = sum(
                        executable.plan.kernel_count for executable in compiled.executables
                        if hasattr(executable.plan, "kernel_count"))
                else:
                    figures["kernels"] = torch_kernels(run, torch)
            result["runners"][runner] = figures
        except Exception as error:  # noqa: BLE001 - a runner that cannot run is reported
            line = str(error).splitlines()[0][:160] if str(error) else ""
            result["notes"].append(f"{runner} skipped: {type(error).__name__}: {line}")
    _check_losses(name, result, options, autojit, torch)
    if "bytes" in result.get("info", {}):
        for figures in result["runners"].values():
            figures["GB_per_s"] = result["info"]["bytes"] / figures["median_ms"] / 1e6
    return result


def _check_losses(name: str, result: dict, options, autojit, torch) -> None:
    """Every runner's first losses against torch eager's, or autojit's on the CPU."""
    runners = result["runners"]
    reference = runners.get("torch eager", {}).get("losses")
    source = "torch eager"
    if reference is None and options.quick:
        run, _, _ = MAKERS[name]("autojit cpu", True, autojit, None)
        reference, source = [float(run()), float(run())], "autojit on the CPU"
    if reference is None:
        return
    for runner, figures in runners.items():
        if "losses_agree" in figures:
            continue
        agree = bool(np.allclose(figures["losses"], reference, rtol=2e-3, atol=1e-5))
        figures["losses_agree"] = agree
        if not agree:
            result["notes"].append(f"{runner}: first losses {figures['losses']} differ from "
                                   f"{source}'s {reference}")


def table(report: dict) -> str:
    lines = [f"CUDA training steps on {report['device']}, median of {report['repeats']} "
             f"(copy: {report['copy_GB_per_s']:.0f} GB/s read + write)",
             f"{'':26}{'first s':>9}{'ms/step':>10}{'host ms':>9}{'kernels':>9}"
             f"{'vs eager':>10}"]
    for name, result in report["workloads"].items():
        lines.append(f"{name} {json.dumps(result.get('info', {}))}")
        eager = result["runners"].get("torch eager", {}).get("median_ms")
        for runner, figures in result["runners"].items():
            ratio = f"{figures['median_ms'] / eager:9.2f}x" if eager else f"{'':>10}"
            kernels = figures.get("kernels")
            line = (f"  {runner:24}{figures['first_call_s']:9.2f}{figures['median_ms']:10.3f}"
                    f"{figures['host_ms']:9.3f}{kernels if kernels is not None else '-':>9}"
                    f"{ratio}")
            if "GB_per_s" in figures:
                line += (f"  {figures['GB_per_s']:.0f} GB/s, "
                         f"{figures['GB_per_s'] / report['copy_GB_per_s']:.0%} of copy")
            lines.append(line)
            if "per_step" in figures:
                counts = figures["per_step"]
                lines.append("    per step: " + ", ".join(f"{value} {key}" for key, value in
                                                          counts.items()))
        lines += [f"  {note}" for note in result["notes"]]
    return "\n".join(lines)


def write_json(path: str | None, report: dict) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", help="write the figures here as JSON")
    parser.add_argument("--runner-timeout", type=float, default=150,
                        help="seconds each runner may take, first call included (0: none)")
    parser.add_argument("--no-torch-compile", dest="torch_compile", action="store_false")
    parser.add_argument("--profile", choices=WORKLOADS,
                        help="time each step of this workload's compiled plan instead")
    parser.add_argument("--cprofile", metavar="FILE",
                        help="with --profile: Python's profile of 20 warm calls, into FILE")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    options = parser.parse_args(argv)
    if options.quick:
        options.repeats, options.warmup = min(options.repeats, 2), 0
    autojit = require_gpu()
    if options.profile:
        from cuda_profile import profile_workload

        return profile_workload(options.profile, MAKERS[options.profile], options, autojit)
    torch = cuda_torch()
    copy_size = 300 if options.quick else 64 * 1024 * 1024
    copy = copy_seconds(copy_size, max(options.repeats, 2), autojit)
    report = {"device": autojit.cuda.get_device_name(), "simulator": autojit.cuda.is_simulator(),
              "python": platform.python_version(), "numpy": np.__version__,
              "torch": getattr(torch, "__version__", None), "repeats": options.repeats,
              "copy_GB_per_s": 2 * 4 * copy_size / copy / 1e9, "workloads": {}}
    # autojit and torch eager on every workload first, then torch.compile (whose compiles
    # take longest): a run stopped by a time limit keeps the comparisons that matter most.
    first = ["autojit compiled"] + (["torch eager"] if torch is not None else [])
    for name in options.workloads:
        report["workloads"][name] = run_workload(name, options, autojit, torch, first)
        write_json(options.json, report)
    if torch is not None and options.torch_compile:
        for name in options.workloads:
            run_workload(name, options, autojit, torch, ["torch.compile"],
                         report["workloads"][name])
            write_json(options.json, report)
    print(table(report))
    return report


if __name__ == "__main__":
    main()
