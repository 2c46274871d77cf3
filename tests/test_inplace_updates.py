"""In-place update outputs (codegen/schedule/in_place.py): a compiled step's kernels store the new
values of parameters and optimizer state straight into the tensors' storage, with no copy at
write-back, and every unsafe case (a later read of the old value, a transposed or broadcast read of
it, a result holding the new value, anomaly mode, overlapping or non-contiguous storage, a kernel
that may raise) falls back to the copy path with eager's values.
"""

import warnings

import numpy as np
import pytest

import autojit
import autojit.nn as nn
import autojit.nn.functional as F
from autojit.codegen.schedule.fusion import build_plan
from autojit.codegen.schedule.steps import KernelStep
from autojit.compiler.api import CompileWarning
from autojit.compiler.executable import Executable
from autojit.ir.graph import Graph
from autojit.ir.interpreter import interpret
from autojit.ops.registry import REGISTRY
from autojit.tensor import dtypes


def in_place_count(compiled) -> int:
    return compiled.executables[0].plan.describe().count("store in place")


def spy_updates(compiled) -> list:
    """Wrap the plan so each call records (update array, target tensor's data) pairs."""
    executable = compiled.executables[0]
    plan, seen = executable.plan, []
    run_owning = plan.run_owning

    def recording(arrays):
        results, owned = run_owning(arrays)
        seen.extend((results[index], output.target.tensor._payload)
                    for index, output in enumerate(executable.graph.outputs)
                    if output.kind == "update")
        return results, owned

    plan.run_owning = recording
    return seen


def both(make, calls, *args):
    """Run the function `make(tensors)` builds, compiled and eagerly, on fresh tensors made by
    `args` (callables); the compiled function, and per mode (results, tensors)."""
    runs = {}
    for compiled in (True, False):
        tensors = [make_tensor() for make_tensor in args]
        function = make(*tensors)
        step = autojit.compile(function) if compiled else function
        results = [step().numpy().copy() for _ in range(calls)]
        runs[compiled] = (results, tensors, step)
    for mine, theirs in zip(runs[True][0], runs[False][0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6)
    for mine, theirs in zip(runs[True][1], runs[False][1]):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-6,
                                   atol=1e-6)
    return runs[True][2]


def square():
    return autojit.tensor(np.arange(16, dtype=np.float32).reshape(4, 4) / 7)


# ---- written in place -------------------------------------------------------------------------

def test_sgd_step_stores_parameters_in_their_own_storage():
    generator = np.random.default_rng(0)
    x = autojit.tensor(generator.standard_normal((8, 6)).astype(np.float32))
    initial = [generator.standard_normal(shape).astype(np.float32) for shape in ((6, 5), (5,))]

    def make():
        parameters = [autojit.tensor(array, requires_grad=True) for array in initial]

        def step():
            loss = (x @ parameters[0] + parameters[1]).tanh().sum()
            loss.backward()
            with autojit.no_grad():
                for parameter in parameters:
                    parameter.sub_(0.1 * parameter.grad)
                    parameter.grad = None
            return loss.detach()
        return parameters, step

    parameters, step = make()
    compiled = autojit.compile(step)
    compiled()
    assert in_place_count(compiled) == 2
    seen = spy_updates(compiled)
    storage = [(parameter._payload, parameter._payload.ctypes.data) for parameter in parameters]
    versions = [parameter._version for parameter in parameters]
    losses = [compiled().item() for _ in range(3)]
    # The update outputs are the parameters' own arrays: write-back has nothing to copy.
    assert len(seen) == 6 and all(array is data for array, data in seen)
    for parameter, (array, pointer), version in zip(parameters, storage, versions):
        assert parameter._payload is array and parameter._payload.ctypes.data == pointer
        assert parameter._version == version + 3  # one bump per update, as on the copy path

    eager_parameters, eager_step = make()
    eager_losses = [eager_step().item() for _ in range(4)]
    np.testing.assert_allclose(losses, eager_losses[1:], rtol=1e-5)
    for mine, theirs in zip(parameters, eager_parameters):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
def test_optimizer_state_is_updated_in_place_and_equals_eager(name):
    generator = np.random.default_rng(1)
    x = autojit.tensor(generator.standard_normal((16, 12)).astype(np.float32))
    y = autojit.tensor(generator.integers(0, 5, 16))
    results = {}
    for compiled in (True, False):
        autojit.manual_seed(0)
        model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))
        if name == "adam":
            optimizer = autojit.optim.Adam(model.parameters(), lr=1e-2)
        else:
            optimizer = autojit.optim.SGD(model.parameters(), lr=0.05, momentum=0.9,
                                          weight_decay=1e-3)

        def step(model=model, optimizer=optimizer):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        losses = [function().item() for _ in range(5)]
        results[compiled] = (losses, model, optimizer, function)
    losses, model, optimizer, function = results[True]
    np.testing.assert_allclose(losses, results[False][0], rtol=2e-5)
    for mine, theirs in zip(model.parameters(), results[False][1].parameters()):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-6)
        state, eager_state = optimizer.state[mine], results[False][2].state[theirs]
        for key in state:
            np.testing.assert_allclose(np.asarray(state[key].tolist()),
                                       np.asarray(eager_state[key].tolist()), rtol=1e-4,
                                       atol=1e-7, err_msg=key)
    # Parameters and their momentum buffer (SGD) or moments and step (Adam), each in place.
    per_parameter = 2 if name == "sgd-momentum" else 4
    assert in_place_count(function) == per_parameter * 4


