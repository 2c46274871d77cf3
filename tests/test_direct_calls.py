"""A plain executable's steady-state call as one generated function
(codegen/schedule/direct_calls.py): taken once the plan has its native program, with the values,
.grad tensors and results of the layered path and of eager, and left for the layered path when
the inputs differ from the recorded call, a profiler is on, a kernel fails, or the process is a
forked child (whose workers it is then made again for)."""

import multiprocessing

import numpy as np
import pytest
from native_program_cases import NEEDS_WORKERS, random_source

import autojit
from autojit.autograd import profiler
from autojit.codegen.cpu import workers

pytestmark = NEEDS_WORKERS
_, tensor = random_source(17)


def executable_of(compiled):
    (executable,) = compiled.executables
    return executable


def chain_step(w, b):
    def step(x):
        w.grad = None
        b.grad = None
        y = x
        for _ in range(4):
            y = (y * w + b).tanh().sin() * 0.5
        y.sum().backward()
        return w.grad, b.grad
    return step


def test_a_gradient_step_takes_the_direct_call_and_equals_the_layered_path_and_eager():
    x = tensor(64)
    made = [(tensor(64, requires_grad=True), tensor(64, requires_grad=True)) for _ in range(3)]
    for w, b in made[1:]:
        w.data.copy_(made[0][0].data)
        b.data.copy_(made[0][1].data)
    direct = autojit.compile(chain_step(*made[0]))
    layered = autojit.compile(chain_step(*made[1]))
    eager = chain_step(*made[2])
    for call in range(5):
        results = direct(x)
        layered_results = layered(x)
        if call == 1:
            executable_of(layered)._direct = False
        eager_results = eager(x)
        assert results[0] is made[0][0].grad and results[1] is made[0][1].grad
        for mine, theirs, reference in zip(results, layered_results, eager_results):
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
            np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-5, atol=1e-6)
        if call == 3:
            held = results[0]
    assert callable(executable_of(direct)._direct)
    assert "RUN(CALL, id(arrays))" in executable_of(direct)._direct.source
    # Each call's .grad is a new tensor: the one held from an earlier call keeps its values.
    assert held is not made[0][0].grad
    np.testing.assert_array_equal(held.numpy(), made[0][0].grad.numpy())


def test_cleared_grads_and_a_grad_of_an_argument():
    weight = tensor(32, requires_grad=True)

    def step(x):
        x.grad = None
        loss = (x.exp() * weight).sum()
        loss.backward()
        weight.grad = None
        return loss.detach(), x.grad

    compiled = autojit.compile(step)
    x = tensor(32, requires_grad=True)
    for _ in range(4):
        loss, gradient = compiled(x)
        assert weight.grad is None
        assert gradient is x.grad
        np.testing.assert_allclose(gradient.numpy(), np.exp(x.detach().numpy()) *
                                   weight.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(loss.item(), (np.exp(x.detach().numpy()) *
                                                 weight.detach().numpy()).sum(), rtol=1e-5)
    assert callable(executable_of(compiled)._direct)


def test_a_grad_set_before_the_call_takes_the_sum_in_place():
    """A .grad the caller set is added into in place by backward, as eager's AccumulateGrad
    does, though the step clears .grad afterwards: that write is an effect, so the call takes
    the general path."""
    weight = tensor(32, requires_grad=True)

    def step(x):
        loss = (x.exp() * weight).sum()
        loss.backward()
        weight.grad = None
        return loss.detach()

    compiled = autojit.compile(step)
    x = tensor(32)
    held = autojit.ones(32)
    for call in range(1, 5):
        weight.grad = held  # the same tensor each call: the guards hold
        compiled(x)
        assert weight.grad is None
        np.testing.assert_allclose(held.numpy(), 1 + call * np.exp(x.numpy()), rtol=1e-6)
    assert executable_of(compiled)._direct is False


def test_inputs_laid_out_otherwise_take_the_layered_path():
    compiled = autojit.compile(lambda x, y: (x * y).tanh() + 1)
    x, y = tensor(48, 48), tensor(48, 48)
    for _ in range(3):
        compiled(x, y)
    assert callable(executable_of(compiled)._direct)
    transposed = tensor(48, 48).t()  # the same shape, other strides
    result = compiled(transposed, y)
    np.testing.assert_allclose(result.numpy(), np.tanh(transposed.numpy() * y.numpy()) + 1,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(compiled(x, y).numpy(), np.tanh(x.numpy() * y.numpy()) + 1,
                               rtol=1e-6, atol=1e-6)


def test_a_kernel_error_raises_eagers_error_and_the_next_call_runs():
    compiled = autojit.compile(lambda x, divisor: (x // divisor).sum())
    x = autojit.tensor(np.arange(1, 7, dtype=np.int64))
    divisor = autojit.tensor(np.full(6, 2, dtype=np.int64))
    for _ in range(4):
        assert compiled(x, divisor).item() == (np.arange(1, 7) // 2).sum()
    assert callable(executable_of(compiled)._direct)
    zero = autojit.tensor(np.array([2, 2, 0, 2, 2, 2], dtype=np.int64))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        compiled(x, zero)
    assert compiled(x, divisor).item() == (np.arange(1, 7) // 2).sum()


def test_a_profiled_call_runs_the_steps():
    compiled = autojit.compile(lambda x, w: (x @ w).tanh().sum())
    x, w = tensor(32, 32), tensor(32, 32)
    for _ in range(3):
        compiled(x, w)
    assert callable(executable_of(compiled)._direct)
    with profiler.profile() as profile:
        value = compiled(x, w)
    names = [event.name for event in profile.function_events]
    assert any(name.startswith("autojit::kernel") for name in names)
    np.testing.assert_allclose(value.item(), np.tanh(x.numpy() @ w.numpy()).sum(), rtol=1e-4)


def test_an_update_of_a_captured_tensor_has_no_direct_call():
    weight = tensor(16, requires_grad=True)

    def step(x):
        loss = (weight * x).sum()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.1 * weight.grad)
            weight.grad = None
        return loss

    compiled = autojit.compile(step)
    for _ in range(4):
        compiled(tensor(16))
    assert not callable(executable_of(compiled)._direct)


def _calls_in_child(compiled, x, queue):
    results = [compiled(x) for _ in range(2)]
    direct = executable_of(compiled)._direct
    queue.put((callable(direct) and direct.__globals__["WORKERS"] is workers.shared(),
               bool(np.allclose(results[-1].numpy(), np.tanh(x.numpy()) * 2 + 1, rtol=1e-6,
                                atol=1e-6))))


def test_a_forked_child_makes_the_direct_call_again_for_its_workers():
    compiled = autojit.compile(lambda x: x.tanh() * 2 + 1)
    x = tensor(512, 1024)  # split over the cores
    for _ in range(3):
        compiled(x)
    assert callable(executable_of(compiled)._direct)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_calls_in_child, args=(compiled, x, queue))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        child.join()
    assert child.exitcode == 0
    assert queue.get(timeout=1) == (True, True)
