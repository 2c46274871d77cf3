"""Fused kernels of fixed sizes share their compiled code across sizes (codegen/cpu/jit.py's
shares_small_code and shares_large_code): one LLVM compile serves every small size of a loop
structure, and every large size whose innermost loop is long; the values are the same as eager's
at each size; small code is kept apart from the generic kernels of dynamic shapes; a large kernel
with a short innermost loop keeps code made for its sizes; and a shared kernel split over the
cores still runs in the plan's native program."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import jit, workers
from autojit.codegen.kernel import Kernel


def _kernels(compiled) -> list:
    return [step.compiled for step in compiled.executables[0].plan.steps
            if hasattr(step, "compiled")]


def _code(kernel):
    return kernel.compiled if isinstance(kernel, jit.SizedKernel) else kernel


@pytest.fixture
def fresh_kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOJIT_CACHE_DIR", str(tmp_path))  # nothing found on disk
    saved = dict(jit._CACHE)
    jit._CACHE.clear()
    yield
    jit._CACHE.clear()
    jit._CACHE.update(saved)


def _step(x):
    return (x.tanh() * 3 - x).sum(dim=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_sizes_share_one_compiled_code_and_give_eagers_values(fresh_kernels, dtype):
    rng = np.random.default_rng(0)
    codes = []
    before = jit.STATISTICS["compiled"]
    for shape in [(3, 4), (5, 7), (2, 9), (16, 2)]:
        x = autojit.tensor(rng.standard_normal(shape).astype(dtype))
        compiled = autojit.compile(_step)
        np.testing.assert_allclose(compiled(x).numpy(), _step(x).numpy(),
                                   rtol=1e-6 if dtype == np.float32 else 1e-14)
        kernels = _kernels(compiled)
        assert len(kernels) == 1 and isinstance(kernels[0], jit.SizedKernel)
        assert kernels[0].kernel.small and kernels[0].kernel.generic
        codes.append(_code(kernels[0]))
    assert all(code is codes[0] for code in codes)
    assert jit.STATISTICS["compiled"] - before == 1  # one LLVM compile for the four sizes


def _scaled(x, w):
    return (x * w).tanh() + x


def test_a_large_kernel_with_a_short_inner_loop_keeps_code_made_for_its_sizes(fresh_kernels):
    # (512, 4) scaled by a column: the innermost loop runs 4 times, under the 512 rows.
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal((512, 4)).astype(np.float32))
    w = autojit.tensor(rng.standard_normal((512, 1)).astype(np.float32))
    compiled = autojit.compile(_scaled)
    np.testing.assert_allclose(compiled(x, w).numpy(), _scaled(x, w).numpy(), rtol=1e-6,
                               atol=1e-6)
    kernels = _kernels(compiled)
    assert kernels and not any(isinstance(kernel, jit.SizedKernel) for kernel in kernels)
    assert not jit.quick_codegen(kernels[0].kernel)


def test_large_kernels_with_a_long_inner_loop_share_code_made_through_o3(fresh_kernels,
                                                                        monkeypatch):
    rng = np.random.default_rng(2)
    arguments, results, codes = [], [], []
    before = jit.STATISTICS["compiled"]
    for rows, columns in [(64, 64), (48, 256), (200, 96)]:
        x = autojit.tensor(rng.standard_normal((rows, columns)).astype(np.float32))
        w = autojit.tensor(rng.standard_normal((1, columns)).astype(np.float32))
        compiled = autojit.compile(_scaled)
        results.append(compiled(x, w).numpy())
        np.testing.assert_allclose(results[-1], _scaled(x, w).numpy(), rtol=1e-6, atol=1e-6)
        (kernel,) = _kernels(compiled)
        assert isinstance(kernel, jit.SizedKernel)
        assert kernel.kernel.generic and not kernel.kernel.small
        assert jit._optimization(kernel.kernel) is True and not jit.quick_codegen(kernel.kernel)
        codes.append(_code(kernel))
        arguments.append((x, w))
    assert all(code is codes[0] for code in codes)
    # One LLVM compile for the three sizes (and the blocks of a kernel split over the cores)
    assert jit.STATISTICS["compiled"] - before == 1
    monkeypatch.setattr(jit, "SHARED_INNER_EXTENT", None)
    for (x, w), result in zip(arguments, results):  # the bits of code made for the sizes
        fixed = autojit.compile(_scaled)
        np.testing.assert_array_equal(fixed(x, w).numpy(), result)
        assert not isinstance(_kernels(fixed)[0], jit.SizedKernel)


def _row_sums(x):
    return (x * x - x).sum(dim=1)


@pytest.mark.parametrize("function", [_step, _row_sums])  # column sums, then row sums
def test_shared_reductions_give_eagers_values(fresh_kernels, function):
    rng = np.random.default_rng(3)
    for shape in [(64, 96), (300, 80), (30, 200)]:
        x = autojit.tensor(rng.standard_normal(shape))  # float64
        compiled = autojit.compile(function)
        np.testing.assert_allclose(compiled(x).numpy(), function(x).numpy(), rtol=1e-13,
                                   atol=1e-13)
        assert all(isinstance(kernel, jit.SizedKernel) for kernel in _kernels(compiled))


@pytest.mark.skipif(workers.shared() is None or workers.cores_in_use() < 2,
                    reason="a kernel splits over two cores' native workers")
def test_a_shared_kernel_split_over_the_cores_runs_in_the_native_program(fresh_kernels):
    # Each part's pointer table names the sizes its shared code reads: the program keeps them
    # (parallel.SplitKernel.kept_arrays), else it refused and the plan ran its Python loop.
    compiled = autojit.compile(lambda x: x.tanh() * 2 + 1)
    x = autojit.tensor(np.linspace(-3, 3, 512 * 1024, dtype=np.float32).reshape(512, 1024))
    for _ in range(3):
        result = compiled(x)
    (executable,) = compiled.executables
    plan = executable.plan
    (step,) = [step for step in plan.steps if getattr(step, "split", None) is not None]
    assert isinstance(step.split.compiled, jit.SizedKernel)
    assert plan.program, plan.program_refusal
    np.testing.assert_allclose(result.numpy(), (x.tanh() * 2 + 1).numpy(), rtol=1e-6,
                               atol=1e-6)


def test_small_code_is_kept_apart_from_the_generic_kernels_of_dynamic_shapes():
    small = Kernel(name="k0_exp", shape=(4,), generic=True, small=True)
    dynamic = Kernel(name="k0_exp", shape=(4,), generic=True)
    assert small.structural_key() != dynamic.structural_key()
    assert jit.quick_codegen(small) and not jit.quick_codegen(dynamic)
    assert jit._optimization(small) == jit.compile_threads.LIGHT
    assert jit._optimization(dynamic) is True


@pytest.mark.parametrize("switch, shapes", [("SHARE_SMALL_CODE", [(3, 4), (5, 7)]),
                                            ("SHARED_INNER_EXTENT", [(64, 64), (80, 96)])])
def test_without_sharing_each_size_compiles_its_own_code(fresh_kernels, monkeypatch, switch,
                                                         shapes):
    monkeypatch.setattr(jit, switch, False if switch == "SHARE_SMALL_CODE" else None)
    codes = []
    for shape in shapes:
        compiled = autojit.compile(_step)
        compiled(autojit.ones(*shape))
        codes.append(_code(_kernels(compiled)[0]))
    assert not isinstance(codes[0], jit.SizedKernel) and codes[0] is not codes[1]
