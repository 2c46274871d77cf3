"""b packed once for the products that share it (codegen/cpu/gemm/prepacked.py): the pack
function and the ?gemm reading its copy give the per-call packing's bits, for every
transposition and dtype, over shapes that leave partial panels and k blocks; a compiled
recurrent step packs each shared weight once and gives the bits it gives without; a weight
written in place between its products is not packed across the write."""

import ctypes

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import jit as cpu
from autojit.codegen.cpu import workers
from autojit.codegen.cpu.gemm import kernel as gemm_kernel
from autojit.codegen.cpu.gemm import prepacked as prepacked_gemm

pytestmark = pytest.mark.skipif(not cpu.has_avx512() or workers.shared() is None,
                                reason="the generated gemm needs AVX-512 and native workers")

generator = np.random.default_rng(23)
_NO_TRANSPOSE, _TRANSPOSE = 111, 112


def function(address: int, dtype):
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    word, pointer = ctypes.c_int64, ctypes.c_void_p
    return ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, word, word,
                            word, scalar, pointer, word, pointer, word, scalar, pointer,
                            word)(address)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_the_packed_copy_gives_the_per_call_packings_bits(dtype, transpose_a, transpose_b):
    # Depths past one k block and not a multiple of the lanes, widths past and short of a
    # panel: the layout's padded blocks and masked columns.
    for rows, inner, columns in ((32, 256, 1024), (17, 300, 45), (40, 513, 100), (64, 7, 33)):
        a = generator.standard_normal((inner, rows) if transpose_a else (rows, inner))
        b = generator.standard_normal((columns, inner) if transpose_b else (inner, columns))
        a, b = a.astype(dtype), b.astype(dtype)
        per_call = gemm_kernel.address(dtype, transpose_a, transpose_b, rows, columns)
        pack, packed, lanes, panel = gemm_kernel.prepacked_functions(
            dtype, transpose_a, transpose_b, per_call)
        copy = prepacked_gemm._aligned_bytes(
            prepacked_gemm.packed_elements(inner, columns, lanes, panel) * a.itemsize)
        flags = (_TRANSPOSE if transpose_a else _NO_TRANSPOSE,
                 _TRANSPOSE if transpose_b else _NO_TRANSPOSE)
        function(pack, dtype)(101, _NO_TRANSPOSE, flags[1], 0, columns, inner, 1.0, None, 0,
                              b.ctypes.data, b.shape[1], 0.0, copy.ctypes.data, 0)
        results = []
        for address, source in ((per_call, b.ctypes.data), (packed, copy.ctypes.data)):
            c = np.full((rows, columns), 0.5, dtype)
            function(address, dtype)(101, *flags, rows, columns, inner, 1.5, a.ctypes.data,
                                     a.shape[1], source, b.shape[1], 0.25, c.ctypes.data,
                                     columns)
            results.append(c)
        assert results[0].tobytes() == results[1].tobytes(), (rows, inner, columns)
        expected = 1.5 * ((a.T if transpose_a else a).astype(np.float64) @
                          (b.T if transpose_b else b)) + 0.125
        np.testing.assert_allclose(results[1], expected, rtol=1e-4, atol=1e-3)


def recurrent_step(weights):
    """A small recurrent model's training step: the hidden weight's products at every time
    step forward, and its transpose's backward, share their b."""
    w_in, w_hidden = weights

    def step(x):
        w_in.grad = None
        w_hidden.grad = None
        h = autojit.zeros(x.shape[1], w_hidden.shape[0])
        for t in range(x.shape[0]):
            h = (x[t] @ w_in + h @ w_hidden.T).tanh()
        h.sum().backward()
        return h, w_in.grad, w_hidden.grad
    return step


def program_of(compiled):
    (executable,) = compiled.executables
    return executable.plan.program


def test_a_recurrent_step_packs_its_weights_once_with_the_same_bits(monkeypatch):
    x = autojit.tensor(generator.standard_normal((6, 32, 48)).astype(np.float32))
    values = [generator.standard_normal(shape).astype(np.float32) * 0.1
              for shape in ((48, 96), (96, 96))]
    results = {}
    for allowed in (prepacked_gemm._MOST_BYTES, 0):  # 0: no packed copy fits
        monkeypatch.setattr(prepacked_gemm, "_MOST_BYTES", allowed)
        weights = [autojit.tensor(value, requires_grad=True) for value in values]
        compiled = autojit.compile(recurrent_step(weights))
        for _ in range(3):
            got = compiled(x)
        assert program_of(compiled), "the step runs as one native program"
        results[allowed] = (program_of(compiled).packed_operands,
                            [t.detach().numpy() for t in got])
    (packed, with_copies), (none, without) = results.values()
    # The hidden weight forward (h @ W^T) and backward (g @ W); the input weight's products
    # read the time steps' inputs, each once.
    assert packed >= 2 and none == 0
    for mine, theirs in zip(with_copies, without):
        assert mine.tobytes() == theirs.tobytes()
    weights = [autojit.tensor(value, requires_grad=True) for value in values]
    eager = recurrent_step(weights)(x)
    for mine, theirs in zip(with_copies, eager):
        np.testing.assert_allclose(mine, theirs.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_weight_written_in_place_between_its_products_is_not_packed_across_the_write():
    w = autojit.tensor(generator.standard_normal((64, 96)).astype(np.float32))
    x = autojit.tensor(generator.standard_normal((32, 64)).astype(np.float32))

    def step(x):
        first = x @ w
        w.mul_(0.5)  # stored into w's own array by a kernel between the two products
        return first, x @ w, (x * 2) @ w

    compiled = autojit.compile(step)
    reference = w.numpy().copy()
    for _ in range(3):
        got = compiled(x)
        expected = [x.numpy() @ reference, x.numpy() @ (reference * 0.5),
                    (x.numpy() * 2) @ (reference * 0.5)]
        reference *= 0.5
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine.numpy(), theirs, rtol=1e-5, atol=1e-5)
    program = program_of(compiled)
    assert program and program._allowed, "the update is stored in place by the program"


def test_fewer_than_three_calls_sharing_b_pack_it_per_call():
    """A product split over the cores (its parts pack b side by side) and two products of
    one weight keep the per-call packing, which costs them less (prepacked_gemm.py)."""
    w = autojit.tensor(generator.standard_normal((256, 256)).astype(np.float32))
    x = autojit.tensor(generator.standard_normal((512, 256)).astype(np.float32))
    counts = []
    for function in (lambda x: x @ w, lambda x: ((x @ w).tanh() @ w).tanh(),
                     lambda x: (((x @ w).tanh() @ w).tanh() @ w).tanh()):
        compiled = autojit.compile(function)
        for _ in range(3):
            got = compiled(x)
        assert program_of(compiled)
        counts.append(program_of(compiled).packed_operands)
        np.testing.assert_allclose(got.numpy(), function(x).numpy(), rtol=1e-4, atol=1e-4)
    assert counts == [0, 0, 1]  # the last, three calls: packed once
