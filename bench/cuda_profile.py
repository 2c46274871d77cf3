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

import json
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


def profile_workload(name: str, make, options, autojit) -> dict:
    from autojit.cuda import counters

    run, compiled, info = make("autojit compiled", options.quick, autojit, None)
    run()
    run()
    autojit.cuda.synchronize()
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
