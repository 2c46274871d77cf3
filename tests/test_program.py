"""The native entry point (codegen/cpu/program.py): a compiled function's plan, once in its steady
state, runs as one native call. Each test builds the program (three calls: the first allocates
the kept buffers, the second is recorded), checks that it is the program that runs, and
compares with eager or NumPy, including the calls the program must decline.
"""

import threading

import numpy as np
import pytest
from native_program_cases import NEEDS_TWO_CORES, NEEDS_WORKERS, random_source

import autojit
from autojit.autograd import profiler
from autojit.codegen.cpu import workers

pytestmark = NEEDS_WORKERS
generator, tensor = random_source(5)


def plan_of(compiled):
    """The executable's plan, its calls taking the layered path from now on: these tests count
    the program's runs through Program.run, which a direct call (test_direct_calls.py) does not
    go through."""
    (executable,) = compiled.executables
    executable._direct = False
    return executable.plan


def counting_runs(plan) -> list:
    """Count the calls the program ran (a list that grows by one per program run)."""
    runs = []
    program = plan.program
    original = program.run

    def run(plan_, inputs):
        result = original(plan_, inputs)
        if result is not None:
            runs.append(1)
        return result

    program.run = run
    return runs


def mlp_step(parameters, momentum):
    w1, b1, w2, b2 = parameters

    def step(x, target):
        hidden = (x @ w1 + b1).relu()
        loss = ((hidden @ w2 + b2 - target) ** 2).mean()
        loss.backward()
        with autojit.no_grad():
            for parameter, velocity in zip(parameters, momentum):
                velocity.mul_(0.9).add_(parameter.grad)
                parameter.sub_(0.05 * velocity)
                parameter.grad = None
        return loss
    return step


def mlp_state(rows=64, width=96):
    shapes = [(32, width), (width,), (width, 8), (8,)]
    values = [generator.standard_normal(shape).astype(np.float32) * 0.2 for shape in shapes]
    made = []
    for _ in range(2):
        parameters = [autojit.tensor(value.copy(), requires_grad=True) for value in values]
        momentum = [autojit.zeros(*value.shape) for value in values]
        made.append((parameters, momentum))
    batches = [(tensor(rows, 32), tensor(rows, 8)) for _ in range(3)]
    return made, batches


def test_a_training_step_runs_as_one_native_program_and_equals_eager():
    (parameters, momentum), (eager_parameters, eager_momentum) = mlp_state()[0]
    _, batches = mlp_state()
    compiled = autojit.compile(mlp_step(parameters, momentum))
    eager = mlp_step(eager_parameters, eager_momentum)
    losses, eager_losses = [], []
    for index in range(12):
        x, target = batches[index % 3]
        losses.append(compiled(x, target).item())
        eager_losses.append(eager(x, target).item())
        if index == 2:
            plan = plan_of(compiled)
            assert plan.program, plan.program_refusal
            assert compiled.fusion_groups().endswith(
                f"native program: {plan.program.operation_count} native calls")
            runs = counting_runs(plan)
    assert len(runs) == 9
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for mine, theirs in zip(parameters + momentum, eager_parameters + eager_momentum):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


def _split_program_in_child(compiled, x, queue):
    program = plan_of(compiled).program
    runs = counting_runs(plan_of(compiled))
    result = compiled(x)
    queue.put((len(runs), program._call_workers is workers.shared(),
               bool(np.allclose(result.numpy(), np.tanh(x.numpy()) * 2 + 1, rtol=1e-6,
                                atol=1e-6))))