def test_a_kernel_split_over_cores_writes_in_place():
    initial = np.random.default_rng(2).standard_normal((512, 512)).astype(np.float32)
    x = autojit.tensor(np.ones((512, 512), np.float32))

    def make(weight):
        def step():
            with autojit.no_grad():
                weight.mul_(0.5).add_(x * 0.25)
            return weight.sum()
        return step

    compiled = both(make, 3, lambda: autojit.tensor(initial.copy()))
    assert in_place_count(compiled) == 1


# ---- unsafe cases fall back to the copy path --------------------------------------------------

def hand_made(build):
    """A graph over one captured 4x4 tensor; `build(graph, captured)` adds nodes and returns
    (result value, new value of the tensor). Runs its plan through an Executable and checks
    the result and the tensor against the reference interpreter."""
    weight = square()
    graph = Graph()
    captured = graph.add_input((4, 4), dtypes.float32, "captured", "weight", weight)
    result, new = build(graph, captured)
    graph.add_output(result, "out0")
    graph.add_output(new, "weight.update", "update", graph.inputs[0])
    plan = build_plan(graph)
    executable = Executable(graph, graph, ("tensor", 0), [], None, [], plan)
    for _ in range(2):
        expected_result, expected_weight = interpret(graph)
        result = executable.run(())
        np.testing.assert_allclose(result.numpy(), expected_result)
        np.testing.assert_allclose(weight.numpy(), expected_weight)
    assert weight._version == 2
    return plan


def node(graph, name, inputs, attrs=None):
    return graph.add_node(REGISTRY[name], inputs, attrs or {}, (4, 4), dtypes.float32)


def test_a_later_read_of_the_old_value_falls_back():
    # The matmul reads the new value (so it runs after the kernel) and the old one.
    plan = hand_made(lambda graph, weight: (
        node(graph, "matmul", [new := node(graph, "sub", [weight, 0.5]), weight]), new))
    assert "in place" not in plan.describe()


def test_a_later_read_of_a_view_of_the_old_value_falls_back():
    def build(graph, weight):
        transposed = node(graph, "permute", [weight], {"dims": (1, 0)})
        new = node(graph, "sub", [weight, 0.5])
        return node(graph, "matmul", [new, transposed]), new

    plan = hand_made(build)
    assert "in place" not in plan.describe()


def test_an_earlier_read_of_the_old_value_keeps_in_place():
    def build(graph, weight):
        product = node(graph, "matmul", [weight, weight])
        return product, node(graph, "sub", [weight, 0.5])

    plan = hand_made(build)
    assert plan.describe().count("store in place") == 1


def test_a_transposed_read_in_the_writing_kernel_falls_back():
    def make(weight):
        def step():
            with autojit.no_grad():
                weight.sub_(0.1 * weight.t())
            return weight + 1
        return step

    assert in_place_count(both(make, 3, square)) == 0


def test_a_broadcast_read_in_the_writing_kernel_falls_back():
    def make(weight):
        def step():
            with autojit.no_grad():
                weight.sub_(weight[:1])
            return weight + 1
        return step

    assert in_place_count(both(make, 3, square)) == 0


def test_a_store_not_depending_on_the_read_of_the_old_value_falls_back():
    # Nothing orders the load of the old value before the store of the new one.
    x = autojit.tensor(np.full((4, 4), 3.0, np.float32))

    def make(weight):
        def step():
            before = weight + 1
            with autojit.no_grad():
                weight.copy_(x * 0.5)
            return before
        return step

    compiled = both(make, 3, square)
    assert in_place_count(compiled) == 0
    assert compiled.executables[0].plan.kernel_count == 1


def test_a_returned_written_tensor_is_the_tensor_itself():
    # Eager returns the very tensor it wrote; so does the compiled call (result_template.py),
    # after storing the update into that tensor's own storage.
    def make(weight):
        def step():
            with autojit.no_grad():
                weight.sub_(0.5)
            return weight
        return step

    compiled = both(make, 3, square)
    assert in_place_count(compiled) == 1
    weight = compiled.executables[0].graph.inputs[0].tensor
    assert compiled() is weight


