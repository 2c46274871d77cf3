"""autojit.compile, continued: anomaly mode, eager's errors raised from the user's line,
leaves made inside the function, traces stopped at a graph break, in-place updates and views
across calls, NumPy arrays and Python or NumPy random draws read anew on every call,
iterators advanced and leaf hooks' effects on every call, and a returned .grad.
test_compile.py has the training steps, guards and graph breaks."""

from __future__ import annotations

import itertools
import random
import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning


def test_anomaly_mode_nan_checks_are_compiled_in():
    weight = autojit.tensor([1.0, -1.0], requires_grad=True)

    def step(x):
        loss = (weight * x).sqrt().sum()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.1 * weight.grad)
        weight.grad = None
        return loss.detach()

    compiled = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's own warnings
        with autojit.autograd.detect_anomaly():
            for _ in range(2):  # traced, then from the executable
                with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan"):
                    compiled(autojit.tensor([1.0, 1.0]))
            assert len(compiled.executables) == 1
            assert weight.tolist() == [1.0, -1.0]  # nothing written back
            weight.data.copy_(autojit.tensor([1.0, 4.0]))
            compiled(autojit.tensor([1.0, 1.0]))  # no nan: runs and updates
    assert weight.tolist() != [1.0, 4.0]


def test_anomaly_mode_with_backward_outside_runs_eagerly():
    weight = autojit.tensor([1.0, -1.0], requires_grad=True)
    compiled = autojit.compile(lambda x: (weight * x).sqrt().sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autojit.autograd.detect_anomaly():
            loss = compiled(autojit.tensor([1.0, 1.0]))
            assert loss.grad_fn.name() == "SumBackward0"  # eager's graph, checked per node
            with pytest.raises(RuntimeError, match="returned nan"):
                loss.backward()
            compiled(autojit.tensor([1.0, 1.0]))  # runs eagerly again, without a new trace
    assert len(compiled.executables) == 1 and compiled.executables[0].calls == 2


def test_eagers_errors_are_raised_while_tracing_from_the_users_line():
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)

    def modifies_a_saved_tensor(x):
        y = x * 2
        z = (y * weight).sum()
        y.add_(1)  # y was saved by the multiplication, for weight's gradient
        z.backward()
        return z.detach()

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        autojit.compile(modifies_a_saved_tensor)(autojit.tensor([1.0, 1.0]))

    def mismatched(x):
        return x @ autojit.ones(3, 3)

    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x4 and 3x3\)") as caught:
        autojit.compile(mismatched)(autojit.ones(2, 4))
    lines = [entry.lineno for entry in caught.traceback
             if entry.path.name == "test_compile_calls.py"]
    assert mismatched.__code__.co_firstlineno + 1 in [line + 1 for line in lines]


def test_a_leaf_made_inside_the_function_keeps_its_grad_to_itself():
    weight = autojit.tensor([2.0], requires_grad=True)
    constant = autojit.tensor([3.0])

    def step(x):
        made_here = autojit.ones(1).requires_grad_(True)
        alias = constant.detach().requires_grad_(True)
        ((weight * made_here * alias).sum() * x.sum()).backward()
        gradient = weight.grad.detach().clone()
        weight.grad = None
        return gradient, alias.grad

    compiled = autojit.compile(step)
    for _ in range(3):
        gradient, alias_grad = compiled(autojit.ones(2))
        assert gradient.tolist() == [6.0] and alias_grad.tolist() == [4.0]
    assert len(compiled.executables) == 1  # no .grad written back to a captured constant
    assert constant.grad is None


def test_a_trace_that_stops_at_a_graph_break_leaves_no_symbolic_tensor_behind():
    kept = []

    def f(x):
        y = x * 2
        kept.append(y)  # stored, then the trace stops at the graph break below
        return y * y.sum().item()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        autojit.compile(f)(autojit.ones(2))
    assert len(kept) == 1 and not kept[0].is_symbolic  # the eager run's tensor alone
    np.testing.assert_array_equal(kept[0].numpy(), [2, 2])


