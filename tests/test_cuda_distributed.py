"""Collectives on CUDA tensors, in a process group of this one process: a CUDA tensor's data
goes through a host copy (the MPI wheel is not CUDA-aware), eagerly and in a compiled plan,
whose background steps get and give device arrays (distributed/transport.py). The same code
runs between processes in tests/test_distributed.py's jobs, on CPU tensors."""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
import autojit.distributed as dist
from autojit.nn.parallel import DistributedDataParallel

pytestmark = MARKS


@pytest.fixture
def one_process():
    dist.init_process_group(backend="local")
    yield
    dist.destroy_process_group()


def test_eager_and_compiled_collectives_on_cuda_tensors(one_process):
    t = autojit.tensor([1.0, 2.0, 3.0], device="cuda")
    work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    work.wait()
    assert t.device.type == "cuda" and t.cpu().tolist() == [1.0, 2.0, 3.0]

    @autojit.compile(fullgraph=True)
    def step(x):
        y = x * 2
        dist.all_reduce(y, op=dist.ReduceOp.MAX)
        gathered = autojit.zeros(1, 2, device="cuda")  # stacked: one row per process
        dist.all_gather_into_tensor(gathered, y)
        return y + 1, gathered

    for _ in range(3):
        y, gathered = step(autojit.tensor([1.0, -2.0], device="cuda"))
    assert y.device.type == "cuda" and y.cpu().tolist() == [3.0, -3.0]
    assert gathered.device.type == "cuda" and gathered.cpu().tolist() == [[2.0, -4.0]]
    assert step.stats().eager_calls == 0
    assert "start collective" in step.fusion_groups()


def test_ddp_wraps_a_cuda_module(one_process):
    model = DistributedDataParallel(autojit.nn.Linear(3, 2).cuda())
    model(autojit.ones(4, 3, device="cuda")).sum().backward()
    assert model.module.weight.grad.device.type == "cuda"
    np.testing.assert_array_equal(model.module.weight.grad.cpu().numpy(), np.full((2, 3), 4.0))
