"""One compiled step on a GPU, step by step: CUDA events around every step of its plan.

Used by `python bench/cuda_steps.py --profile WORKLOAD [--json FILE]`. The workload's compiled
step runs twice (compiling, then warm); then every step of each of its plans (fused kernels,
products, single ops) is wrapped, for one more call, in a pair of CUDA events and host
timers, with autojit's launch counters (autojit.cuda.counters) read around it. The table
gives, per plan step, the host microseconds from its start to its return, the device
milliseconds between its events, and what it launched, read back, uploaded, copied and
allocated; then the sums, the call's own host time, and the time outside the steps (guards,
argument checks, write-back). nsys, where installed, is the finer tool
(tools/device_check.sh runs it when it is on the PATH); this needs nothing but numba.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import time


def _label(step) -> str:
    kernel = getattr(step, "kernel", None)
    if kernel is not None:
        return f"kernel {kernel.name}"
    node = getattr(step, "node", None)
    if node is not None:
        return f"op {node.op.name}"
    products = getattr(step, "products", None)
    if products:
        return "products " + "+".join(product.node.op.name for product in products)
    return type(step).__name__


def _wrap(step, records: list, cuda, counters):
    run = step.run

    def timed(environment):
        before = counters.snapshot()
        start_event, end_event = cuda.event(), cuda.event()
        start_event.record()
        start = time.perf_counter()
        try:
            return run(environment)
        finally:
            host = time.perf_counter() - start
            end_event.record()
            records.append({"step": _label(step), "host_us": host * 1e6,
                            "events": (start_event, end_event),
                            **counters.difference(before)})

    return timed


def host_profile(run, autojit, path: str, calls: int = 20) -> None:
    """Python's profile of `calls` warm calls of `run` (the host side of a compiled step),
    written to `path`: the 50 functions with the most time of their own, then the 40 with the
    most time below them. Then the host cost of the launch path's parts, each the median of
    200 tries: a numba device array, a pooled CudaArray, a launch of a one-element kernel
    compiled for its argument types, and a read-back of one element."""
    cuda = autojit.cuda.driver()
    profile = cProfile.Profile()
    autojit.cuda.synchronize()
    profile.enable()
    for _ in range(calls):
        run()
    autojit.cuda.synchronize()
    profile.disable()
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    stats.sort_stats("tottime").print_stats(50)
    stats.sort_stats("cumulative").print_stats(40)
    parts = _launch_parts(autojit, cuda)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"{calls} calls\n")
        for label, seconds in parts.items():
            handle.write(f"{label}: {seconds * 1e6:.1f} us\n")
        handle.write(text.getvalue())
    print("host cost of the launch path's parts:",
          {label: round(seconds * 1e6, 1) for label, seconds in parts.items()})


def _launch_parts(autojit, cuda) -> dict:
    import numba
    import numpy as np
    from timing import median_seconds

    from autojit.cuda.array import CudaArray

    def median(action) -> float:
        return median_seconds(action, 200, warmup=1)

    one = cuda.device_array(1, np.float32)
    signature = (numba.types.Array(numba.types.float32, 1, "C"),)

    def kernel(out):
        out[0] = 1.0

    launch = cuda.jit(signature)(kernel)[1, 1]
    return {"numba device_array(1024)": median(lambda: cuda.device_array(1024, np.float32)),
            "CudaArray((1024,)) from the pool": median(lambda: CudaArray((1024,), np.float32)),
            "CudaArray.flat": median(lambda: CudaArray((1024,), np.float32).flat),
            "launch of a typed kernel": median(lambda: launch(one)),
            "launch, synchronized": median(lambda: (launch(one), cuda.synchronize())),
            "read-back of one element": median(lambda: one.copy_to_host())}


def profile_workload(name: str, make, options, autojit) -> dict:
    from autojit.cuda import counters

    run, compiled, info = make("autojit compiled", options.quick, autojit, None)
    run()
    run()
    autojit.cuda.synchronize()
    if getattr(options, "cprofile", None):
        host_profile(run, autojit, options.cprofile)
    cuda = autojit.cuda.driver()
    records: list = []
    wrapped = []
    for executable in compiled.executables:
        for step in getattr(executable.plan, "steps", ()):
            wrapped.append(step)
            step.run = _wrap(step, records, cuda, counters)
    before = counters.snapshot()
    start = time.perf_counter()
    try:
        run()
        returned = time.perf_counter() - start
        autojit.cuda.synchronize()
        total = time.perf_counter() - start
    finally:
        for step in wrapped:
            del step.run  # the class's method again
    call = counters.difference(before)
    for record in records:
        first, last = record.pop("events")
        record["device_ms"] = first.elapsed_time(last)
    host_steps = sum(record["host_us"] for record in records)
    report = {"workload": name, "info": info, "device": autojit.cuda.get_device_name(),
              "call_host_us": returned * 1e6, "call_synchronized_us": total * 1e6,
              "steps_host_us": host_steps, "outside_steps_host_us": returned * 1e6 - host_steps,
              "call_counts": call, "steps": records}
    print(f"one compiled {name} step on {report['device']}: {len(records)} plan steps, "
          f"call {returned * 1e3:.3f} ms host ({total * 1e3:.3f} ms synchronized), "
          f"{host_steps / 1e3:.3f} ms in steps, {call}")
    print(f"{'step':44}{'host us':>9}{'device ms':>11}{'launches':>9}{'reads':>6}"
          f"{'allocs':>7}")
    for record in records:
        print(f"{record['step'][:43]:44}{record['host_us']:9.1f}{record['device_ms']:11.4f}"
              f"{record['launches']:9}{record['readbacks']:6}{record['allocations']:7}")
    if options.json:
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    return report