def test_bool_negation_and_subtraction_raise_torchs_errors_compiled_and_eager():
    mask = autojit.tensor([True, False])
    cases = ((lambda x: -x, "Negation, the `-` operator, on a bool tensor"),
             (lambda x: x - x, "with two bool tensors is not supported"),
             (lambda x: 1 - x, "with a bool tensor is not supported"))
    for function, message in cases:
        for run in (function, autojit.compile(function)):
            with pytest.raises(RuntimeError, match=message):
                run(mask)
    assert autojit.compile(lambda x: x.sign())(mask).tolist() == [True, False]
    assert mask.sign().tolist() == [True, False]


def test_in_place_update_recorded_for_autograd_reads_the_current_value_each_call():
    """Outside no_grad, an in-place op snapshots the old value for autograd; in a trace that
    snapshot must stand for the tensor's value, not become a constant of its traced data."""
    weight = autojit.tensor(np.zeros((2, 2), np.float32))
    x = autojit.tensor(np.ones((2, 2), np.float32))

    def update(x):
        weight.sub_(x * 0.5)
        return x + 1

    compiled = autojit.compile(update)
    for expected in (-0.5, -1.0, -1.5):
        compiled(x)
        np.testing.assert_array_equal(weight.numpy(), np.full((2, 2), expected, np.float32))


def test_a_view_read_after_its_base_is_written_in_place_sees_the_new_values():
    weight = autojit.tensor(np.eye(2, dtype=np.float32))
    x = autojit.tensor(np.ones((2, 2), np.float32))

    def f(x):
        with autojit.no_grad():
            transposed = weight.t()
            row = transposed[0]
            weight.sub_(1)
            return transposed @ x, row * 1

    compiled = autojit.compile(f)
    for step in range(1, 4):
        product, row = compiled(x)
        expected = np.eye(2, dtype=np.float32) - step
        np.testing.assert_array_equal(product.numpy(), expected.T @ np.ones((2, 2)))
        np.testing.assert_array_equal(row.numpy(), expected.T[0])


def test_a_view_made_before_the_call_of_a_tensor_written_in_place_is_a_graph_break():
    weight = autojit.tensor(np.eye(2, dtype=np.float32))
    transposed = weight.t()
    x = autojit.tensor(np.ones((2, 2), np.float32))

    def f(x):
        with autojit.no_grad():
            weight.sub_(1)
            return transposed @ x

    compiled = autojit.compile(f)
    with pytest.warns(autojit.CompileWarning, match="shares memory|view of a tensor written"):
        first = compiled(x)
    np.testing.assert_array_equal(first.numpy(), (np.eye(2) - 1).T @ np.ones((2, 2)))
    np.testing.assert_array_equal(compiled(x).numpy(), (np.eye(2) - 2).T @ np.ones((2, 2)))


def test_a_result_returned_through_a_view_keeps_its_values_across_calls():
    """Kernel buffers are kept from one call to the next unless something escapes the call:
    a returned transpose is a view of its kernel's buffer, so that buffer is not kept; one
    read only by a matmul through a transpose is."""
    compiled = autojit.compile(lambda x: ((x * 2).exp().t(), (x + 1).t() @ x))
    first_input = autojit.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)
    first, product = compiled(first_input)
    expected_first, expected_product = first.numpy().copy(), product.numpy().copy()
    compiled(first_input * 3)
    np.testing.assert_array_equal(first.numpy(), expected_first)
    np.testing.assert_array_equal(product.numpy(), expected_product)
    plan = compiled.executables[0].plan
    assert "node permute" in plan.describe()
    # One kernel makes both: exp's buffer escapes through the returned transpose, (x + 1)'s
    # does not; the product is returned.
    assert [step.reusable for step in plan.steps if hasattr(step, "reusable")] == [
        [False, True], [False]]


def test_tensor_of_a_numpy_array_copies_it_on_every_call():
    # Eager's autojit.tensor(array) copies the array as it is at each call; the compiled call
    # reads the array when it runs, not the values it had when traced.
    table = np.array([1.0, 2.0, 3.0])
    compiled = autojit.compile(lambda x: x * autojit.tensor(table, dtype=autojit.float32))
    np.testing.assert_array_equal(compiled(autojit.ones(3)).numpy(), [1, 2, 3])
    table[0] = 10.0
    np.testing.assert_array_equal(compiled(autojit.ones(3)).numpy(), [10, 2, 3])
    assert len(compiled.executables) == 1


