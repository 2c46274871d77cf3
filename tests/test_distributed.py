"""autojit.distributed across processes: this module launches three `mpiexec -n 2` jobs on this
machine (loopback only) and checks what their ranks report.

- tests/distributed/run_checks.py, through `python -m autojit.distributed.run`: the checks of
  collective_checks.py (every collective, for each ReduceOp and dtype, against
  torch.distributed's gloo backend run in the same processes, eagerly and compiled) and of
  ddp_checks.py (DistributedDataParallel eager and compiled over 20 steps against one process
  on the combined batches and against torch's DDP; no_sync, uneven last batches with
  DistributedSampler.set_epoch, unused parameters, buffers) and of dtensor_checks.py (DTensor,
  DeviceMesh and the functional collectives against torch's);
- tests/distributed/failure_worker.py, twice: a rank that raises aborts the job; a rank that
  stops calling collectives makes the others time out with a clear error.

One launch serves all the checks (a module fixture), each its own test. Skipped where mpi4py is
not installed (the test extra installs it, with the mpich wheel).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
WORKERS = HERE / "distributed"
sys.path.insert(0, str(WORKERS))

import collective_checks  # noqa: E402
import ddp_checks  # noqa: E402
import dtensor_checks  # noqa: E402

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None,
    reason="mpi4py is not installed (pip install 'autojit[distributed]')")

# Variables mpiexec sets, which a launch must not inherit from a pytest run under mpiexec.
_MPI_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                  "MV2_COMM_WORLD_RANK", "MPI_LOCALRANKID", "PMI_FD", "RANK", "WORLD_SIZE",
                  "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def mpiexec() -> str:
    sibling = Path(sys.executable).parent / "mpiexec"
    found = str(sibling) if sibling.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec beside the interpreter or on the PATH")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(command: list, out: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items()
                   if key not in _MPI_VARIABLES}
    environment.update(AUTOJIT_TEST_OUT=str(out), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(_free_port()), OMP_NUM_THREADS="1",
                       OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=environment, cwd=str(HERE.parent))


def results(completed: subprocess.CompletedProcess, out: Path) -> dict:
    """{check name: [(rank, passed, detail)]} from the ranks' JSON files."""
    found: dict = {}
    for rank in range(2):
        path = out / f"rank{rank}.json"
        if not path.exists():
            return {"launch": [(rank, False, completed.stdout[-3000:] +
                                completed.stderr[-3000:])]}
        for name, passed, detail in json.loads(path.read_text()):
            found.setdefault(name, []).append((rank, passed, detail))
    return found


def assert_passed(found: dict, name: str) -> None:
    if "launch" in found:
        pytest.fail("the mpiexec job wrote no results:\n" + found["launch"][0][2])
    reports = found.get(name)
    assert reports, f"{name}: no rank reported it"
    failures = [f"rank {rank}:\n{detail}" for rank, passed, detail in reports if not passed]
    assert not failures, f"{name} failed\n" + "\n".join(failures)


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    out = tmp_path_factory.mktemp("checks")
    completed = launch([sys.executable, "-m", "autojit.distributed.run", "--nproc-per-node",
                        "2", str(WORKERS / "run_checks.py")], out)
    return results(completed, out)


def test_the_launcher_sets_torchruns_variables(checked):
    assert_passed(checked, "launcher_variables")


@pytest.mark.parametrize("name", [name for name, _ in collective_checks.CHECKS])
def test_collective(checked, name):
    assert_passed(checked, name)


@pytest.mark.parametrize("name", [name for name, _ in ddp_checks.CHECKS])
def test_distributed_data_parallel(checked, name):
    assert_passed(checked, name)


@pytest.mark.parametrize("name", [name for name, _ in dtensor_checks.CHECKS])
def test_dtensor(checked, name):
    assert_passed(checked, name)


@pytest.mark.parametrize("mode, message", [
    ("raise", "ValueError: rank 1 failed on purpose"),
    ("timeout", "all_reduce timed out after 2 s"),
])
def test_a_failed_rank_ends_the_job(tmp_path, mode, message):
    """Rank 1 raises (the job aborts through MPI_Abort) or stops calling collectives (rank 0
    times out after the group's 2 s and aborts): the job ends long before rank 1's 60 s sleep,
    with a nonzero status and the reason."""
    start = time.monotonic()
    completed = launch([mpiexec(), "-n", "2", sys.executable,
                        str(WORKERS / "failure_worker.py"), mode], tmp_path, timeout=120)
    elapsed = time.monotonic() - start
    assert completed.returncode != 0
    output = completed.stdout + completed.stderr
    assert message in output, output[-3000:]
    assert "aborting the MPI job" in output, output[-3000:]
    assert "rank 0 finished" not in output
    assert elapsed < 45, f"the job took {elapsed:.0f} s to end"
