"""Compiles on the compile threads (codegen/cpu/compile_threads.py, jit.parallel_compiles): the
same object code as on the caller's thread, from several threads at once; plans whose kernels
compiled beside the schedule give eager's results; errors and settings."""

import threading

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import compile_threads, native_loader
from autojit.codegen.cpu import jit as cpu
from autojit.codegen.cpu.gemm import kernel as gemm_kernel

_LOOP = """define i32 @{name}(ptr noalias %a, ptr noalias %b, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %from = getelementptr float, ptr %a, i64 %i
  %to = getelementptr float, ptr %b, i64 %i
  %x = load float, ptr %from
  %y = fmul float %x, {factor}
  store float %y, ptr %to
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret i32 0
}}
"""


def _text(number: int) -> str:
    return _LOOP.format(name=f"scale_{number}", factor=f"{number + 2}.0")


def test_threads_make_the_callers_object_code():
    state = cpu.backend()
    texts = [_text(number) for number in range(8)]
    alone = [compile_threads.object_code(state, text, True, False)[0] for text in texts]
    results: dict = {}

    def compile_some(numbers):
        for number in numbers:
            results[number] = compile_threads.object_code(state, texts[number], True, False)[0]

    threads = [threading.Thread(target=compile_some, args=(range(start, 8, 3),))
               for start in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[number] for number in range(8)] == alone


def test_pool_compiles_runnable_code():
    if not native_loader.available():
        pytest.skip("the native loader runs on Linux x86-64")
    state = cpu.backend()
    futures = [compile_threads.submit(compile_threads.object_code, state, _text(number), True,
                                      number % 2 == 1) for number in range(4)]
    if futures[0] is None:
        pytest.skip("no compile threads (AUTOJIT_COMPILE_THREADS=0)")
    import ctypes

    signature = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int64)
    data = np.arange(37, dtype=np.float32)
    for number, future in enumerate(futures):
        loaded = native_loader.load(future.result()[0])
        out = np.zeros_like(data)
        signature(loaded.address(f"scale_{number}"))(data.ctypes.data, out.ctypes.data,
                                                      data.size)
        np.testing.assert_array_equal(out, data * (number + 2))


def test_a_parse_error_comes_back_from_the_thread():
    with pytest.raises(RuntimeError, match="parsing error"):
        compile_threads.object_code(cpu.backend(), "define i32 @broken( {", True, False)


@pytest.mark.parametrize("threads", ["0", "2"])
def test_a_plan_compiled_beside_its_schedule_runs_as_eager(monkeypatch, threads):
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", threads)
    monkeypatch.setenv("AUTOJIT_DISK_CACHE", "0")
    cpu.clear_cache()
    generator = np.random.default_rng(3)
    weights = autojit.tensor(generator.standard_normal((48, 32)).astype(np.float32),
                             requires_grad=True)
    x = autojit.tensor(generator.standard_normal((64, 48)).astype(np.float32))

    def step(x):
        hidden = (x @ weights).tanh()
        loss = (hidden.sigmoid() * hidden).sum() + hidden.exp().mean()
        loss.backward()
        return loss.detach()

    compiled = autojit.compile(step)
    weights.grad = None
    eager_loss = step(x)
    eager_grad = weights.grad.clone()
    for _ in range(3):  # the first run, the recorded one, the native program
        weights.grad = None
        loss = compiled(x)
        np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-5)
        np.testing.assert_allclose(weights.grad.numpy(), eager_grad.numpy(), rtol=1e-4,
                                   atol=1e-6)
    assert cpu.STATISTICS["compiled"] > 0


def test_kernels_from_threads_are_whole_after_the_block(monkeypatch):
    """Each kernel a parallel_compiles block hands out has its code when the block ends."""
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "2")
    monkeypatch.setenv("AUTOJIT_DISK_CACHE", "0")
    cpu.clear_cache()
    from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
    from autojit.ops.elementwise import EXP
    from autojit.tensor import dtypes

    kernels = [Kernel(name=f"k{extent}", shape=(extent,),
                      inputs=[KernelInput(dtypes.float32, (1,))],
                      steps=[Step(EXP, (Operand("input", 0),), {}, None, dtypes.float32)],
                      outputs=[KernelOutput(0, dtypes.float32)])
               for extent in (5, 17, 300)]
    with cpu.parallel_compiles():
        compiled = [cpu.compile_kernel(kernel) for kernel in kernels]
    for kernel, code in zip(kernels, compiled):
        assert code.source == "compiled" and code.compile_seconds > 0
        data = np.linspace(-1, 1, kernel.shape[0], dtype=np.float32)
        out = np.empty_like(data)
        code([data], [out])
        np.testing.assert_allclose(out, np.exp(data), rtol=1e-6)


