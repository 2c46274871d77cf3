"""The generated ?gemm (codegen/cpu/gemm/kernel.py): every transposition and dtype against a float64
reference, over shapes that leave partial tiles, panels and k blocks; the BLAS semantics of
alpha and beta; where blas.py uses it; and a compiled training step that runs on it."""

import ctypes

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import jit as cpu
from autojit.codegen.cpu.gemm import blas
from autojit.codegen.cpu.gemm import kernel as gemm_kernel

pytestmark = pytest.mark.skipif(not cpu.has_avx512(), reason="the generated gemm needs AVX-512")

generator = np.random.default_rng(11)
_NO_TRANSPOSE, _TRANSPOSE = 111, 112


def call(dtype, transpose_a, transpose_b, a, b, c, alpha, beta):
    """Call the generated function through ctypes with CBLAS's row-major arguments."""
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    word, pointer = ctypes.c_int64, ctypes.c_void_p
    function = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, word, word,
                                word, scalar, pointer, word, pointer, word, scalar, pointer,
                                word)(gemm_kernel.address(dtype, transpose_a, transpose_b))
    rows, columns = c.shape
    inner = a.shape[0] if transpose_a else a.shape[1]
    size = c.itemsize
    function(101, _TRANSPOSE if transpose_a else _NO_TRANSPOSE,
             _TRANSPOSE if transpose_b else _NO_TRANSPOSE, rows, columns, inner, alpha,
             a.ctypes.data, a.strides[0] // size, b.ctypes.data, b.strides[0] // size, beta,
             c.ctypes.data, c.strides[0] // size)


def matrix(rows, columns, dtype, lead_extra=0):
    """A row-major matrix whose rows lie `lead_extra` elements further apart than its width."""
    whole = generator.standard_normal((rows, columns + lead_extra)).astype(dtype)
    return whole[:, :columns]


# 12-row tiles then 8, 4, 2, 1; panels of 32 (float32) or 16 (float64) columns with a narrow
# last one; k blocks of 256 with a shallow last one; rows split into equal blocks of at most
# 400 (float32) or 200 (float64) rows of a, one shorter than the others (401 rows: 201 and
# 200); inner sizes below one transposed square.
SHAPES = [(1, 1, 1), (16, 1, 24), (27, 5, 33), (12, 257, 32), (37, 300, 70), (128, 256, 256),
          (61, 17, 47), (205, 520, 40), (401, 20, 40)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_products_match_a_float64_reference(dtype, transpose_a, transpose_b):
    tolerance = 2e-5 if dtype == np.float32 else 1e-12
    for rows, inner, columns in SHAPES:
        a = matrix(inner, rows, dtype, 3) if transpose_a else matrix(rows, inner, dtype, 3)
        b = matrix(columns, inner, dtype, 5) if transpose_b else matrix(inner, columns, dtype, 5)
        a_read = a.T if transpose_a else a
        b_read = b.T if transpose_b else b
        exact = a_read.astype(np.float64) @ b_read.astype(np.float64)
        scale = np.abs(a_read).astype(np.float64) @ np.abs(b_read).astype(np.float64)
        for alpha, beta in ((1.0, 0.0), (-0.5, 1.0), (2.0, -3.0)):
            before = matrix(rows, columns, dtype, 7)
            c = before.copy() if beta else matrix(rows, columns, dtype, 7)
            if not beta:
                c[...] = np.nan  # with beta 0, C is not read (BLAS semantics)
            whole = c.base if c.base is not None else c
            padding = whole[:, columns:].copy()
            call(dtype, transpose_a, transpose_b, a, b, c, alpha, beta)
            expected = alpha * exact + beta * before.astype(np.float64)
            error = np.abs(c - expected) / (abs(alpha) * scale + abs(beta * before) + 1)
            assert error.max() < tolerance, (rows, inner, columns, alpha, beta)
            # Nothing is written outside the rows x columns block of C.
            np.testing.assert_array_equal(whole[:, columns:], padding)


def test_the_library_keeps_narrow_and_short_products_and_the_switch_turns_it_off(monkeypatch):
    assert gemm_kernel.address(np.float32, False, False, 128, 256) is not None
    assert gemm_kernel.address(np.float32, False, False, 128, 16) is None
    assert gemm_kernel.address(np.float64, False, False, 128, 16) is not None
    assert gemm_kernel.address(np.float32, False, False, 4, 256) is None
    assert gemm_kernel.address(np.int32, False, False, 128, 256) is None
    monkeypatch.setenv("AUTOJIT_GEMM", "blas")
    assert gemm_kernel.address(np.float32, False, False, 128, 256) is None


def test_blas_records_call_the_generated_function_where_it_applies():
    if not blas.native_gemm(np.dtype(np.float32)):
        pytest.skip("no native workers or 64-bit CBLAS gemm")
    a, b = matrix(64, 32, np.float32), matrix(32, 48, np.float32)
    out = np.empty((64, 48), np.float32)
    (record,) = blas.gemm_records(a, b, out, 1.0, 0.0)
    assert record[0] == gemm_kernel.address(np.float32, False, False, 64, 48)
    narrow = np.empty((64, 8), np.float32)
    (record,) = blas.gemm_records(a, b[:, :8], narrow, 1.0, 0.0)
    assert record[0] == blas._gemm_address(np.dtype(np.float32))
    blas.run_records([blas.gemm_records(a, b, out, 1.0, 0.0)[0]])
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_a_compiled_training_step_on_the_generated_gemm_equals_eager():
    sizes = (40, 72, 36)

    def parameters():
        rng = np.random.default_rng(3)
        return [autojit.tensor(rng.standard_normal(shape).astype(np.float32) * 0.2,
                               requires_grad=True)
                for shape in ((sizes[0], sizes[1]), (sizes[1], sizes[2]))]

    def make_step(weights):
        def step(x):
            for w in weights:
                w.grad = None
            hidden = (x @ weights[0]).tanh()
            loss = ((hidden @ weights[1]) ** 2).mean()
            loss.backward()
            with autojit.no_grad():
                for w in weights:
                    w -= 0.1 * w.grad
            return loss
        return step

    x = autojit.tensor(np.random.default_rng(4).standard_normal((48, sizes[0]))
                       .astype(np.float32))
    eager_weights, compiled_weights = parameters(), parameters()
    eager, compiled = make_step(eager_weights), autojit.compile(make_step(compiled_weights))
    for _ in range(5):  # past the recorded run: the native program runs the last calls
        expected, got = eager(x), compiled(x)
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(),
                                   rtol=2e-5, atol=1e-6)
    if blas.native_gemm(np.dtype(np.float32)):
        assert compiled.executables[0].plan.program, compiled.executables[0].plan.program_refusal
    for mine, theirs in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=2e-5,
                                   atol=1e-6)