@NEEDS_TWO_CORES
def test_a_program_made_before_a_fork_runs_on_the_childs_workers():
    """The runner's words name the workers a split kernel runs on; a forked child has workers
    of its own (workers.py), and its calls of a program the parent made use them (the parent's,
    whose threads the child does not have, would leave every part to the calling thread)."""
    import multiprocessing

    compiled = autojit.compile(lambda x: x.tanh() * 2 + 1)
    x = tensor(512, 1024)
    for _ in range(3):
        compiled(x)
    program = plan_of(compiled).program
    assert program, plan_of(compiled).program_refusal
    table = program._words[:3 * program.operation_count].reshape(-1, 3)
    assert table[:, 2].max() > 1  # a kernel split over the cores
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_split_program_in_child, args=(compiled, x, queue))
    child.start()
    child.join(timeout=60)
    if child.is_alive():  # hung on the parent's workers: end it
        child.kill()
        child.join()
    assert child.exitcode == 0
    assert queue.get(timeout=1) == (1, True, True)


def test_results_are_fresh_arrays_on_every_call():
    compiled = autojit.compile(lambda x, y: ((x * y).tanh() + 1, (x - y).sum()))
    x, y = tensor(64, 64), tensor(64, 64)
    results = [compiled(x, y) for _ in range(3)]
    runs = counting_runs(plan_of(compiled))
    held, held_sum = results[-1][0].numpy().copy(), results[-1][1].item()
    later = compiled(y, x)
    assert runs == [1]
    # The earlier results still hold their values: the call wrote new arrays.
    np.testing.assert_array_equal(results[-1][0].numpy(), held)
    assert results[-1][1].item() == held_sum
    np.testing.assert_allclose(later[0].numpy(), np.tanh(y.numpy() * x.numpy()) + 1, rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(later[1].item(), (y.numpy() - x.numpy()).sum(), rtol=1e-4)


def test_a_parameter_given_new_storage_is_read_and_updated_there():
    weight = tensor(16, 16, requires_grad=True)

    def step(x):
        loss = (x @ weight).square().sum()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.01 * weight.grad)
        weight.grad = None
        return loss

    compiled = autojit.compile(step)
    x = tensor(8, 16)
    for _ in range(3):
        compiled(x)
    runs = counting_runs(plan_of(compiled))
    fresh = generator.standard_normal((16, 16)).astype(np.float32)
    with autojit.no_grad():
        weight.data = autojit.tensor(fresh.copy())
    loss = compiled(x)
    assert runs == [1]
    product = x.numpy() @ fresh
    np.testing.assert_allclose(loss.item(), (product ** 2).sum(), rtol=1e-5)
    expected = fresh - 0.01 * (x.numpy().T @ (2 * product))
    np.testing.assert_allclose(weight.detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_a_strided_input_is_declined_and_runs_in_python():
    compiled = autojit.compile(lambda x: (x.exp() * 2).sum(1))
    x = tensor(32, 48)
    for _ in range(3):
        compiled(x)
    runs = counting_runs(plan_of(compiled))
    strided = autojit.tensor(generator.standard_normal((48, 32)).astype(np.float32)).t()
    result = compiled(strided)
    assert runs == []
    np.testing.assert_allclose(result.numpy(), (np.exp(strided.numpy()) * 2).sum(1), rtol=1e-5)


@NEEDS_TWO_CORES
def test_split_reductions_combine_natively_with_numpys_nan_rules():
    compiled = autojit.compile(lambda x: (x.tanh().sum(0), x.amax(0), x.amin(0)))
    x = generator.standard_normal((4096, 256)).astype(np.float32)
    x[100, 7] = np.nan  # in the first block
    x[4000, 9] = np.nan  # in the last
    x_tensor = autojit.tensor(x)
    for _ in range(3):
        compiled(x_tensor)
    plan = plan_of(compiled)
    assert any(step.split is not None for step in plan.steps if hasattr(step, "split"))
    runs = counting_runs(plan)
    total, largest, smallest = compiled(x_tensor)
    assert runs == [1]
    np.testing.assert_allclose(total.numpy(), np.tanh(x).sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(largest.numpy(), x.max(0))
    np.testing.assert_array_equal(smallest.numpy(), x.min(0))
    assert np.isnan(largest.numpy()[[7, 9]]).all()


def test_a_kernel_error_in_the_program_raises_eagers_error():
    compiled = autojit.compile(lambda x, divisor: (x // divisor).sum())
    x = autojit.tensor(np.arange(1, 7, dtype=np.int64))
    divisor = autojit.tensor(np.full(6, 2, dtype=np.int64))
    for _ in range(3):
        assert compiled(x, divisor).item() == (np.arange(1, 7) // 2).sum()
    assert plan_of(compiled).program
    zero = autojit.tensor(np.array([2, 2, 0, 2, 2, 2], dtype=np.int64))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        compiled(x, zero)
    assert compiled(x, divisor).item() == (np.arange(1, 7) // 2).sum()


def test_a_plan_with_an_eager_node_keeps_its_python_loop():
    # Elements at pairs of indices: two index tensors run through NumPy (rows at one index
    # tensor run natively, codegen/cpu/rows.py).
    compiled = autojit.compile(lambda x, index: (x[index, index] * 3).sum())
    x, index = tensor(20, 20), autojit.tensor(np.array([3, 1, 4, 1, 5]))
    for _ in range(4):
        result = compiled(x, index)
    plan = plan_of(compiled)
    assert plan.program is False and "index" in plan.program_refusal
    assert compiled.fusion_groups().endswith(f"Python loop: {plan.program_refusal}")
    np.testing.assert_allclose(result.item(), x.numpy()[[3, 1, 4, 1, 5], [3, 1, 4, 1, 5]].sum()
                               * 3, rtol=1e-6)


def test_rows_at_indices_on_a_later_dim_run_in_the_program():
    """Columns at indices (`x[:, index]`), a decoding cache written at a position along its
    third dim from values transposed into place (`keys.index_copy_(2, position, states)`), and
    rows added at repeated indices along the second dim: each block of the dims before the
    indexed one is a native rows call, so the plan still runs as one native program: the
    cache and the added rows are eager's to the last bit (the sums, up to their order)."""
    gather = autojit.compile(lambda x, index: (x[:, index] * 3).sum(0))
    x, index = tensor(4, 20), autojit.tensor(np.array([3, 1, 4, 1, 5]))

    def cache_step(keys, states, position):
        keys.index_copy_(2, position, states.transpose(1, 2))
        return keys.sum(-1)

    def add_step(table, rows, index):
        return table.index_add(1, index, rows * 2)

    cache = autojit.compile(cache_step)
    adding = autojit.compile(add_step)
    table, rows = tensor(3, 6, 5), tensor(3, 4, 5)
    repeated = autojit.tensor(np.array([2, 0, 2, 5]))
    keys, eager_keys = autojit.zeros(2, 3, 8, 4), autojit.zeros(2, 3, 8, 4)
    for step in range(6):
        states = tensor(2, 1, 3, 4)
        position = autojit.tensor([step])
        np.testing.assert_allclose(cache(keys, states, position).numpy(),
                                   cache_step(eager_keys, states, position).numpy(), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_array_equal(keys.numpy(), eager_keys.numpy())
        np.testing.assert_allclose(gather(x, index).numpy(), (x[:, index] * 3).sum(0).numpy(),
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(adding(table, rows, repeated).numpy(),
                                      add_step(table, rows, repeated).numpy())
    for compiled in (gather, cache, adding):
        plan = plan_of(compiled)
        assert plan.program, plan.program_refusal


def test_profiling_a_call_runs_the_steps_one_by_one():
    compiled = autojit.compile(lambda x, w: (x @ w).tanh().sum())
    x, w = tensor(32, 32), tensor(32, 32)
    for _ in range(3):
        compiled(x, w)
    runs = counting_runs(plan_of(compiled))
    with profiler.profile() as profile:
        compiled(x, w)
    names = [event.name for event in profile.function_events]
    assert runs == [] and "autojit::matmul" in names
    assert any(name.startswith("autojit::kernel") for name in names)


def test_two_threads_calling_one_function_both_get_their_results():
    compiled = autojit.compile(lambda x: (x * x).sum(1) + 1)
    inputs = [tensor(256, 512) for _ in range(2)]
    for _ in range(3):
        compiled(inputs[0])
    assert plan_of(compiled).program
    results: dict = {}

    def work(number):
        for _ in range(50):
            results[number] = compiled(inputs[number]).numpy().copy()
            np.testing.assert_allclose(results[number],
                                       (inputs[number].numpy() ** 2).sum(1) + 1, rtol=1e-4)

    threads = [threading.Thread(target=work, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results) == {0, 1}


def test_results_that_are_views_of_the_calls_arrays_are_rebuilt_each_call():
    compiled = autojit.compile(lambda x: ((x * 2).exp().t(), (x + 1).tanh().reshape(-1)))
    x = tensor(24, 40)
    for _ in range(3):
        compiled(x)
    runs = counting_runs(plan_of(compiled))
    first = compiled(x)
    other = tensor(24, 40)
    second = compiled(other)
    assert runs == [1, 1]
    np.testing.assert_allclose(first[0].numpy(), np.exp(x.numpy() * 2).T, rtol=1e-5)
    np.testing.assert_allclose(second[0].numpy(), np.exp(other.numpy() * 2).T, rtol=1e-5)
    np.testing.assert_allclose(second[1].numpy(), np.tanh(other.numpy() + 1).reshape(-1),
                               rtol=1e-5, atol=1e-6)
    assert second[0].shape == (40, 24) and second[1].shape == (960,)


def test_one_tensor_passed_as_two_arguments_keeps_the_python_loop():
    compiled = autojit.compile(lambda x, y: (x * y + x).sum(0))
    x = tensor(16, 16)
    for _ in range(4):
        result = compiled(x, x)
    plan = plan_of(compiled)
    assert plan.program is False and "share memory" in plan.program_refusal
    np.testing.assert_allclose(result.numpy(), (x.numpy() ** 2 + x.numpy()).sum(0), rtol=1e-5)


def test_a_returned_grad_is_the_grad_and_never_written_by_a_later_call():
    """`return w.grad` after the function set it to None and ran backward: the program hands
    the gradient's array to w.grad without a copy (the result the template dropped for it is
    unread: executable._unread_results), and each call's is its own array."""
    weight = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def step(x):
        weight.grad = None
        (x * weight).sin().sum().backward()
        return weight.grad

    compiled = autojit.compile(step)
    inputs = [autojit.tensor([0.5, -1.0, 2.0 + number]) for number in range(5)]
    results = [compiled(x) for x in inputs]
    assert results[-1] is weight.grad
    program = compiled.executables[0].plan.program
    assert program and program.owned_outputs == {1}  # w.grad; the dropped result is 0
    for x, result in zip(inputs, results):
        expected = x.numpy() * np.cos(x.numpy() * weight.detach().numpy())
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
    assert len({id(result._payload) for result in results}) == len(results)


def test_ranges_find_the_array_a_pointer_lies_in_as_a_scan_in_order_would():
    """_Ranges keeps its arrays sorted with the reach of each prefix (a GPT step's assembly
    made 5,097 lookups over hundreds of arrays); a lookup must give what a scan of the arrays
    in the order added gives: the first that holds the byte, overlapping views included."""
    from numpy.lib.array_utils import byte_bounds

    from autojit.codegen.cpu.program import _Ranges

    rng = np.random.default_rng(0)
    for _ in range(20):
        pool = np.zeros(4096, np.uint8)
        ranges, added = _Ranges(), []
        for name in range(int(rng.integers(1, 40))):
            start = int(rng.integers(0, 4000))
            array = pool[start:start + int(rng.integers(0, 96))]  # views overlap; some empty
            if rng.random() < 0.2:
                array = np.zeros(int(rng.integers(1, 64)), np.uint8)  # memory of its own
            ranges.add(name, array)
            low, high = byte_bounds(array)
            added.append((low, max(high, low + 1), name, workers.data_address(array)))
            for pointer in (low - 1, low, high - 1, high, int(rng.integers(low - 64, high + 64))):
                expected = next(((name_, pointer - base) for low_, high_, name_, base in added
                                 if low_ <= pointer < high_), None)
                assert ranges.find(pointer) == expected