def test_anomaly_mode_keeps_the_copy_path():
    def make(weight):
        def step():
            loss = (weight * weight).sqrt().sum()
            loss.backward()
            with autojit.no_grad():
                weight.sub_(0.1 * weight.grad)
            weight.grad = None
            return loss.detach()
        return step

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autojit.autograd.detect_anomaly():
            compiled = both(make, 3, lambda: autojit.tensor([1.0, 4.0], requires_grad=True))
            assert in_place_count(compiled) == 0
            weight = compiled.executables[0].graph.captured_inputs[0].tensor
            weight.data.copy_(autojit.tensor([0.0, 4.0]))  # sqrt's gradient at 0 is inf * 0
            with pytest.raises(RuntimeError, match="returned nan"):
                compiled()
            assert weight.tolist() == [0.0, 4.0]  # nothing written before the check


def test_an_integer_kernel_keeps_the_copy_path():
    # A kernel that can report an error (integer pow) raises only after its loop has stored.
    def make(counter):
        def step():
            with autojit.no_grad():
                counter.add_(3)
            return counter * 2
        return step

    compiled = both(make, 3, lambda: autojit.tensor([1, 2, 3]))
    assert in_place_count(compiled) == 0


def test_an_error_after_the_write_leaves_the_update_and_its_version_as_eager_does():
    def make(weight):
        def step():
            with autojit.no_grad():
                weight.sub_(0.5)
            return weight.sum().to(autojit.int64) ** -1  # raises, after the update's kernel
        return step

    final = {}
    for compiled in (True, False):
        weight = square()
        step = autojit.compile(make(weight)) if compiled else make(weight)
        for _ in range(2):
            with pytest.raises(RuntimeError, match="negative integer powers"):
                step()
        final[compiled] = (weight.numpy().copy(), weight._version)
        if compiled:
            assert in_place_count(step) == 1
    np.testing.assert_allclose(final[True][0], final[False][0])
    assert final[True][1] == final[False][1] == 2


# ---- run-time checks --------------------------------------------------------------------------

def kernel_steps(compiled) -> list:
    return [step for step in compiled.executables[0].plan.steps if isinstance(step, KernelStep)]


def test_an_argument_overlapping_the_written_storage_runs_eagerly():
    # Eager's `x * 1` reads x after the write to weight, which x overlaps: the graph, which
    # reads its inputs before writing back, cannot give that, so such a call runs eagerly.
    results = {}
    for compiled_mode in (True, False):
        base = np.arange(40, dtype=np.float32)
        weight = autojit.from_numpy(base[8:])  # a view: the argument below overlaps it shifted
        shifted = autojit.from_numpy(base[:-8])

        def step(x):
            with autojit.no_grad():
                weight.sub_(x * 0.5 + 1)  # noqa: B023 - each mode has its own weight
            return x * 1

        function = autojit.compile(step) if compiled_mode else step
        function(autojit.tensor(np.zeros(32, np.float32)))
        if compiled_mode:
            with pytest.warns(CompileWarning, match="shares memory with another input"):
                returned = [function(shifted).numpy() for _ in range(2)]
        else:
            returned = [function(shifted).numpy() for _ in range(2)]
        results[compiled_mode] = (returned, weight.numpy().copy())
        if compiled_mode:
            assert in_place_count(function) == 1  # the non-overlapping call ran compiled
    for mine, theirs in zip(results[True][0], results[False][0]):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(results[True][1], results[False][1])


def test_captured_tensors_sharing_memory_fall_back_at_run_time():
    base = np.arange(40, dtype=np.float32)
    first = autojit.tensor(np.zeros(32, np.float32))
    second = autojit.tensor(np.zeros(32, np.float32))

    def step():
        doubled = second * 2  # read before the update, in the kernel that writes `first`
        with autojit.no_grad():
            first.sub_(0.5)
        return doubled

    compiled = autojit.compile(step)
    compiled()
    assert in_place_count(compiled) == 1
    first.data = autojit.from_numpy(base[8:])
    second.data = autojit.from_numpy(base[:-8])  # overlaps `first`, shifted
    seen = spy_updates(compiled)
    result = compiled()
    np.testing.assert_allclose(result.numpy(), np.arange(32) * 2)  # eager's: read before
    np.testing.assert_allclose(base, np.r_[np.arange(8), np.arange(8, 40) - 0.5])
    assert all(array is not data for array, data in seen)


def test_non_contiguous_storage_falls_back_at_run_time():
    weight = square()

    def step():
        with autojit.no_grad():
            weight.mul_(2)
        return weight + 1

    compiled = autojit.compile(step)
    compiled()
    assert in_place_count(compiled) == 1
    storage = np.arange(16, dtype=np.float32).reshape(4, 4)
    weight.data = autojit.from_numpy(storage.T)  # a transposed view: not C-contiguous
    assert np.shares_memory(weight._payload, storage) and not weight._payload.flags.c_contiguous
    result = compiled()
    np.testing.assert_allclose(storage, np.arange(16, dtype=np.float32).reshape(4, 4) * 2)
    np.testing.assert_allclose(result.numpy(), storage.T + 1)
