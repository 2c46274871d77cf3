"""Data-parallel scaling of the MLP training step: one process of 2 threads against 2 processes
of 1 thread each (DistributedDataParallel over MPI), at a fixed global batch.

The step is bench/compiled_step.py's model (784-512-512-10, ReLU), cross-entropy, backward
and SGD, on a global batch of 256 rows (each of the 2 processes takes 128), compiled and
eager. For each it prints the median time per step of both configurations and the scaling
efficiency (the one process's time over the two processes'); for DDP also the all-reduce time
of the step's buckets run alone, the time the step spends waiting for them (Work.wait), and
the fraction of the all-reduces' time (from begun to completed, as the polls see it) that
passed before the step waited for them: hidden behind the backward; and the compiled step
without DDP in each of the 2 processes, which is what DDP adds to. Then the all-reduce bandwidth
of a 16 MB buffer between the 2 processes, and, from it, a paper estimate of DDP on 8 and 64
machines for bench/transformer_step.py's model. Usage:

    python bench/ddp_scaling.py [--rounds 9] [--steps 10]

(The 2 processes start through the mpiexec beside the interpreter, the mpich wheel's, with
autojit.distributed.run's lookup.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIZES = (784, 512, 512, 10)
GLOBAL_BATCH = 256
HERE = Path(__file__).resolve().parent


def mlp(nn):
    return nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]),
                         nn.ReLU(), nn.Linear(SIZES[2], SIZES[3]))


def training_step(mode: str, world: int, x, y):
    """The SGD step of the MLP (DDP over more than one process), compiled or eager;
    "independent": compiled, without DDP (each process trains its own model)."""
    import autojit
    import autojit.nn.functional as F
    from autojit.nn.parallel import DistributedDataParallel

    autojit.manual_seed(0)
    model = mlp(autojit.nn)
    if world > 1 and mode != "independent":
        model = DistributedDataParallel(model)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.01)

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    return (step if mode == "eager" else autojit.compile(step)), model


def measure(args) -> dict:
    """One configuration, in each of its processes; rank 0's figures (the step times are
    the slower rank's)."""
    import autojit
    import autojit.distributed as dist
    from autojit.distributed import work

    autojit.set_num_threads(args.threads)
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    waited = [0.0]
    spans: list = []  # per all-reduce: (begun, wait called, completed)
    originals = work.Work.__init__, work.Work.wait, work.Work._complete

    def init(self, requests, timeout, what, *rest, **named):
        originals[0](self, requests, timeout, what, *rest, **named)
        if what == "all_reduce":
            self._span = [time.perf_counter(), None, None]
            spans.append(self._span)

    def timed_wait(self, timeout=None):
        start = time.perf_counter()
        span = getattr(self, "_span", None)
        if span is not None and span[1] is None:
            span[1] = start
        try:
            return originals[1](self, timeout)
        finally:
            waited[0] += time.perf_counter() - start

    def complete(self):
        span = getattr(self, "_span", None)
        if span is not None:
            span[2] = time.perf_counter()
        originals[2](self)

    work.Work.__init__, work.Work.wait, work.Work._complete = init, timed_wait, complete
    rng = np.random.default_rng(1)
    x_all = rng.standard_normal((GLOBAL_BATCH, SIZES[0])).astype(np.float32)
    y_all = rng.integers(0, SIZES[-1], GLOBAL_BATCH)
    share = GLOBAL_BATCH // world
    x = autojit.tensor(x_all[rank * share:(rank + 1) * share])
    y = autojit.tensor(y_all[rank * share:(rank + 1) * share])
    report = {"world": world, "threads": args.threads}
    for mode in ("compiled", "eager") + (("independent",) if world > 1 else ()):
        call, model = training_step(mode, world, x, y)
        for _ in range(5):
            call()
        times, waits = [], []
        spans.clear()
        for _ in range(args.rounds):
            dist.barrier()
            waited[0] = 0.0
            start = time.perf_counter()
            for _ in range(args.steps):
                call()
            times.append((time.perf_counter() - start) / args.steps)
            waits.append(waited[0] / args.steps)
        slowest = [None] * world
        dist.all_gather_object(slowest, statistics.median(times))
        report[mode] = {"step": max(slowest), "waited": statistics.median(waits),
                        "hidden": _hidden(spans)}
        if world > 1 and mode == "compiled":
            report["buckets"] = [sum(p.numel() for _, p in bucket.params) * 4
                                 for bucket in model.reducer.buckets]
            report["plan"] = call.fusion_groups().splitlines()[-1]
    if world > 1:
        report["alone"] = _all_reduce_alone(dist, report["buckets"], args.rounds)
        report["bandwidth"] = _bandwidth(dist, args.rounds)
    work.Work.__init__, work.Work.wait, work.Work._complete = originals
    dist.destroy_process_group()
    return report if rank == 0 else {}


def _hidden(spans: list) -> float | None:
    """The fraction of the all-reduces' time (begun to completed) that passed before the
    step waited for them, while the backward ran: a poll that found one complete counts it
    hidden up to then, so this is a lower bound."""
    done = [(begun, called if called is not None else completed, completed)
            for begun, called, completed in spans if completed is not None]
    total = sum(completed - begun for begun, _, completed in done)
    if not total:
        return None
    return sum(min(called, completed) - begun for begun, called, completed in done) / total