def test_a_function_drawing_from_numpy_or_python_random_draws_on_every_call():
    # A graph cannot draw from NumPy's or Python's generators: a trace that drew serves its own
    # call, and a function that draws on every call ends up running eagerly, drawing as eager.

    def run(make_generator, draw):
        results = []
        for compiled in (False, True):
            generator = make_generator()

            def function(x):
                return x + autojit.tensor(draw(generator), dtype=autojit.float64)  # noqa: B023

            step = autojit.compile(function) if compiled else function
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CompileWarning)
                results.append([step(autojit.zeros(2, dtype=autojit.float64)).tolist()
                                for _ in range(4)])
        assert results[0] == results[1]
        assert len({tuple(values) for values in results[1]}) == 4

    run(lambda: np.random.default_rng(0), lambda generator: generator.standard_normal(2))
    run(lambda: random.Random(0), lambda generator: [generator.random(), generator.random()])
    run(lambda: np.random.seed(0), lambda generator: np.random.standard_normal(2))


def _iterators():
    def counting():
        step = 0
        while True:
            step += 1
            yield float(step)

    dataset = autojit.utils.data.TensorDataset(autojit.arange(10.0).reshape(10, 1))
    return {"list": iter([autojit.tensor(float(i)) for i in range(1, 6)]),
            "generator": counting(), "count": itertools.count(),
            "loader": iter(autojit.utils.data.DataLoader(dataset, batch_size=2))}


@pytest.mark.parametrize("kind", ["list", "generator", "count", "loader"])
def test_an_iterator_the_function_takes_items_from_moves_on_every_call(kind):
    # Its position is state no graph can hold: each call takes the next item, as eagerly.
    results = []
    for compiled in (False, True):
        iterator = _iterators()[kind]

        def step(x, iterator=iterator):
            item = next(iterator)
            if isinstance(item, (list, tuple)):
                item = item[0].sum()
            return x * item

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            results.append([function(autojit.ones(1)).item() for _ in range(5)])
    assert results[0] == results[1]


def _hooked_calls(compiled: bool):
    """Four backward calls through a leaf whose hooks log in Python."""
    weight = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    sums, gradients, counts = [], [], {"calls": 0}
    weight.register_post_accumulate_grad_hook(lambda p: sums.append(p.grad.sum().item()))
    weight.register_hook(lambda g: gradients.append(g.detach()))

    def counted(gradient):
        counts["calls"] += 1

    weight.register_hook(counted)

    def step(x):
        (weight * x).sum().backward()

    function = autojit.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for scale in range(1, 5):
            function(autojit.ones(3) * scale)
    assert all(type(value) is float for value in sums)
    return sums, [g.tolist() for g in gradients], counts["calls"], weight.grad.tolist()


def test_python_effects_of_a_leafs_hooks_in_a_traced_backward_happen_on_every_call():
    assert _hooked_calls(compiled=True) == _hooked_calls(compiled=False)


def test_a_returned_grad_is_the_tensor_left_in_grad():
    weight = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def step(x):
        (weight * x).sum().backward()
        return weight.grad

    compiled = autojit.compile(step)
    first = compiled(autojit.ones(3))
    assert first is weight.grad
    second = compiled(autojit.ones(3) * 2)
    assert second is first is weight.grad  # accumulated in place, as eager does
    np.testing.assert_array_equal(first.numpy(), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_compiled_optimizer_step_reads_each_calls_grad(name):
    # The step reads each parameter's .grad: a new tensor there is a new trace, never the
    # tensor the previous trace read (the update used the second call's gradient from then on).
    results = []
    for compiled in (False, True):
        weight = autojit.nn.Parameter(autojit.zeros(2))
        optimizer = getattr(autojit.optim, name)([weight], lr=0.5)
        step = autojit.compile(optimizer.step) if compiled else optimizer.step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            for scale in range(1, 6):
                weight.grad = autojit.full((2,), float(scale))
                step()
        results.append(weight.detach().numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
