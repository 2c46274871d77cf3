"""The launcher, as torchrun: `python -m autojit.distributed.run --nproc-per-node 2 train.py
[args]` starts the processes through the MPI runtime's mpiexec, each with torchrun's RANK,
WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE set, and exits with mpiexec's status.

On one machine the processes share it; on a cluster `--nnodes 4 --hostfile hosts` starts
`--nproc-per-node` processes on each of the hostfile's machines (MPICH's Hydra or Open MPI's
mpiexec, whichever the environment has). The mpiexec is AUTOJIT_MPIEXEC, else the one beside
the Python interpreter (where the mpich wheel installs it), else mpiexec on the PATH. A plain
`mpiexec -n 2 python train.py` works as well: init_process_group() reads the rank from MPI.

Each process runs this module again as a worker (`--worker`), which sets the variables from
what mpiexec told it and then runs the script as `__main__` (or `-m module`), so the script
sees the arguments it was given.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

from .channel import INSTALL_HINT, set_torchrun_variables


def find_mpiexec() -> str:
    """The mpiexec to launch with: AUTOJIT_MPIEXEC, the interpreter's sibling, the PATH's."""
    chosen = os.environ.get("AUTOJIT_MPIEXEC")
    if chosen:
        return chosen
    sibling = Path(sys.executable).parent / "mpiexec"
    if sibling.exists():
        return str(sibling)
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit(f"autojit.distributed.run: no mpiexec found. {INSTALL_HINT}")
    return found


def _flavour(mpiexec: str) -> str:
    """"openmpi" or "hydra" (MPICH, Intel MPI, MVAPICH), from `mpiexec --version`."""
    try:
        version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "hydra"
    return "openmpi" if "Open MPI" in version or "OpenRTE" in version else "hydra"


def mpiexec_command(args, worker: list) -> list:
    """The mpiexec command line that starts `worker` in every process."""
    mpiexec = find_mpiexec()
    total = args.nproc_per_node * args.nnodes
    command = [mpiexec, "-n", str(total)]
    flavour = _flavour(mpiexec)
    if args.hostfile:
        command += ["-hostfile", args.hostfile]
    if args.nnodes > 1 or args.hostfile:
        command += ["--npernode" if flavour == "openmpi" else "-ppn", str(args.nproc_per_node)]
    if flavour == "openmpi" and total > (os.cpu_count() or 1) and not args.hostfile:
        command.append("--oversubscribe")
    command += list(args.mpiexec_arg or ())
    return command + [sys.executable, "-m", "autojit.distributed.run", "--worker", *worker]


def _run_worker(arguments: list) -> None:
    set_torchrun_variables()
    if arguments[:1] == ["-m"]:
        sys.argv = [arguments[1], *arguments[2:]]
        runpy.run_module(arguments[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(arguments)
        sys.path.insert(0, str(Path(arguments[0]).resolve().parent))
        runpy.run_path(arguments[0], run_name="__main__")


def parser() -> argparse.ArgumentParser:
    described = argparse.ArgumentParser(
        prog="python -m autojit.distributed.run",
        description="Start a training script in several processes through mpiexec, as "
                    "torchrun does.")
    described.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                           help="processes per machine (default 1)")
    described.add_argument("--nnodes", type=int, default=1,
                           help="machines (default 1; more need --hostfile)")
    described.add_argument("--hostfile", help="the machines, one per line (mpiexec's hostfile)")
    described.add_argument("--mpiexec-arg", action="append",
                           help="one more argument for mpiexec (repeatable)")
    described.add_argument("--standalone", action="store_true",
                           help="torchrun's single-machine flag: accepted, mpiexec needs no "
                                "rendezvous")
    described.add_argument("-m", "--module", action="store_true",
                           help="run the script argument as a module (python -m)")
    described.add_argument("script", help="the training script (or module, with -m)")
    described.add_argument("script_args", nargs=argparse.REMAINDER,
                           help="the script's arguments")
    return described


def main(argv: list | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        _run_worker(argv[1:])
        return 0
    args = parser().parse_args(argv)
    if args.nproc_per_node < 1 or args.nnodes < 1:
        raise SystemExit("autojit.distributed.run: --nproc-per-node and --nnodes must be >= 1")
    if args.nnodes > 1 and not args.hostfile:
        raise SystemExit("autojit.distributed.run: --nnodes > 1 needs --hostfile naming the "
                         "machines")
    worker = (["-m"] if args.module else []) + [args.script, *args.script_args]
    return subprocess.call(mpiexec_command(args, worker))


if __name__ == "__main__":
    sys.exit(main())