def _all_reduce_alone(dist, sizes: list, rounds: int) -> float:
    """The step's bucket all-reduces with nothing else to do: begun one after the other,
    then waited for, as the reducer does."""
    import autojit

    buffers = [autojit.ones(size // 4) for size in sizes]
    times = []
    for _ in range(rounds * 5):
        dist.barrier()
        start = time.perf_counter()
        works = [dist.all_reduce(buffer, op=dist.ReduceOp.AVG, async_op=True)
                 for buffer in buffers]
        for handle in works:
            handle.wait()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _bandwidth(dist, rounds: int) -> dict:
    """Bytes per second of a blocking all_reduce of 16 MB (algorithm bandwidth: the buffer's
    size over the time) and the latency of a 4-byte one."""
    import autojit

    results = {}
    for name, count in (("large", 4 * 1024 * 1024), ("tiny", 1)):
        buffer = autojit.ones(count)
        times = []
        for _ in range(rounds * (2 if name == "large" else 50)):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(buffer)
            times.append(time.perf_counter() - start)
        results[name] = statistics.median(times)
    return {"bytes_per_second": 4 * 4 * 1024 * 1024 / results["large"],
            "latency": results["tiny"]}


def transformer_parameters() -> int:
    sys.path.insert(0, str(HERE))
    from transformer_step import build

    import autojit

    return sum(p.numel() for p in build(autojit.nn, autojit).parameters())


def estimate(bandwidth: float, latency: float, step: float, hidden: float, parameters: int,
             machines: int) -> dict:
    """A ring all-reduce of the gradients (float32) over `machines`, each computing the
    single-process step on its own batch: 2(N-1)/N of the bytes cross each link, in 2(N-1)
    messages; `hidden` of it overlaps the backward."""
    nbytes = 4 * parameters
    ring = 2 * (machines - 1) / machines * nbytes / bandwidth + 2 * (machines - 1) * latency
    exposed = (1 - hidden) * ring
    return {"all_reduce": ring, "step": step + exposed, "efficiency": step / (step + exposed)}


def launch(command: list) -> dict:
    environment = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    output = subprocess.run(command, capture_output=True, text=True, check=True,
                            env=environment).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        report = measure(args)
        if report:
            print(json.dumps(report))
        return
    from autojit.distributed.run import find_mpiexec

    this = [sys.executable, str(Path(__file__).resolve()), "--worker", "--rounds",
            str(args.rounds), "--steps", str(args.steps)]
    single = launch(this + ["--threads", "2"])
    ddp = launch([find_mpiexec(), "-n", "2"] + this + ["--threads", "1"])
    print(f"MLP {'-'.join(map(str, SIZES))}, global batch {GLOBAL_BATCH}, SGD; median of "
          f"{args.rounds} rounds of {args.steps} steps")
    hidden_compiled = None
    for mode in ("compiled", "eager"):
        one, two = single[mode]["step"], ddp[mode]["step"]
        alone, waited, hidden = ddp["alone"], ddp[mode]["waited"], ddp[mode]["hidden"]
        hidden_compiled = hidden if mode == "compiled" else hidden_compiled
        print(f"  {mode:<8} 1 process x 2 threads {one * 1e3:7.2f} ms/step   2 processes x 1 "
              f"thread {two * 1e3:7.2f} ms/step   scaling efficiency {one / two:5.2f}")
        print(f"           all-reduces: {alone * 1e3:5.2f} ms alone; in the step, waited for "
              f"{waited * 1e3:5.2f} ms, {hidden:4.0%} of their time hidden behind the "
              "backward")
    independent = ddp["independent"]["step"]
    print(f"  2 processes x 1 thread, each its own model (no DDP), compiled "
          f"{independent * 1e3:7.2f} ms/step: DDP adds "
          f"{(ddp['compiled']['step'] - independent) * 1e3:.2f} ms")
    print(f"  buckets (bytes): {ddp['buckets']}; compiled plan: {ddp['plan']}")
    bandwidth, latency = ddp["bandwidth"]["bytes_per_second"], ddp["bandwidth"]["latency"]
    print(f"  all_reduce, 2 processes on this machine: {bandwidth / 1e9:.2f} GB/s (16 MB), "
          f"{latency * 1e6:.1f} us (4 bytes)")
    parameters = transformer_parameters()
    step = 0.032  # bench/transformer_step.py, compiled, one process (docs/performance.md)
    print(f"Paper estimate, bench/transformer_step.py's model ({parameters} parameters, "
          f"{4 * parameters / 1e6:.2f} MB of gradients), {step * 1e3:.0f} ms compute per step, "
          f"{hidden_compiled:.0%} of the all-reduce hidden:")
    for label, link, link_latency in (("measured here", bandwidth, latency),
                                      ("10 Gb/s Ethernet", 1.25e9, 30e-6),
                                      ("100 Gb/s InfiniBand", 12.5e9, 3e-6)):
        cells = []
        for machines in (8, 64):
            found = estimate(link, link_latency, step, hidden_compiled, parameters, machines)
            cells.append(f"{machines} machines: all-reduce {found['all_reduce'] * 1e3:6.2f} ms, "
                         f"efficiency {found['efficiency']:5.1%}")
        print(f"  {label:<20} " + "; ".join(cells))


if __name__ == "__main__":
    main()
