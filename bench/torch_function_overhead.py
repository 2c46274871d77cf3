"""What the `__torch_function__` protocol costs the eager path: bench/eager_overhead.py's
100-op chain (64 float32 elements, forward and backward), as a ratio to torch's in the same
process, the runners taking turns. Usage:

    python bench/torch_function_overhead.py [--rounds 5] [--steps 20]
    python bench/torch_function_overhead.py --before OTHER_TREE [--processes 4]

The first form measures, in one process: autojit before any Tensor subclass overriding the
protocol exists (the wrappers are not installed), then after one is made (every public
function, method and property checks its arguments), on plain tensors and on a plain subclass
(Tensor's default handler converts each result), each beside torch on the same tensors. Wall
and CPU time (time.thread_time) per op, medians.

The second form compares this tree with another checkout (its `src/` on PYTHONPATH, as before
a change): processes of the two alternate, each printing autojit's chain as a ratio to torch's
in that process, so that a change in the ratio is the change's, not the machine's load.
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

from eager_overhead import chain, setup
from timing import interleaved_medians

HERE = Path(__file__).resolve().parent
OPS = 100


def _runner(module, tensors):
    x, w, b = tensors

    def step():
        chain(module, x, w, b, OPS).backward()
        w.grad = None
        b.grad = None

    return step


def _in_process(rounds: int, steps: int) -> dict:
    import torch

    import autojit

    torch.set_num_threads(1)
    runners = {"autojit": _runner(autojit, setup(autojit)), "torch": _runner(torch, setup(torch))}
    cpu_before: dict = {}
    before = interleaved_medians(runners, rounds, steps, cpu=cpu_before)

    class Plain(autojit.Tensor):
        pass

    class TorchPlain(torch.Tensor):
        pass

    x, w, b = setup(autojit)
    tx, tw, tb = setup(torch)
    active = {
        "autojit": _runner(autojit, setup(autojit)),
        "autojit subclass": _runner(autojit, (x.as_subclass(Plain), w, b)),
        "torch": _runner(torch, setup(torch)),
        "torch subclass": _runner(torch, (tx.as_subclass(TorchPlain), tw, tb)),
    }
    cpu_after: dict = {}
    after = interleaved_medians(active, rounds, steps, cpu=cpu_after)
    return {"inactive": (before, cpu_before), "active": (after, cpu_after)}


def _print_in_process(results: dict) -> None:
    print(f"{OPS}-op chain on 64 float32 elements, forward and backward, us per op "
          f"(wall / CPU), ratio to torch on the same tensors")
    for phase, (wall, cpu) in results.items():
        for name in wall:
            reference = "torch subclass" if name.endswith("subclass") else "torch"
            print(f"  {phase:<9}{name:<18}{wall[name] / OPS * 1e6:>8.2f} / "
                  f"{cpu[name] / OPS * 1e6:>6.2f}   {wall[name] / wall[reference]:>5.2f}x / "
                  f"{cpu[name] / cpu[reference]:.2f}x")


def _chain_ratio(rounds: int, steps: int) -> None:
    """One process's autojit/torch ratio of the chain (printed as JSON)."""
    import torch

    import autojit

    torch.set_num_threads(1)
    runners = {"autojit": _runner(autojit, setup(autojit)), "torch": _runner(torch, setup(torch))}
    cpu: dict = {}
    wall = interleaved_medians(runners, rounds, steps, cpu=cpu)
    print(json.dumps({"wall": wall, "cpu": cpu}))


def _compare(before: Path, processes: int, rounds: int, steps: int) -> None:
    trees = {"before": before.resolve() / "src", "after": HERE.parent / "src"}
    ratios: dict = {name: {"wall": [], "cpu": []} for name in trees}
    for index in range(processes):
        for name, src in trees.items():
            environment = dict(os.environ, PYTHONPATH=str(src))
            output = subprocess.run(
                [sys.executable, __file__, "--chain", "--rounds", str(rounds), "--steps",
                 str(steps)], env=environment, capture_output=True, text=True, check=True,
                cwd=HERE).stdout
            found = json.loads(output.strip().splitlines()[-1])
            for kind in ("wall", "cpu"):
                ratios[name][kind].append(found[kind]["autojit"] / found[kind]["torch"])
            print(f"  process {index + 1} {name:<7} autojit/torch wall "
                  f"{ratios[name]['wall'][-1]:.3f}x, CPU {ratios[name]['cpu'][-1]:.3f}x",
                  flush=True)
    for name in trees:
        print(f"{name:<7} median autojit/torch: wall "
              f"{statistics.median(ratios[name]['wall']):.3f}x, CPU "
              f"{statistics.median(ratios[name]['cpu']):.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout to compare this tree with")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--chain", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.chain:
        _chain_ratio(args.rounds, args.steps)
        return
    if args.before is not None:
        _compare(args.before, args.processes, args.rounds, args.steps)
    else:
        _print_in_process(_in_process(args.rounds, args.steps))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
