"""The fusion schedule (codegen/schedule/fusion.py): which nodes share a kernel. Kernels of
different shapes stay open side by side, a reduction of a value made by an earlier step joins
the kernel over its shape, and a view of a kernel's value runs once the kernel has, without
ending it. Each case is checked against eager as well as for its kernel count.
"""

from __future__ import annotations

import numpy as np

import autojit


def check(fn, *arrays, kernels):
    compiled = autojit.compile(fn)
    for call in range(2):
        inputs = [autojit.tensor(array + call) for array in arrays]
        want, got = fn(*inputs), compiled(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for expected, actual in zip(want, got, strict=True):
            np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    plan = compiled.executables[0].plan
    assert plan.kernel_count == kernels, plan.describe()
    return plan


def arrays(*shapes):
    generator = np.random.default_rng(len(shapes))
    return [generator.standard_normal(shape).astype(np.float32) for shape in shapes]


def test_interleaved_shapes_make_one_kernel_per_shape():
    def fn(x, v):
        a = x.exp()
        b = v * 2  # another shape: the [8, 16] kernel stays open
        c = a + 1
        d = b + 3
        return c * 2, d.tanh()

    check(fn, *arrays((8, 16), (16, 1)), kernels=2)


def test_a_sum_of_an_earlier_steps_value_joins_the_kernel_over_its_shape():
    def fn(x, w):
        h = (x @ w).tanh()
        out = h @ w.t()  # reads h: h's kernel ends before this product
        g = out * 3
        return g, h.sum(0)  # the sum of h joins g's kernel

    check(fn, *arrays((8, 4), (4, 4)), kernels=2)


def test_a_view_of_a_column_sum_runs_after_its_kernel_without_ending_it():
    def fn(x):
        column = x.sum(0, keepdim=True).t()  # a view of the kernel's reduced output
        return column, (x.tanh() * 2)

    plan = check(fn, *arrays((6, 5)), kernels=1)
    assert "node permute" in plan.describe()


def test_a_node_reading_a_view_of_the_open_kernel_waits_for_it():
    def fn(x):
        total = x.sum(0, keepdim=True).reshape(4, 1)  # the sums, as a column
        return x * total  # cannot run inside the kernel that is still summing

    check(fn, *arrays((4, 4)), kernels=2)


def test_a_node_reading_an_open_kernel_of_another_shape_closes_it_first():
    def fn(x, v):
        a = x * 2
        b = v.exp()  # [4, 1], another kernel
        return a + b  # reads b: b's kernel runs first, then a's kernel takes the add

    check(fn, *arrays((4, 4), (4, 1)), kernels=2)


def _kernel_ops(plan) -> list:
    """Each kernel's op names, in plan order."""
    return [[node.op.name for node in step.nodes] for step in plan.steps
            if hasattr(step, "kernel")]


def test_the_cos_a_sins_backward_needs_runs_in_the_sins_kernel():
    """registry.Elementwise.companions: cos(x) for the backward of sin(x) joins the forward
    kernel that computes sin(x), where both come from one evaluation, instead of a backward
    kernel computing it again; gradients and second derivatives are unchanged."""
    import torch

    data = np.random.default_rng(3).uniform(-4, 4, (16, 32)).astype(np.float32)

    def step(x, w):
        w.grad = None
        y = ((x * w).sin() * 1.5).tanh().sin()
        y.sum().backward()
        return w.grad

    w = autojit.tensor(data.copy(), requires_grad=True)
    compiled = autojit.compile(step)
    for _ in range(2):
        gradient = compiled(autojit.tensor(data), w)
    kernels = _kernel_ops(compiled.executables[0].plan)
    # The outer sin's value is never read (only its derivative): its cos runs alone; the
    # inner sin runs with its cos right after it.
    first = kernels[0]
    assert first.count("cos") == 2 and first[first.index("sin") + 1] == "cos", kernels
    assert all("cos" not in ops for ops in kernels[1:]), kernels
    x_t = torch.tensor(data)
    w_t = torch.tensor(data, requires_grad=True)
    ((x_t * w_t).sin() * 1.5).tanh().sin().sum().backward()
    np.testing.assert_allclose(gradient.numpy(), w_t.grad.numpy(), rtol=1e-5, atol=1e-5)

    def second(x):
        (first,) = autojit.autograd.grad(x.sin().sum(), x, create_graph=True)
        (again,) = autojit.autograd.grad((first * first).sum(), x)
        return again

    x = autojit.tensor(data, requires_grad=True)
    compiled_second = autojit.compile(second)
    for _ in range(2):
        value = compiled_second(x)
    np.testing.assert_allclose(value.numpy(), -2 * np.cos(data) * np.sin(data), rtol=1e-5,
                               atol=1e-6)


def test_a_cos_of_another_operand_is_no_companion():
    def fn(x, v):
        return x.sin() * 2, (v + 1).cos()

    plan = check(fn, *arrays((4, 8), (4, 8)), kernels=1)
    assert _kernel_ops(plan)[0].index("cos") > _kernel_ops(plan)[0].index("add")


def test_a_later_sum_over_the_kernels_axes_joins_it_before_a_reader_of_its_sums_ends_it():
    """fusion._add_sibling_reductions: the division of the first sum reads the kernel's
    reduced value and ends the kernel, but the second sum (of a product with a value made
    earlier) and the third (of an elementwise value the kernel makes) need nothing the
    division makes: they are summed in the same kernel, and the elementwise node feeding
    only the second sum runs there too, unstored."""
    def fn(g, x):
        centered = x - x.mean((0, 2), keepdim=True)
        masked = g * (x > 0)
        mean = masked.sum((0, 2), keepdim=True) / 32  # ends the kernel in graph order
        moment = (masked * centered).sum((0, 2), keepdim=True)
        total = masked.sum((0, 2))
        return masked + mean * moment, total

    plan = check(fn, *arrays((4, 3, 8), (4, 3, 8)), kernels=5)
    # x's mean, its division; the masked gradient's kernel with all three sums (the product
    # with the centered x computed there, not stored); the division and products of the
    # sums; the result.
    assert [ops.count("sum") for ops in _kernel_ops(plan)] == [1, 0, 3, 0, 0], \
        _kernel_ops(plan)


def test_a_sum_of_a_value_another_reader_needs_stays_where_it_is():
    """An elementwise node whose value a later kernel also reads is not moved into the
    kernel ahead of its place (it would be stored): its sum keeps a kernel of its own."""
    def fn(g, x):
        mean = g.sum(0, keepdim=True) / 4
        product = g * x
        return product.sum(0, keepdim=True) * mean, product.exp()

    plan = check(fn, *arrays((4, 5), (4, 5)), kernels=4)
    assert [ops.count("sum") for ops in _kernel_ops(plan)] == [1, 1, 0, 0], _kernel_ops(plan)
