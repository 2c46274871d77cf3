"""Small fused kernels of fixed sizes share their compiled code across sizes (codegen/cpu/jit.py's
shares_small_code): one LLVM compile serves every small size of a loop structure, the values
are the same as eager's at each size, and the code is kept apart from the generic kernels of
dynamic shapes and from the kernels of large tensors."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import jit
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


def test_a_large_kernel_keeps_code_made_for_its_sizes(fresh_kernels):
    x = autojit.tensor(np.linspace(-2, 2, 64 * 64, dtype=np.float32).reshape(64, 64))
    compiled = autojit.compile(_step)
    np.testing.assert_allclose(compiled(x).numpy(), _step(x).numpy(), rtol=1e-4, atol=1e-4)
    kernels = _kernels(compiled)
    assert kernels and not any(isinstance(kernel, jit.SizedKernel) for kernel in kernels)
    assert not jit.quick_codegen(kernels[0].kernel)


def test_small_code_is_kept_apart_from_the_generic_kernels_of_dynamic_shapes():
    small = Kernel(name="k0_exp", shape=(4,), generic=True, small=True)
    dynamic = Kernel(name="k0_exp", shape=(4,), generic=True)
    assert small.structural_key() != dynamic.structural_key()
    assert jit.quick_codegen(small) and not jit.quick_codegen(dynamic)
    assert jit._optimization(small) == jit.compile_threads.LIGHT
    assert jit._optimization(dynamic) is True


def test_without_sharing_each_size_compiles_its_own_code(fresh_kernels, monkeypatch):
    monkeypatch.setattr(jit, "SHARE_SMALL_CODE", False)
    codes = []
    for shape in [(3, 4), (5, 7)]:
        compiled = autojit.compile(_step)
        compiled(autojit.ones(*shape))
        codes.append(_code(_kernels(compiled)[0]))
    assert not isinstance(codes[0], jit.SizedKernel) and codes[0] is not codes[1]
