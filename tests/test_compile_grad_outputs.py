"""A compiled function's .grad side effects match eager's object by object.

A function that assigns `.grad` (`p.grad = None`, `zero_grad()`) leaves a new tensor in .grad
on every eager call; one that only accumulates adds into the tensor already there. Tensors the
caller kept from an earlier call must keep their values, and a returned `p.grad` is the
tensor now in `p.grad`. Each test runs the same function eagerly and compiled.
"""

from __future__ import annotations

import numpy as np

import autojit
import autojit.nn as nn
from autojit.optim import SGD


def run_both(make_step, calls=4):
    """For eager then compiled: the step's results, and what the test observed per call."""
    observed = {}
    for compiled in (False, True):
        step, observe = make_step()
        function = autojit.compile(step) if compiled else step
        record = []
        for call in range(calls):
            x = autojit.tensor(np.full(3, float(call + 1), np.float32))
            record.append(observe(function(x)))
        observed[compiled] = (record, function)
    return observed


def values(tensors):
    return [tensor.detach().numpy().copy() for tensor in tensors]


def test_grads_kept_from_earlier_calls_keep_their_values():
    def make_step():
        w = autojit.tensor(np.ones(3, np.float32), requires_grad=True)
        kept = []

        def step(x):
            w.grad = None
            (w * x).sum().backward()
            return w.grad

        def observe(result):
            kept.append(w.grad)
            return values(kept), result is w.grad

        return step, observe

    observed = run_both(make_step)
    for (eager_values, eager_same), (compiled_values, compiled_same) in zip(
            observed[False][0], observed[True][0]):
        for mine, theirs in zip(compiled_values, eager_values):
            np.testing.assert_array_equal(mine, theirs)
        assert eager_same and compiled_same
    assert len(observed[True][1].executables) == 1  # a new .grad each call is not a retrace


def test_zero_grad_set_to_none_then_step_leaves_new_grads():
    def make_step():
        autojit.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = SGD(model.parameters(), lr=0.1)
        kept = []

        def step(x):
            optimizer.zero_grad()
            model(x.reshape(1, 3)).sum().backward()
            optimizer.step()

        def observe(_):
            kept.append(model.weight.grad)
            return values(kept), values(list(model.parameters()))

        return step, observe

    observed = run_both(make_step)
    for eager, compiled in zip(observed[False][0], observed[True][0]):
        for eager_list, compiled_list in zip(eager, compiled):
            for mine, theirs in zip(compiled_list, eager_list):
                np.testing.assert_allclose(mine, theirs, rtol=1e-6)


def test_accumulating_grads_add_into_the_same_tensor():
    def make_step():
        w = autojit.tensor(np.ones(3, np.float32), requires_grad=True)
        w.grad = autojit.zeros(3)
        first = w.grad

        def step(x):
            (w * x).sum().backward()

        def observe(_):
            return w.grad is first, first.numpy().copy()

        return step, observe

    observed = run_both(make_step)
    for (eager_same, eager_value), (compiled_same, compiled_value) in zip(
            observed[False][0], observed[True][0]):
        assert eager_same and compiled_same
        np.testing.assert_array_equal(compiled_value, eager_value)


def test_an_argument_grad_assigned_in_the_function():
    def make_step():
        kept = []

        def step(x):
            x.grad = None
            (x * x).sum().backward()
            return x.grad

        def observe(result):
            kept.append(result)
            return values(kept)

        return step, observe

    eager_x = autojit.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
    compiled_x = autojit.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
    for x, compiled in ((eager_x, False), (compiled_x, True)):
        step, observe = make_step()
        function = autojit.compile(step) if compiled else step
        records = []
        for _ in range(3):
            with autojit.no_grad():
                x.mul_(2.0)
            result = function(x)
            assert result is x.grad
            records.append(observe(result))
        if not compiled:
            expected = records
    for mine, theirs in zip(records, expected):
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b)