def test_thread_count_setting(monkeypatch):
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "0")
    assert compile_threads.thread_count() == 0
    assert compile_threads.submit(print) is None
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "9")
    assert compile_threads.thread_count() == 4
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "two")
    with pytest.raises(ValueError, match="AUTOJIT_COMPILE_THREADS must be a whole number"):
        compile_threads.thread_count()
    monkeypatch.delenv("AUTOJIT_COMPILE_THREADS")
    assert 1 <= compile_threads.thread_count() <= 4


@pytest.mark.skipif(not cpu.has_avx512(), reason="the generated gemm needs AVX-512")
def test_gemm_module_holds_the_four_transpositions():
    text, symbols = gemm_kernel.render_module(np.float64)
    transpositions = [(False, False), (False, True), (True, False), (True, True)]
    # Besides them, the two reading b packed beforehand and the two packing it.
    assert set(symbols) == {*transpositions, (False, "packed"), (True, "packed"),
                            ("pack", False), ("pack", True)}
    # The tiles are shared: defined once, for every ?gemm of the module.
    assert text.count("_tile12(") == 1 + 6
    gemm_kernel.prepare(np.float64)
    addresses = {key: gemm_kernel.address(np.float64, *key, 64, 64) for key in transpositions}
    assert len(set(addresses.values())) == 4 and all(addresses.values())


@pytest.mark.skipif(not cpu.has_avx512(), reason="the generated gemm needs AVX-512")
def test_no_gemm_compile_outlives_the_compile_that_started_it(monkeypatch):
    """The schedule starts the gemm module's compile when it meets a product; the compiled
    call returns only once it is done (so no compile thread is busy when a program forks)."""
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "2")
    monkeypatch.setattr(gemm_kernel, "_state", {})
    _compiled_product_then_done(lambda a, b: (a @ b).tanh(), np.tanh, 5)


def _compiled_product_then_done(function, reference, seed: int) -> None:
    """Compile `function(a, b)` of a 64x48 and a 48x40 float64 product, compare it with
    `reference(a @ b)`, and check the gemm module's compile was done when the call returned."""
    generator = np.random.default_rng(seed)
    a = autojit.tensor(generator.standard_normal((64, 48)))
    b = autojit.tensor(generator.standard_normal((48, 40)))
    compiled = autojit.compile(function)
    np.testing.assert_allclose(compiled(a, b).numpy(), reference(a.numpy() @ b.numpy()),
                               rtol=1e-12)
    found = gemm_kernel._state[np.dtype(np.float64)]
    assert isinstance(found, dict) or found.done()


@pytest.mark.skipif(not cpu.has_avx512(), reason="the generated gemm needs AVX-512")
def test_the_gemm_compile_starts_before_the_passes(monkeypatch):
    """The CPU backend's prepare (stages.compile_graph) starts the gemm module for the
    graph's products before the passes run, so that it compiles beside them; the schedule
    still waits for it before the compiled call returns."""
    from autojit.compiler import stages

    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "2")
    monkeypatch.setattr(gemm_kernel, "_state", {})
    started = []
    optimize = stages.optimize_cached

    def noting(graph):
        started.append(np.dtype(np.float64) in gemm_kernel._state)
        return optimize(graph)

    monkeypatch.setattr(stages, "optimize_cached", noting)
    _compiled_product_then_done(lambda a, b: (a @ b).sin(), np.sin, 6)
    assert started == [True]


def test_products_too_small_for_the_gemm_start_no_compile(monkeypatch):
    monkeypatch.setattr(gemm_kernel, "_state", {})
    gemm_kernel.prepare(np.float32, 4, 256)  # fewer rows than a tile block needs
    gemm_kernel.prepare(np.float32, 256, 8)  # narrower than a vector and a half
    assert gemm_kernel._state == {}


