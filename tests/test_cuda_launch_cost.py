"""The host work of compiled CUDA steps, counted (autojit.cuda.counters), and the launch path's
savings with results unchanged (issue 72; docs/notes/cuda.md, "The launch path's host cost").

A compiled MLP training step launches one kernel per fused kernel and per product (the
products read transposed weights in place, without a strided copy), reads back one status
word, and allocates nothing after its second call; its status word is reused from call to call (no
zeroing launch), except after a kernel set it. Generated kernels launch with their argument
types bound at the first launch. Under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from cuda_simulator import MARKS, SIMULATED  # before autojit: it enables the simulator

import autojit
from autojit.cuda import counters, kernels
from autojit.cuda.array import CudaArray

pytestmark = MARKS
BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
SIZES = (8, 6, 6, 3)


def mlp(device: str):
    sys.path.insert(0, BENCH)
    try:
        from compiled_step import batch, initial_parameters, sgd_step
    finally:
        sys.path.remove(BENCH)
    parameters = [autojit.tensor(a, device=device, requires_grad=True)
                  for a in initial_parameters(sizes=SIZES)]
    x_data, y_data = batch(4, sizes=SIZES)
    x, y = autojit.tensor(x_data, device=device), autojit.tensor(y_data, device=device)

    @autojit.compile
    def step(x, y):
        return sgd_step(autojit, autojit.nn.functional.cross_entropy, parameters, x, y, 0.01)

    return (lambda: step(x, y)), step, parameters


def launching_steps(plan) -> int:
    """Plan steps that launch one kernel each: fused kernels and products. The transposes of
    the weights the backward products read (permute steps) launch nothing: the products read
    the weights in place."""
    return sum(1 for step in plan.steps if not (hasattr(step, "node") and step.node.op.view))


def test_a_compiled_mlp_step_launches_once_per_step_reads_back_once_and_allocates_nothing():
    run, step, parameters = mlp("cuda")
    run_cpu, _, parameters_cpu = mlp("cpu")
    losses, expected = [], []
    for call in range(3):
        before = counters.snapshot()
        losses.append(float(run()))
        counts = counters.difference(before)
        expected.append(float(run_cpu()))
        if call == 0:
            continue
        plan = step.executables[0].plan
        assert counts["launches"] == launching_steps(plan), counts  # no zeroing launch
        assert counts["launches"] == 28  # 20 fused kernels, 8 products
        assert counts["readbacks"] == 2  # the status word, and float(loss) here
        assert counts["uploads"] == 0
        if call == 2:
            assert counts["allocations"] == 0
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    for parameter, on_cpu in zip(parameters, parameters_cpu):
        np.testing.assert_allclose(parameter.detach().cpu().numpy(),
                                   on_cpu.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert len(step.executables[0].plan._statuses) == 1


def test_a_set_status_word_is_not_reused():
    weight = autojit.ones(4, 3, device="cuda")

    @autojit.compile
    def rows(index):
        return weight.gather(0, index) * 2

    good, bad = autojit.tensor([[0, 3, 1]]).cuda(), autojit.tensor([[0, 4, 1]]).cuda()
    rows(good)
    plan = rows.executables[0].plan
    kept = plan._statuses[0]
    rows(good)
    assert plan._statuses == [kept]
    with pytest.raises(RuntimeError, match="index 4 is out of bounds"):
        rows(bad)
    assert plan._statuses == []  # the word the gather's check set is dropped
    np.testing.assert_array_equal(rows(good).cpu().numpy(), [[2, 2, 2]])
    assert len(plan._statuses) == 1 and plan._statuses[0] is not kept
    assert int(plan._statuses[0].to_host()[0]) == 0


def test_generated_kernels_launch_with_their_argument_types_bound():
    kernels.clear_cache()
    x = autojit.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device="cuda")

    @autojit.compile
    def f(x):
        return (x.exp() * 2 + 1).sum(1)

    first = f(x).cpu().numpy()
    launched = [kernel for kernel in kernels._CACHE.values() if kernel._launch is not None]
    assert launched and all(kernel._bound is not None for kernel in launched)
    assert all(kernel._bound is not kernel._launch for kernel in launched)  # not the fallback
    np.testing.assert_array_equal(f(x).cpu().numpy(), first)
    np.testing.assert_allclose(first, (np.exp(np.arange(12.0).reshape(3, 4)) * 2 + 1).sum(1),
                               rtol=1e-5)


def test_a_kernel_whose_types_cannot_be_bound_launches_through_numba_dispatch(monkeypatch):
    kernels.clear_cache()

    def refuse(arguments):
        raise TypeError("no signature")

    monkeypatch.setattr(kernels, "launch_signature", refuse)
    x = autojit.tensor([1.0, 2.0, 3.0], device="cuda")
    np.testing.assert_allclose((x * 3 + 1).cpu().numpy(), [4, 7, 10])
    launched = [kernel for kernel in kernels._CACHE.values() if kernel._launch is not None]
    assert launched and all(kernel._bound is kernel._launch for kernel in launched)
    kernels.clear_cache()


def test_the_signature_types_flat_arrays_and_counts():
    from numba.core import types

    flat = CudaArray((5,), np.float32).flat
    status = CudaArray((1,), np.int32).flat
    assert kernels.launch_signature([flat, status, 7]) == (
        types.Array(types.float32, 1, "C"), types.Array(types.int32, 1, "C"), types.int64)


def test_arrays_of_a_whole_buffer_and_whole_reshapes_slice_nothing():
    array = CudaArray((8, 8), np.float32)  # 64 elements: a whole pool slot
    assert array._flat is array._buffer
    array[...] = np.arange(64, dtype=np.float32).reshape(8, 8)
    reshaped = array.reshape(4, 16)
    assert reshaped._flat is array._flat
    np.testing.assert_array_equal(reshaped.to_host(), np.arange(64).reshape(4, 16))
    part = CudaArray((3,), np.float32)  # a 64-element slot: its first 3 elements
    assert part.size == 3 and part._flat.shape == (3,)
    if SIMULATED:  # the simulator's device arrays are views of NumPy arrays
        assert part._flat is not part._buffer


def test_a_warm_compiled_step_slices_no_device_array(monkeypatch):
    """The prefix of a pooled buffer (an array smaller than its slot) is sliced once per buffer
    and count (the pool hands out a free buffer that has a view of the count asked for), and
    device-to-device copies (the write-back of the updated parameters) do not slice their
    arrays. The H100's profile had 43 slicings a step, tens of microseconds each. From the third
    call on, the steps here slice less than a quarter of what the first did alone (a buffer
    first allocated when the collector frees a step's arrays late is still sliced once per
    count); before, each step sliced as many times as the first. (Here 17 or 44 slicings,
    then none.)"""
    run, step, parameters = mlp("cuda")
    run_cpu, _, parameters_cpu = mlp("cpu")
    flat = CudaArray((3,), np.float32).flat
    device_array_class = type(flat)
    slicings = []
    original = device_array_class.__getitem__

    def counted(self, key):
        if isinstance(key, slice):  # (the simulator's kernels index elements: slices alone)
            caller = sys._getframe(1)
            slicings.append(f"[:{key.stop}] in {caller.f_code.co_name}, line {caller.f_lineno}")
        return original(self, key)

    monkeypatch.setattr(device_array_class, "__getitem__", counted)
    per_call = []
    for _ in range(25):
        before_slices = len(slicings)
        loss, expected = float(run()), float(run_cpu())
        np.testing.assert_allclose(loss, expected, rtol=1e-5)
        per_call.append(len(slicings) - before_slices)
    assert per_call[0] > 0  # the first call makes the views
    assert sum(per_call[2:]) < per_call[0] / 4, (per_call, slicings[-12:])
    for parameter, on_cpu in zip(parameters, parameters_cpu):
        np.testing.assert_allclose(parameter.detach().cpu().numpy(),
                                   on_cpu.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_pooled_buffer_gives_the_same_prefix_view_for_the_same_count():
    first = CudaArray((5,), np.float32)
    first[...] = np.arange(5, dtype=np.float32)
    buffer, view = first._buffer, first._flat
    del first  # its buffer goes back to the pool
    second = CudaArray((5,), np.float32)
    assert second._buffer is buffer and second._flat is view
    third = CudaArray((7,), np.float32)  # the same slot size, another count
    third[...] = np.arange(7, dtype=np.float32)
    assert third._flat.shape == (7,)
    second[...] = np.full(5, 2.0, np.float32)
    copied = second.copy()
    np.testing.assert_array_equal(copied.to_host(), np.full(5, 2.0))
    np.testing.assert_array_equal(third.to_host(), np.arange(7))


@pytest.mark.parametrize("transposed", ["a", "b", "both"])
def test_products_read_transposed_matrices_in_place(transposed):
    rng = np.random.default_rng(0)
    a_data = rng.standard_normal((5, 7)).astype(np.float32)
    b_data = rng.standard_normal((7, 6)).astype(np.float32)
    a_stored = a_data.T.copy() if transposed in ("a", "both") else a_data
    b_stored = b_data.T.copy() if transposed in ("b", "both") else b_data
    a, b = autojit.tensor(a_stored, device="cuda"), autojit.tensor(b_stored, device="cuda")
    a = a.t() if transposed in ("a", "both") else a
    b = b.t() if transposed in ("b", "both") else b
    before = counters.snapshot()
    product = a @ b
    assert counters.difference(before)["launches"] == 1  # no strided copy first
    np.testing.assert_allclose(product.cpu().numpy(), a_data @ b_data, rtol=1e-5, atol=1e-5)
    # A transposed view read after its matrix changed reads the new values.
    with autojit.no_grad():
        (a if transposed == "b" else b).mul_(2)
    np.testing.assert_allclose(a.cpu().numpy() @ b.cpu().numpy(), (a @ b).cpu().numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not SIMULATED, reason="the fake CuPy reads the simulator's arrays")
def test_cublas_reads_transposed_matrices_in_place(monkeypatch):
    from test_cuda import FakeCupy

    from autojit.cuda import matmul

    fake = FakeCupy()
    monkeypatch.setattr(matmul, "_CUPY", [fake])
    rng = np.random.default_rng(1)
    w_data = rng.standard_normal((4, 3)).astype(np.float32)
    x_data = rng.standard_normal((2, 3)).astype(np.float32)
    w, x = autojit.tensor(w_data, device="cuda"), autojit.tensor(x_data, device="cuda")
    before = counters.snapshot()
    np.testing.assert_allclose((x @ w.t()).cpu().numpy(), x_data @ w_data.T, rtol=1e-5)
    assert counters.difference(before)["launches"] == 1 and fake.calls == [
        ((1, 2, 3), (1, 3, 4), (1, 2, 4), np.float32)]
