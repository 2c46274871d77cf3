"""Tensors a factory makes inside a compiled function (zeros, ones, full, arange, linspace,
tensor([...]), zeros_like, new_zeros, ...) are made anew on every call, as eagerly: a write into
one is the graph's own update, which the next call does not see (ir/trace.py, Tracer.fresh).

Each program is written once against `lib` (autojit or torch) and called three times with
different inputs: compiled autojit equals torch on every call, and compiles (no graph break),
also where the written values require grad.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit.compiler.api import CompileWarning

torch = pytest.importorskip("torch")


def zeros_add(lib, x):
    z = lib.zeros(4)
    z.add_(x)
    return z


def ones_iadd_twice(lib, x):
    z = lib.ones(4)
    z += x
    z *= 2
    return z.sum()


def full_arange_linspace(lib, x):
    a, b, c = lib.full((4,), 2.0), lib.arange(4.0), lib.linspace(0, 1, 4)
    a.mul_(x)
    b.sub_(x)
    c.add_(a)
    return a + b + c


def literal_and_like(lib, x):
    total = lib.tensor(0.0)
    total += x.sum()
    like = lib.zeros_like(x)
    like.copy_(x).mul_(3)
    new = x.new_zeros(4)
    new[1:3] = x[:2]  # through a view of the fresh tensor
    return total, like, new


def scatter_one_hot(lib, x):
    labels = (x.abs() * 10).long() % 4
    return lib.zeros(4, 4).scatter_(1, labels[:, None], 1.0)


def masked_assignment(lib, x):
    mask = lib.ones(4)
    mask[x > 0] = 5.0
    return mask


def degree_normalization(lib, x):
    # A graph convolution's degrees, summed into a fresh vector (index_add_), then used.
    source = lib.tensor([0, 1, 1, 2, 3, 3, 3])
    degree = lib.zeros(4).index_add_(0, source, lib.ones(7))
    return x * degree.pow(-0.5)


PROGRAMS = [zeros_add, ones_iadd_twice, full_arange_linspace, literal_and_like,
            scatter_one_hot, masked_assignment, degree_normalization]
INPUTS = [np.array([1.0, -2.0, 0.5, 3.0]), np.array([-1.0, 0.25, 2.0, -0.5]),
          np.array([0.3, 0.1, -0.7, 1.5])]


def _arrays(result):
    result = result if isinstance(result, tuple) else (result,)
    return [r.detach().numpy() for r in result]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_every_call_starts_from_the_factorys_values(program):
    # A bool mask's count is a size the graph computes (a split, which fullgraph refuses):
    # one trace serves the counts 3, 2 and 3 of the inputs.
    split = program is masked_assignment
    compiled = autojit.compile(lambda x: program(autojit, x), fullgraph=not split)
    for data in INPUTS:
        expected = _arrays(program(torch, torch.tensor(data, dtype=torch.float32)))
        got = _arrays(compiled(autojit.tensor(data, dtype=autojit.float32)))
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine, theirs, rtol=1e-6)
    assert len(compiled.executables) == 1 and compiled.stats().traces == 1


def test_a_write_of_values_that_require_grad_compiles_and_differentiates_as_eager():
    # Message passing as hand-written graph networks do it: messages summed into a fresh
    # zeros tensor by index_add_, then a loss differentiated inside the compiled step.
    generator = np.random.default_rng(4)
    weight_data = generator.standard_normal((3, 3)).astype(np.float32)
    target = np.array([0, 1, 1, 2])
    results = []
    for lib, compile_it in ((torch, False), (autojit, True)):
        weight = lib.tensor(weight_data, requires_grad=True)
        index = lib.tensor(target)

        def step(x, lib=lib, weight=weight, index=index):
            weight.grad = None
            messages = x @ weight
            summed = lib.zeros(3, 3).index_add_(0, index, messages)
            summed[0] += messages[0]
            loss = (summed ** 2).sum()
            loss.backward()
            return loss.detach(), weight.grad

        run = step
        if compile_it:
            run = autojit.compile(step)
        outputs = []
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            for _ in range(3):
                x = lib.tensor(generator.standard_normal((4, 3)).astype(np.float32))
                outputs.append([t.numpy().copy() for t in run(x)])
        results.append(outputs)
        generator = np.random.default_rng(4)
        generator.standard_normal((3, 3))
    for mine, theirs in zip(results[1], results[0]):
        for a, b in zip(mine, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-5)


def test_writes_through_an_alias_of_an_outside_array_are_still_written_back():
    # from_numpy shares the caller's memory, and detach() a captured tensor's: not fresh.
    array = np.zeros(3, dtype=np.float32)
    weight = autojit.zeros(3)

    def step(x):
        autojit.from_numpy(array).add_(x)
        weight.detach().add_(x)
        return x.sum()

    compiled = autojit.compile(step)
    for _ in range(3):
        compiled(autojit.ones(3))
    np.testing.assert_array_equal(array, [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(weight.numpy(), [3.0, 3.0, 3.0])


def test_a_fresh_tensor_with_history_kept_in_python_state_runs_eagerly():
    # Stored in module state, the tensor outlives the call with the autograd history the
    # write gave it: that call runs eagerly, with eager's history.
    class Cached(autojit.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = autojit.nn.Parameter(autojit.ones(3))

        def forward(self, x):
            hidden = autojit.zeros(3)
            hidden.add_(x * self.weight)
            self.hidden = hidden
            return hidden.sum()

    module = Cached()
    compiled = autojit.compile(module)
    with pytest.warns(CompileWarning, match="gave autograd history to a tensor the function"):
        compiled(autojit.ones(3))
    assert module.hidden.grad_fn.name() == "AddBackward0"
    module.hidden.sum().backward()
    np.testing.assert_array_equal(module.weight.grad.numpy(), [1.0, 1.0, 1.0])


def test_python_reads_a_written_fresh_tensors_values_from_the_graph():
    @autojit.compile
    def listed(x):
        z = autojit.zeros(3)
        z.add_(x)
        return z.tolist(), z[0].item() + z.sum().item()

    assert listed(autojit.ones(3)) == ([1.0, 1.0, 1.0], 4.0)
    assert listed(autojit.ones(3) * 2) == ([2.0, 2.0, 2.0], 8.0)

    @autojit.compile
    def converted(x):
        z = autojit.zeros(3)
        z.add_(x)
        return autojit.tensor(z.numpy() * 2)  # its array is stale: the call runs eagerly

    with pytest.warns(CompileWarning, match=r"Tensor\.numpy\(\) of a tensor the function wrote"):
        np.testing.assert_array_equal(converted(autojit.ones(3)).numpy(), [2.0, 2.0, 2.0])
