"""Views in compiled plans: a kernel reads a slice of an array through strides and the element
it starts at (registry.Layout.start), and a reshape of a view where the memory allows one
without a copy, as NumPy's reshape finds it. Each case is checked against eager, for the nodes
left to NumPy, and for the native program the plan runs once it is steady.
"""

from __future__ import annotations

import numpy as np

import autojit
from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
from autojit.ops import elementwise as ew
from autojit.ops.layout.folds import fold_reshape
from autojit.tensor import dtypes


def run(fn, *arrays, calls=4):
    compiled = autojit.compile(fn)
    for call in range(calls):
        inputs = [autojit.tensor(array + call) for array in arrays]
        want, got = fn(*inputs), compiled(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for expected, actual in zip(want, got, strict=True):
            np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    return compiled.executables[-1].plan


def arrays(*shapes):
    generator = np.random.default_rng(len(shapes))
    return [generator.standard_normal(shape).astype(np.float32) for shape in shapes]


def numpy_nodes(plan) -> list:
    return [line for line in plan.describe().splitlines() if ": node " in line]


def test_the_chunks_of_a_gate_matrix_are_read_by_one_kernel_where_they_lie():
    def cell(gates, c):
        i, f, g, o = gates.chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c

    plan = run(cell, *arrays((8, 64), (8, 16)))
    assert numpy_nodes(plan) == [], plan.describe()
    assert plan.kernel_count == 1
    kernel = next(step.kernel for step in plan.steps if hasattr(step, "kernel"))
    assert sorted(entry.offset for entry in kernel.inputs) == [0, 0, 16, 32, 48]
    assert plan.program, plan.program_refusal


def test_strided_slices_of_views_fold_into_strides():
    def fn(x):
        every_other = x[:, 1::2]  # a step: strides of 2 from the second column
        rows = x.t()[2:5]  # a slice of a transpose
        return every_other.exp() * 2, rows + 1

    plan = run(fn, *arrays((6, 8)))
    assert numpy_nodes(plan) == [], plan.describe()


def test_a_slice_of_a_time_major_sequence_feeds_a_kernel_and_a_product():
    def fn(x, w):
        h = x[:, 3]  # one time step of a batch-first sequence: rows of stride 7 * 5
        return (h @ w).tanh(), (x[:, 2] * h).sum(-1)

    plan = run(fn, *arrays((4, 7, 5), (5, 3)))
    # The product reads the slice as a NumPy view (gemm takes its row stride), which the
    # native program repeats as it is; the kernel reads it through strides.
    assert plan.program, plan.program_refusal


def test_a_reshape_of_a_row_slice_is_a_view_and_one_of_a_transpose_is_not():
    assert fold_reshape((3, 4), (4, 1), (12,), {}) == (1,)
    # rows 2 to 4 of a [6, 4] array of strides (4, 1): contiguous, so a flat view
    assert fold_reshape((3, 4), (4, 1), (2, 6), {}) == (6, 1)
    # every other row: the rows stay apart, the columns merge with nothing
    assert fold_reshape((3, 4), (8, 1), (3, 2, 2), {}) == (8, 2, 1)
    assert fold_reshape((3, 4), (8, 1), (12,), {}) is None
    # a transpose does not flatten
    assert fold_reshape((4, 3), (1, 4), (12,), {}) is None
    # extents of 1 carry no stride
    assert fold_reshape((5, 1, 4), (28, 4, 1), (5, 4), {}) == (28, 1)

    def fn(x):
        return x[2:5].reshape(-1).exp(), x[:, 1:3].reshape(-1) * 3, x.t()[1:3].reshape(-1) + 1

    run(fn, *arrays((6, 4)))


def test_a_kernel_input_read_from_inside_its_array_has_its_own_compiled_code():
    def kernel(offset):
        return Kernel("k", (2, 2), [KernelInput(dtypes.float32, (4, 1), offset)],
                      [Step(ew.NEG, (Operand("input", 0),), {}, dtypes.float32,
                            dtypes.float32)], [KernelOutput(0, dtypes.float32)])

    assert kernel(0).structural_key() != kernel(2).structural_key()
    from autojit.codegen.cpu.jit import compile_kernel

    source = np.arange(8, dtype=np.float32).reshape(2, 4)
    for offset in (0, 1, 2):
        out = np.empty((2, 2), np.float32)
        compiled = compile_kernel(kernel(offset))
        compiled.validate([source], [out])
        compiled([source], [out])
        np.testing.assert_array_equal(out, -source[:, offset:offset + 2])


def test_batched_products_run_in_the_native_program():
    def attention(q, k, v, bias):
        scores = (q @ k.transpose(-1, -2)).softmax(-1)
        return scores @ v, (q @ bias).sum()  # bias: one matrix broadcast over the batch

    plan = run(attention, *arrays((2, 3, 16, 8), (2, 3, 16, 8), (2, 3, 16, 8), (8, 24)))
    assert plan.program, plan.program_refusal


def test_rows_gathered_at_indices_and_their_gradient_run_natively_and_equal_eager():
    table = autojit.tensor(arrays((10, 6))[0], requires_grad=True)
    index = autojit.tensor(np.array([[3, -1, 0], [3, 9, 3]]))

    def lookup(index, scale):
        rows = table[index]  # an embedding's lookup, negative indices counting from the end
        (grad,) = autojit.autograd.grad((rows * scale).sum(), table)
        return rows, grad

    compiled = autojit.compile(lookup)
    scale = autojit.tensor(arrays((2, 3, 6))[0])
    for _ in range(3):
        for want, got in zip(lookup(index, scale), compiled(index, scale), strict=True):
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    plan = compiled.executables[-1].plan
    assert "rows index" in plan.describe() and "rows index_put" in plan.describe()
    assert plan.program, plan.program_refusal
    bad = autojit.tensor(np.array([[3, 10, 0], [1, 2, 3]]))
    with np.testing.assert_raises(IndexError):
        lookup(bad, scale)
    with np.testing.assert_raises(IndexError):
        compiled(bad, scale)


def test_a_leading_slice_of_a_cat_put_into_another_cat_is_copied_not_placed():
    # The slice reads the first rows of the inner cat with its own strides and offset 0: only
    # a piece read whole may take the inner cat's array as its part (placement.py).
    def nested(x, y, z):
        inner = autojit.cat([x * 2, y + 1])
        return autojit.cat([inner[:4], z]).exp(), inner.sum()

    run(nested, *arrays((3, 4), (3, 4), (2, 4)))
