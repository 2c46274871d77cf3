"""Where a compiled function's time goes: each step of its plan timed on its own.

A compiled training step runs as one native program (codegen/cpu/program.py), which has no
clock inside. `step_times` runs the plan's steps from Python instead, as the plan does under
autojit's profiler (the same native routines, split over the same workers), and times each
step's call: wall time and the calling thread's CPU time, medians over `calls` calls. Python
adds about a microsecond or two around each step, which the native program does not pay; the
summary gives the program's own time per call beside the steps' sum.

    from plan_profile import step_times, print_profile
    rows, program = step_times(compiled_step, lambda: compiled_step(x, y), calls=20)
    print_profile(rows, program)

`bench/resnet_step.py --profile` uses it (docs/notes/convolution.md has its breakdown).
"""

from __future__ import annotations

import math
import statistics
import time


def _label(step) -> tuple:
    """(kind, description) of a plan step: its kernel, product or convolution."""
    kernel = getattr(step, "kernel", None)
    if kernel is not None:
        shape = "x".join(str(n) for n in kernel.shape)
        if "in place" in step.describe():
            return "update", f"{kernel.name} [{shape}]"
        return "kernel" if math.prod(kernel.shape) >= 4096 else "small kernel", \
            f"{kernel.name} [{shape}]"
    geometry = getattr(step, "geometry", None)
    if geometry is not None:  # a convolution (codegen/schedule/conv_steps.py)
        node = step.node
        first, second = (tuple(value.shape) for value in node.inputs)
        return f"conv {geometry.kind}", conv_label(geometry.kind, first, second, node.attrs)
    return "other", step.describe()


def conv_label(kind: str, first: tuple, second: tuple, attrs: dict) -> str:
    """A convolution's layer as `C->O kxk sS HxW` (the input's channels and sizes)."""
    if kind == "forward":
        x, w = first, second
        channels, sizes = x[1], x[2:]
        out, kernel = w[0], w[2:]
    elif kind == "input":
        g, w = first, second
        channels, sizes, out, kernel = w[1] * attrs["groups"], attrs["input_size"], g[1], w[2:]
    else:
        x, g = first, second
        channels, sizes, out, kernel = x[1], x[2:], g[1], attrs["kernel_size"]
    return (f"{channels}->{out} {'x'.join(map(str, kernel))} s{attrs['stride'][0]} "
            f"{'x'.join(map(str, sizes))}")


def conv_flops(kind: str, first: tuple, second: tuple, attrs: dict) -> int:
    """Multiply-adds times two of a convolution product (each of the three is the same)."""
    if kind == "forward":
        x, w = first, second
        out = _out_sizes(x[2:], w[2:], attrs)
        return 2 * x[0] * w[0] * w[1] * math.prod(w[2:]) * math.prod(out)
    if kind == "input":
        g, w = first, second
        return 2 * g[0] * w[0] * w[1] * math.prod(w[2:]) * math.prod(g[2:])
    x, g = first, second
    return 2 * x[0] * g[1] * (x[1] // attrs["groups"]) * math.prod(attrs["kernel_size"]) * \
        math.prod(g[2:])


def _out_sizes(sizes, kernel, attrs) -> tuple:
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1 for n, k, s, (lo, hi), d in
                 zip(sizes, kernel, attrs["stride"], attrs["padding"], attrs["dilation"],
                     strict=True))


def step_times(compiled, call, calls: int = 20, warmup: int = 3):
    """([(index, kind, label, flops or 0, wall median s, cpu median s)] per step of the
    compiled function's plan (the executable a profiled call runs), the native program's median wall
    seconds per call).

    `call()` calls the compiled function on its arguments."""
    import autojit

    for _ in range(warmup):
        call()
    program = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        program.append(time.perf_counter() - started)
    walls: dict = {}
    cpus: dict = {}
    originals: dict = {}

    def timed(index, run):
        def wrapper(environment):
            wall, cpu = time.perf_counter(), time.thread_time()
            run(environment)
            cpus[index].append(time.thread_time() - cpu)
            walls[index].append(time.perf_counter() - wall)
        return wrapper

    steps: list = []
    try:
        # With a profiler on, the plan runs its steps from Python (plan.Plan._run_profiled).
        # The executable whose calls the first profiled call counts is the one timed (a
        # function can be traced again under a profiler).
        with autojit.autograd.profiler.profile():
            counts = {id(executable): executable.calls for executable in compiled.executables}
            call()
            plan = next(executable.plan for executable in compiled.executables
                        if counts.get(id(executable)) != executable.calls)
            steps = list(plan.steps)
            walls = {index: [] for index in range(len(steps))}
            cpus = {index: [] for index in range(len(steps))}
            for index, step in enumerate(steps):
                originals[index] = step.__dict__.get("run")
                step.run = timed(index, step.run)
            for _ in range(warmup + calls):
                call()
    finally:
        for index, original in originals.items():
            if original is None:
                del steps[index].run
            else:
                steps[index].run = original
    rows = []
    for index, step in enumerate(steps):
        if not walls[index]:
            continue
        kind, label = _label(step)
        flops = 0
        if kind.startswith("conv"):
            node = step.node
            flops = conv_flops(step.geometry.kind, *(tuple(v.shape) for v in node.inputs),
                               node.attrs)
        rows.append((index, kind, label, flops, statistics.median(walls[index][warmup:]),
                     statistics.median(cpus[index][warmup:])))
    return rows, statistics.median(program)


def print_profile(rows: list, program: float, peak: float | None = None,
                  threads: int = 1) -> None:
    """A line per step with at least 1% of the total, the sums per group, and the total
    against the native program's time per call. `peak`: a core's float32 FMA GFLOP/s
    (bench/fma_peak.py), for each convolution's share of `threads` cores' peak."""
    total = sum(row[4] for row in rows)
    print(f"{len(rows)} steps, sum of steps {total * 1e3:.2f} ms (wall), native program "
          f"{program * 1e3:.2f} ms per call")
    print(f"  {'step':>4} {'kind':<13} {'what':<46} {'wall us':>8} {'cpu us':>8} "
          f"{'GF/s':>6} {'peak':>5}")
    for index, kind, label, flops, wall, cpu in rows:
        if wall < 0.01 * total and not kind.startswith("conv"):
            continue
        rate = f"{flops / wall / 1e9:6.1f}" if flops else ""
        share = f"{flops / wall / 1e9 / (peak * threads):5.0%}" if flops and peak else ""
        print(f"  {index:>4} {kind:<13} {label[:46]:<46} {wall * 1e6:8.1f} {cpu * 1e6:8.1f} "
              f"{rate:>6} {share:>5}")
    groups: dict = {}
    for _, kind, _, _, wall, cpu in rows:
        key = kind
        walls, cpus, count = groups.get(key, (0.0, 0.0, 0))
        groups[key] = (walls + wall, cpus + cpu, count + 1)
    print("  by group:")
    for key, (wall, cpu, count) in sorted(groups.items(), key=lambda item: -item[1][0]):
        print(f"    {key:<40} {count:>4} steps {wall * 1e3:8.2f} ms wall {cpu * 1e3:8.2f} ms "
              f"cpu  {wall / total:5.1%}")