def test_new_grads_keep_the_programs_arrays_only_where_nothing_else_holds_them():
    """A new .grad takes the array the compiled program allocated for that gradient alone,
    without a copy; a gradient that is an input's own array (x * 1 simplifies to x), or one
    value that is two tensors' gradients, is copied, so no two .grads and no input share
    memory."""
    def make_step():
        parameters = [autojit.tensor(np.full(64, float(k), np.float32), requires_grad=True)
                      for k in range(6)]
        w, v, u, w2, v2, t = parameters

        def step(x):
            for parameter in parameters:
                parameter.grad = None
            loss = ((w + v) * x).sum() + (u * x * u).sum() + ((w2 + v2) * (x * 2)).sum()
            loss.backward()
            t.grad = x * 1
            return loss.detach()

        return step, parameters

    results = {}
    for compiled in (False, True):
        step, parameters = make_step()
        function = autojit.compile(step) if compiled else step
        kept = []
        for call in range(4):
            x = autojit.tensor(np.linspace(-1, 1, 64).astype(np.float32) * (call + 1))
            function(x)
            kept.append([parameter.grad for parameter in parameters])
            grads = [parameter.grad.numpy() for parameter in parameters]
            for first in range(len(grads)):
                assert not np.shares_memory(grads[first], x.numpy())
                for second in range(first + 1, len(grads)):
                    assert not np.shares_memory(grads[first], grads[second])
            with autojit.no_grad():
                x.mul_(0.0)  # the input changes after the call; the .grads must not
        results[compiled] = [values(grads) for grads in kept]
        if compiled and function.executables[0].plan.program:
            assert function.executables[0].plan.program.owned_outputs
    for mine, theirs in zip(results[True], results[False]):
        for a, b in zip(mine, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_grad_assigned_to_a_tensor_the_function_never_reads():
    """`t.grad = x * 2` where nothing else in the function reads t: after each compiled call
    t.grad holds the new value, as after an eager call."""
    def make_step(t):
        def step(x):
            t.grad = x * 2
            return x.sum()
        return step

    for compiled in (False, True):
        t = autojit.tensor(np.zeros(4, np.float32), requires_grad=True)
        step = make_step(t)
        function = autojit.compile(step) if compiled else step
        for call in range(3):
            x = autojit.tensor(np.arange(4, dtype=np.float32) + call)
            function(x)
            np.testing.assert_array_equal(t.grad.numpy(), (np.arange(4) + call) * 2)


def _step_peak(step, x) -> float:
    """Bytes the heap grew by at the peak of one call, after three calls (numpy's arrays are
    traced by tracemalloc), the tracing on since before the first."""
    import tracemalloc

    tracemalloc.start()
    try:
        for _ in range(3):
            step(x)
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        step(x)
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_zero_grad_drops_the_old_grads_before_the_run_as_eager_does():
    # Eager's zero_grad() frees the old gradients before backward makes the new ones; a
    # compiled step kept them to its write-back, a second set of gradients at its peak.
    model = nn.Linear(512, 512)
    optimizer = SGD(model.parameters(), lr=0.1)

    def step(x):
        optimizer.zero_grad()
        (model(x) ** 2).sum().backward()
        optimizer.step()

    grad_bytes = 512 * 513 * 4
    x = autojit.randn(2, 512)
    compiled = autojit.compile(step)
    assert _step_peak(compiled, x) < grad_bytes / 4
    held = model.weight.grad
    before = held.clone()
    compiled(x)
    # A .grad the caller kept is theirs: not written, and a new tensor in .grad.
    assert model.weight.grad is not held
    np.testing.assert_array_equal(held.numpy(), before.numpy())


def test_a_grad_read_before_zero_grad_is_read_with_its_values():
    model = nn.Linear(3, 2)
    optimizer = SGD(model.parameters(), lr=0.1)

    def step(x):
        norm = model.weight.grad.norm()
        optimizer.zero_grad()
        (model(x) ** 2).sum().backward()
        optimizer.step()
        return norm

    x = autojit.randn(4, 3)
    (model(x) ** 2).sum().backward()
    compiled = autojit.compile(step)
    for _ in range(3):
        expected = float(model.weight.grad.norm())
        assert abs(float(compiled(x)) - expected) <= 1e-6 * expected
        assert model.bias.grad is not None
