"""Compiled float32 sums and means against their float64 truth, eager NumPy and torch.

A compiled float32 sum keeps float32 partial sums over blocks and adds them into a float64
total (codegen/cpu/render_reduce.py, docs/notes/accurate-numerics.md): full reductions, rows,
columns (accumulated in memory order), broadcast inputs, kernels split over the cores and
generic kernels must all stay within 1e-6 relative of the sum computed in float64. The data
is mostly a constant 0.1, whose rounding errors all have the same sign, so a sum accumulated
naively drifts as far as it can (a mean of 10**7 of them was 7e-4 off).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu.jit import compile_kernel
from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
from autojit.ops.registry import REGISTRY
from autojit.tensor import dtypes

try:
    import torch
except ImportError:  # torch is an optional test reference
    torch = None

TOLERANCE = 1e-6


def relative_error(actual, truth) -> float:
    actual = np.asarray(actual, np.float64)
    return float(np.max(np.abs(actual - truth) / np.abs(truth)))


def check(function, *arrays, dynamic=False, torch_function=None, truth=None):
    """The compiled result of `function` on float32 `arrays`: within TOLERANCE of the float64
    result, and of eager NumPy's and torch's, give or take their own error (compared only
    where `truth` is not given)."""
    tensors = [autojit.tensor(array) for array in arrays]
    compiled = autojit.compile(function, dynamic=dynamic)(*tensors).numpy()
    assert compiled.dtype == np.float32
    if truth is not None:
        assert relative_error(compiled, truth) < TOLERANCE, relative_error(compiled, truth)
        return
    truth = function(*[autojit.tensor(array.astype(np.float64)) for array in arrays]).numpy()
    assert relative_error(compiled, truth) < TOLERANCE, relative_error(compiled, truth)
    # Eager NumPy and torch are not always that close themselves: NumPy's sums over the
    # 200000 rows of a 200000x3 array of 0.1 are 2e-3 off.
    eager = function(*tensors).numpy()
    np.testing.assert_allclose(compiled, eager, rtol=2 * (TOLERANCE + relative_error(eager, truth)))
    if torch is not None:
        theirs = (torch_function or function)(*[torch.from_numpy(a) for a in arrays]).numpy()
        np.testing.assert_allclose(compiled, theirs,
                                   rtol=2 * (TOLERANCE + relative_error(theirs, truth)))


def tenths(*shape):
    return np.full(shape, 0.1, np.float32)


def test_the_mean_of_ten_million_tenths():
    check(lambda x: x.mean(), tenths(10**7))


def test_a_sum_over_a_broadcast_input():
    # 10**8 additions of 2 reading 10**6 elements: the compiled kernel never materializes the
    # expanded input (eager NumPy would, 400 MB).
    check(lambda x: (x.expand(100, 10**6) * 2).sum(), np.ones((1, 10**6), np.float32),
          truth=2e8)


def test_a_mean_squared_error_over_images():
    generator = np.random.default_rng(0)
    a, b = (generator.standard_normal((16, 3, 224, 224), dtype=np.float32) for _ in range(2))
    check(lambda a, b: ((a - b) ** 2).mean(), a, b,
          torch_function=lambda a, b: ((a - b) ** 2).mean())


@pytest.mark.parametrize("shape, dim", [
    ((300, 20000), 1),  # rows: the reduce loop innermost, blocks of REDUCE_BLOCK
    ((200000, 3), 0),  # columns: accumulated in memory order, ROW_BLOCK rows at a time
    ((20000, 1100), 0),  # columns wider than a tile (TILE_WIDTH), the last tile partial
    ((50, 2000, 30), 1),  # a middle axis: the kept loops around the tiles
    ((1000, 7, 300), (0, 2)),  # two reduced axes around a kept one
])
def test_sums_over_dims(shape, dim):
    check(lambda x: x.sum(dim), tenths(*shape))


def test_a_sum_of_values_computed_in_double():
    # float32 pow runs in double: the loop has half as many lanes, each adding more of a
    # block's elements (REDUCE_BLOCK).
    check(lambda x: (x ** 1.5).sum(), tenths(10**6))


def test_a_keepdim_mean_of_a_transposed_input():
    check(lambda x: x.t().mean(0, keepdim=True), tenths(3000, 500))


def test_generic_kernels_read_their_sizes_at_run_time():
    # dynamic=True: the loop extents, and so the block counts, are values loaded at run time.
    check(lambda x: x.sum(), tenths(1_000_003), dynamic=True)
    check(lambda x: x.sum(0), tenths(100_003, 3), dynamic=True)
    check(lambda x: x.sum(1), tenths(3, 100_003), dynamic=True)


def test_kernels_split_over_the_cores():
    from autojit.codegen.cpu import workers

    if workers.usable_cores() < 2:
        pytest.skip("one core: kernels are never split")
    x = autojit.tensor(tenths(4096, 1024))
    compiled = autojit.compile(lambda x: ((x * 3).sum(), (x * 3).sum(0), (x * 3).sum(1)))
    results = compiled(x)
    assert any(getattr(step, "split", None) is not None
               for step in compiled.executables[0].plan.steps)
    for result, axis in zip(results, (None, 0, 1)):
        truth = (tenths(4096, 1024).astype(np.float64) * 3).sum(axis)
        assert relative_error(result.numpy(), truth) < TOLERANCE


def test_a_fused_sum_with_an_elementwise_output():
    # The fused elementwise benchmark's kernel: a stored gradient beside the sum.
    generator = np.random.default_rng(1)
    data = generator.standard_normal(1 << 20).astype(np.float32)

    def function(x):
        y = (x.tanh() * x.sigmoid() + 0.5 * x * x).sum()
        return y, autojit.autograd.grad(y, x)[0]

    x = autojit.tensor(data, requires_grad=True)
    value, gradient = autojit.compile(function)(x)
    wide = data.astype(np.float64)
    truth = (np.tanh(wide) / (1 + np.exp(-wide)) + 0.5 * wide * wide).sum()
    assert relative_error(value.detach().numpy(), truth) < TOLERANCE
    eager_gradient = function(x)[1]
    np.testing.assert_allclose(gradient.detach().numpy(), eager_gradient.detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_other_reductions_keep_their_semantics():
    """Integer sums wrap as NumPy's do, float64 sums stay float64, and max, min and prod of
    float32 are unchanged."""
    generator = np.random.default_rng(2)
    ints = generator.integers(2**30, 2**31 - 1, (5000, 40)).astype(np.int32)
    compiled = autojit.compile(lambda x: (x.sum(), x.sum(0), x.sum(1)))(autojit.tensor(ints))
    for result, axis in zip(compiled, (None, 0, 1)):
        expected = ints.sum(axis, dtype=np.int64)  # torch's sum of int32 is int64
        np.testing.assert_array_equal(result.numpy(), expected)
    doubles = generator.random((3000, 300))
    results = autojit.compile(lambda x: (x.sum(), x.sum(0)))(autojit.tensor(doubles))
    np.testing.assert_allclose(results[0].numpy(), doubles.sum(), rtol=1e-13)
    np.testing.assert_allclose(results[1].numpy(), doubles.sum(0), rtol=1e-13)
    floats = generator.random((300, 200), dtype=np.float32) + 0.5
    results = autojit.compile(lambda x: (x.amax(1), x.amin(0), x.prod(1)))(
        autojit.tensor(floats))
    np.testing.assert_array_equal(results[0].numpy(), floats.max(1))
    np.testing.assert_array_equal(results[1].numpy(), floats.min(0))
    np.testing.assert_allclose(results[2].numpy(), floats.prod(1), rtol=1e-5)


def float_widths(text: str) -> set:
    return {int(width) for width in re.findall(r"<(\d+) x float>", text)}


def test_a_float32_sum_keeps_the_vector_width_of_its_elementwise_kernel():
    """The float64 totals are added once per block: a float64 value inside the loop would
    make the vectorizer use as many lanes as a double vector holds (half as many), which
    halved the speed of the fused elementwise benchmark."""
    x = Operand("input", 0)
    steps = [Step(REGISTRY["tanh"], (x,), {}, dtypes.float32, dtypes.float32),
             Step(REGISTRY["mul"], (Operand("step", 0), x), {}, dtypes.float32, dtypes.float32)]
    inputs = [KernelInput(dtypes.float32, (1,))]
    stored = compile_kernel(Kernel("tanh_mul", (1 << 16,), inputs, steps,
                                   [KernelOutput(1, dtypes.float32)]))
    summed = compile_kernel(Kernel("tanh_mul_sum", (1 << 16,), inputs, steps,
                                   [KernelOutput(1, dtypes.float32),
                                    KernelOutput(1, dtypes.float32, "sum")], (0,)))
    assert max(float_widths(summed.optimized_ir)) == max(float_widths(stored.optimized_ir))


@pytest.mark.parametrize("shape, dim", [((4_000_000, 2), 0), ((200_000, 3), 0),
                                        ((2000, 8, 64), (0, 1)), ((64, 3000, 2), 1)])
def test_eager_sums_over_outer_dims_accumulate_in_double(shape, dim):
    # NumPy adds the rows of a non-innermost dim one after another in float32: a sum over
    # 4e6 rows of 0.1 was 3.9e-2 off eagerly. Past 1024 such rows it accumulates in float64.
    data = np.full(shape, 0.1, dtype=np.float32)
    truth = data.astype(np.float64).sum(axis=dim)
    x = autojit.tensor(data)
    assert relative_error(x.sum(dim).numpy(), truth) < TOLERANCE
    count = data.size // truth.size
    assert relative_error(x.mean(dim).numpy(), truth / count) < TOLERANCE
    assert x.sum(dim).dtype is autojit.float32