def test_functions_compiled_on_two_threads_at_once(monkeypatch):
    """Two user threads compile at once: their plans' kernels share the compile threads and
    the kernel cache, and each gets eager's results."""
    monkeypatch.setenv("AUTOJIT_COMPILE_THREADS", "2")
    monkeypatch.setenv("AUTOJIT_DISK_CACHE", "0")
    cpu.clear_cache()
    generator = np.random.default_rng(9)
    inputs = [autojit.tensor(generator.standard_normal((96, 33)).astype(np.float32))
              for _ in range(2)]

    def function(x):
        return ((x.exp() * 0.5).tanh() + x.sin().cos()).sum(dim=1).sigmoid()

    results: dict = {}
    errors: list = []

    def run(number):
        try:
            compiled = autojit.compile(function)
            results[number] = [compiled(inputs[number]).numpy() for _ in range(3)]
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for number in range(2):
        expected = function(inputs[number]).numpy()
        for result in results[number]:
            np.testing.assert_allclose(result, expected, rtol=1e-5)


_ENGINE_PROGRAM = """
import numpy as np
import autojit
from autojit.codegen.cpu import jit, native_loader
native_loader.available = lambda: False  # every module through llvmlite's engine
generator = np.random.default_rng(0)
weight = autojit.tensor(generator.standard_normal((64, 48)).astype(np.float32),
                        requires_grad=True)
x = autojit.tensor(generator.standard_normal((128, 64)).astype(np.float32))
def step(x):
    weight.grad = None
    loss = (x @ weight).tanh().sum()
    loss.backward()
    return loss.detach(), weight.grad
compiled = autojit.compile(step)
for _ in range(3):
    loss, grad = compiled(x)
weight.grad = None
eager_loss, eager_grad = step(x)
assert np.allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-4)
assert np.allclose(grad.numpy(), eager_grad.numpy(), rtol=1e-4, atol=1e-5)
assert jit.STATISTICS["compiled"] > 0 and compiled.executables[0].plan.program
print("ok")
"""


def test_without_the_native_loader_modules_go_through_the_engine():
    """Where native_loader.py cannot load object files (another platform), kernels, the native
    helpers and the gemm compile on the calling thread into llvmlite's engine."""
    import os
    import subprocess
    import sys

    completed = subprocess.run([sys.executable, "-c", _ENGINE_PROGRAM], capture_output=True,
                               text=True, timeout=300,
                               env={**os.environ, "AUTOJIT_DISK_CACHE": "0"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "ok"


_SLOTTED = """define i32 @summed(ptr noalias %a, ptr noalias %b, i64 %n) {
entry:
  %total = alloca float
  store float 0.0, ptr %total
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %from = getelementptr float, ptr %a, i64 %i
  %x = load float, ptr %from
  %old = load float, ptr %total
  %new = fadd float %old, %x
  store float %new, ptr %total
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  %sum = load float, ptr %total
  store float %sum, ptr %b
  ret i32 0
}
"""


def test_the_light_pipeline_makes_stack_slots_registers():
    """compile_threads.LIGHT (the channel convolutions' modules): a value carried in a stack
    slot, as ir_text.py's drivers carry theirs, becomes a register, and the code computes
    what it did as written, on a compile thread and through helper_modules alike."""
    state = cpu.backend()
    module = state.parse(_SLOTTED)
    state.optimize(module, compile_threads.LIGHT)
    assert "alloca" not in str(module) and "phi float" in str(module)
    light, _ = compile_threads.object_code(state, _SLOTTED, compile_threads.LIGHT, False)
    written, _ = compile_threads.object_code(state, _SLOTTED, False, False)
    assert light != written
    from autojit.codegen.cpu import helper_modules

    address, = helper_modules.compile_module(_SLOTTED, ["summed"], ("light test", _SLOTTED),
                                             compile_threads.LIGHT)
    import ctypes

    data = np.arange(1, 11, dtype=np.float32)
    out = np.zeros(1, np.float32)
    ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        address)(data.ctypes.data, out.ctypes.data, data.size)
    assert out[0] == 55.0
