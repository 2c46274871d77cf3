"""autojit.distributed in this one process, without MPI: the world of one process, the errors
of a missing group or a missing mpi4py (the extra's name), the launcher's mpiexec command line
and torchrun's variables. tests/test_distributed.py runs the collectives across processes."""

from __future__ import annotations

import sys

import pytest

import autojit
import autojit.distributed as dist
from autojit.distributed import channel, run


@pytest.fixture
def one_process():
    dist.init_process_group(backend="local")
    yield
    dist.destroy_process_group()


def test_without_a_group_the_calls_say_so():
    assert not dist.is_initialized() and dist.is_available()
    message = "Default process group has not been initialized"
    with pytest.raises(ValueError, match=message):
        dist.get_rank()
    with pytest.raises(ValueError, match=message):
        dist.all_reduce(autojit.ones(2))


def test_a_world_of_one_process(one_process):
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "local")
    with pytest.raises(ValueError, match="trying to initialize the default process group twice"):
        dist.init_process_group()
    t = autojit.tensor([1.0, 2.0])
    version = t._version
    assert dist.all_reduce(t, op=dist.ReduceOp.AVG) is None
    assert t.tolist() == [1.0, 2.0] and t._version > version  # an in-place write
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        dist.all_reduce(autojit.ones(2, dtype=autojit.int64), op=dist.ReduceOp.AVG)
    with pytest.raises(TypeError, match="Expected parameter `tensor` of type Tensor"):
        dist.broadcast([1.0], src=0)
    with pytest.raises(RuntimeError, match="Tensors must be contiguous"):
        dist.all_reduce(autojit.ones(3, 2).t())
    with pytest.raises(ValueError, match="Invalid destination rank: should not be the same"):
        dist.send(t, dst=0)


def test_asking_for_more_processes_than_launched_names_the_launcher():
    with pytest.raises(ValueError, match=r"mpiexec -n 4 python script.py"):
        dist.init_process_group(backend="local", world_size=4)
    with pytest.raises(ValueError, match="backend 'nccl' is not available"):
        dist.init_process_group(backend="nccl")
    assert not dist.is_initialized()


def test_a_missing_mpi4py_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # an import of it fails
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'autojit\[distributed\]'"):
        dist.init_process_group(backend="mpi")
    assert not dist.is_initialized()


def test_the_launcher_builds_mpiexecs_command(monkeypatch):
    monkeypatch.setenv("AUTOJIT_MPIEXEC", "/nonexistent/mpiexec")  # `--version` fails: Hydra
    args = run.parser().parse_args(["--nnodes", "2", "--nproc-per-node", "4", "--hostfile",
                                    "hosts", "train.py", "--lr", "0.1"])
    command = run.mpiexec_command(args, [args.script, *args.script_args])
    assert command == ["/nonexistent/mpiexec", "-n", "8", "-hostfile", "hosts", "-ppn", "4",
                       sys.executable, "-m", "autojit.distributed.run", "--worker", "train.py",
                       "--lr", "0.1"]
    with pytest.raises(SystemExit, match="--nnodes > 1 needs --hostfile"):
        run.main(["--nnodes", "2", "train.py"])


def test_torchruns_variables_come_from_what_mpiexec_set(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PMI_RANK", "3")
    monkeypatch.setenv("PMI_SIZE", "8")
    monkeypatch.setenv("MPI_LOCALRANKID", "1")
    monkeypatch.setenv("MPI_LOCALNRANKS", "2")
    assert channel.launched_by_mpiexec()
    channel.set_torchrun_variables()
    import os

    assert [os.environ[name] for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK",
                                          "LOCAL_WORLD_SIZE")] == ["3", "8", "1", "2"]
