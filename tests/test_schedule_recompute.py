"""Recomputation across kernels (codegen/schedule/recompute.py): a value a kernel made before a
reduction, read by the kernel after it, is computed again there from the first kernel's inputs
where that reads no more bytes and takes only exactly rounded ops; otherwise it is stored and
read back. And the compiled Hessian-vector products those rules are for: one kernel per pass
they must make, no captured seed, the values of torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

N = 4096


def compiled_plan(fn, *arrays):
    """The plan of `fn` compiled, after checking two calls against eager."""
    compiled = autojit.compile(fn)
    for call in range(2):
        inputs = [autojit.tensor(array + call) for array in arrays]
        want, got = fn(*inputs), compiled(*inputs)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    return compiled.executables[0].plan


def stored(plan) -> list:
    """For each kernel over arrays (not scalars), in plan order, how many arrays it stores
    (outputs that are not sums)."""
    return [sum(output.reduce is None for output in step.kernel.outputs)
            for step in plan.steps if hasattr(step, "kernel") and step.kernel.shape]


def vectors(count: int):
    generator = np.random.default_rng(count)
    return [generator.uniform(-1, 1, N) for _ in range(count)]


def test_a_value_read_after_a_reduction_is_computed_again_not_stored():
    def fn(x, v):
        a = v * 3 + 1  # made in the kernel of the sum below
        s = (x * a).sum()
        return x * s + a  # a kernel after the sum: reads v instead of a

    plan = compiled_plan(fn, *vectors(2))
    assert plan.kernel_count == 2
    assert stored(plan) == [0, 1], plan.describe()


def test_a_value_from_more_bytes_than_its_own_is_stored():
    def fn(x, v, w):
        a = v * w  # recomputing it would read two arrays for one
        s = (x * a).sum()
        return x * s + a

    plan = compiled_plan(fn, *vectors(3))
    assert stored(plan) == [1, 1], plan.describe()


def test_a_transcendental_value_is_stored():
    def fn(x, v):
        a = v.exp()  # not exactly rounded: computed once, where its bits are decided
        s = (x * a).sum()
        return x * s + a

    plan = compiled_plan(fn, *vectors(2))
    assert stored(plan) == [1, 1], plan.describe()


def hvp(lib, f):
    def h(x, v):
        x = x.detach().requires_grad_(True)
        (g,) = lib.autograd.grad(f(lib, x), x, create_graph=True)
        (r,) = lib.autograd.grad((g * v).sum(), x)
        return r
    return h


FUNCTIONS = {
    "sin": (lambda lib, x: (x.sin() * x + x * x * x / 3).sum(), 1),
    "mean-exp": (lambda lib, x: x.exp().mean(), 1),
    "quartic": (lambda lib, x: (x ** 4).sum() + x.cos().sum(), 1),
    # |x|: its sum, then x . v, then the result: three passes over x, none stored between.
    "norm": (lambda lib, x: (x * x).sum().sqrt(), 3),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_compiled_hessian_vector_product_makes_only_the_passes_it_must(name):
    import torch

    f, passes = FUNCTIONS[name]
    x_np, v_np = vectors(2)
    compiled = autojit.compile(hvp(autojit, f))
    for _ in range(2):
        got = compiled(autojit.tensor(x_np), autojit.tensor(v_np))
    want = hvp(torch, f)(torch.tensor(x_np), torch.tensor(v_np))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    eager = hvp(autojit, f)(autojit.tensor(x_np), autojit.tensor(v_np))
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-13, atol=1e-14)
    plan = compiled.executables[0].plan
    # The implicit gradients' ones are constants of the graph, not inputs read on each call.
    assert "captured" not in compiled.ir()
    full = [step for step in plan.steps if hasattr(step, "kernel") and step.kernel.shape]
    assert len(full) == passes, plan.describe()
    assert sum(stored(plan)) == 1, plan.describe()  # the result, nothing else
    assert "pow" not in compiled.ir()  # x ** 2 and x ** 0 of the derivatives are products
