"""torch.cuda's names around a device that scripts and libraries call (cuda/management.py),
with a GPU (Numba's CUDA simulator in CI): the errors `except` clauses name, the device
context, initialization, the compute capability, the per-device random states, the deprecated
memory names with torch's FutureWarnings, the summary, and the allocator's retry once the device
is out of memory."""

from __future__ import annotations

import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit.cuda import allocator

pytestmark = MARKS
cuda = autojit.cuda


def test_errors_are_torchs_classes():
    assert cuda.OutOfMemoryError is autojit.OutOfMemoryError
    assert issubclass(cuda.OutOfMemoryError, RuntimeError)
    assert issubclass(autojit.AcceleratorError, RuntimeError)
    assert cuda.CudaError(2).code == 2 and issubclass(cuda.CudaError, RuntimeError)
    assert not issubclass(cuda.DeferredCudaCallError, RuntimeError)


def test_device_context_initialization_and_capability():
    cuda.init()
    assert cuda.is_initialized()
    with cuda.device(0) as context:
        assert context.idx == 0 and cuda.current_device() == 0
    with cuda.device(-1), cuda.device(None):  # left as it is
        pass
    assert cuda.device_of(autojit.zeros(1, device="cuda")).idx == 0
    assert cuda.device_of(autojit.zeros(1)).idx == -1
    properties = cuda.get_device_properties()
    assert cuda.get_device_capability() == (properties.major, properties.minor)
    arch = f"sm_{properties.major}{properties.minor}"
    assert cuda.get_arch_list() == [arch]
    assert cuda.get_gencode_flags() == f"-gencode compute=compute_{arch[3:]},code={arch}"
    assert cuda.is_tf32_supported() is False
    cuda.ipc_collect()


def test_random_states_of_every_device():
    cuda.manual_seed_all(3)
    states = cuda.get_rng_state_all()
    assert len(states) == cuda.device_count()
    first = autojit.rand(4, device="cuda").cpu()
    cuda.set_rng_state_all(states)
    assert bool((autojit.rand(4, device="cuda").cpu() == first).all())


def test_deprecated_memory_names_warn_and_answer():
    kept = autojit.ones(1000, device="cuda")
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.memory_reserved`"):
        assert cuda.memory_cached() == cuda.memory_reserved() > 0
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.max_memory_reserved`"):
        assert cuda.max_memory_cached() == cuda.max_memory_reserved()
    del kept
    with pytest.warns(FutureWarning, match="resets /all/ peak memory stats"):
        cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    with pytest.warns(FutureWarning, match="reset_max_memory_cached now calls"):
        cuda.reset_max_memory_cached()
    cuda.reset_accumulated_memory_stats()
    assert cuda.memory_stats()["allocated"] == cuda.memory_stats()["reused"] == 0
    assert cuda.memory_stats_as_nested_dict() == cuda.memory_stats()
    summary = cuda.memory_summary()
    assert "memory allocated (in use)" in summary and "peak reserved" in summary


class _OutOfMemory(Exception):
    code = 2  # CUDA_ERROR_OUT_OF_MEMORY, as numba's CudaAPIError carries it


def test_out_of_memory_releases_the_cache_and_retries(monkeypatch):
    autojit.ones(1000, device="cuda")  # a buffer left in the pool
    assert cuda.memory_stats()["cached_bytes"] > 0
    device_array = allocator.driver().device_array
    calls = []

    def fails_once(count, dtype):
        calls.append(cuda.memory_stats()["cached_bytes"])
        if len(calls) == 1:
            raise _OutOfMemory()
        return device_array(count, dtype)

    monkeypatch.setattr(allocator.driver(), "device_array", fails_once)
    assert autojit.ones(12345, device="cuda").cpu().sum().item() == 12345
    assert len(calls) == 2 and calls[0] > 0 and calls[1] == 0  # retried with the pool released

    def always_fails(count, dtype):
        raise _OutOfMemory()

    monkeypatch.setattr(allocator.driver(), "device_array", always_fails)
    with pytest.raises(cuda.OutOfMemoryError, match="CUDA out of memory. Tried to allocate"):
        autojit.ones(23456, device="cuda")
