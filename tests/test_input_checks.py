"""The runner's check of a native program's inputs (codegen/cpu/input_checks.py): the table made
from a recorded call's arrays passes arrays laid out the same and refuses every difference
the Python checks would refuse; a compiled step's calls run without the Python checks, and a
call the table refuses falls back to them and stays correct."""

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import input_checks, program, workers
from autojit.codegen.cpu import jit as cpu

pytestmark = pytest.mark.skipif(workers.shared() is None,
                                reason="no native workers here (not x86-64 Linux)")
generator = np.random.default_rng(7)


def fields():
    found = input_checks.array_fields(cpu.backend().object_layout[1])
    assert found is not None  # NumPy's object layout was recognized
    return found


def recorded():
    """Three arrays like a recorded call's: a weight written in place (target), an input and
    a strided one."""
    return [np.zeros((16, 8), np.float32), np.zeros((4, 16), np.float32),
            np.zeros((6, 10), np.float64)[:, ::2]]


def test_arrays_laid_out_as_recorded_pass():
    table = input_checks.table(recorded(), [0], fields())
    assert input_checks.passes(table, recorded())
    assert input_checks.passes(table, [*recorded(), np.zeros(3)])  # fresh arrays after them


@pytest.mark.parametrize("position, replacement", [
    (1, np.zeros((4, 17), np.float32)),  # a dimension
    (1, np.zeros((4, 16, 1), np.float32)),  # the number of dimensions
    (1, np.zeros((4, 16), np.float64)),  # the dtype
    (2, np.zeros((6, 5), np.float64)),  # the strides
    (0, np.zeros((8, 16), np.float32).T),  # a target's strides
    (1, np.zeros((4, 16), np.dtype(np.float32, metadata={"equal": "not the same object"}))),
    (1, [[0.0] * 16] * 4),  # not an ndarray: its fields are never read
    (1, np.zeros((4, 16), np.float32).view(type("Subclass", (np.ndarray,), {}))),
])
def test_a_different_layout_dtype_or_type_is_refused(position, replacement):
    table = input_checks.table(recorded(), [0], fields())
    arrays = recorded()
    arrays[position] = replacement
    assert not input_checks.passes(table, arrays)


def test_a_read_only_target_is_refused_and_a_read_only_input_passes():
    table = input_checks.table(recorded(), [0], fields())
    arrays = recorded()
    arrays[1].flags.writeable = False
    assert input_checks.passes(table, arrays)
    arrays[0].flags.writeable = False
    assert not input_checks.passes(table, arrays)


def test_a_target_overlapping_another_input_is_refused():
    table = input_checks.table(recorded(), [0], fields())
    arrays = recorded()
    arrays[1] = arrays[0].reshape(8, 16)[:4]  # the target's first rows, laid out as recorded
    assert not input_checks.passes(table, arrays)
    # Inputs that overlap each other but no target are only read: they pass.
    shared = np.zeros((8, 16), np.float32)
    arrays = recorded()
    untargeted = input_checks.table(arrays, [], fields())
    arrays[1] = shared[:4]
    assert input_checks.passes(untargeted, [arrays[0], arrays[1], arrays[2]])
    arrays[0] = shared.reshape(16, 8)
    assert input_checks.passes(untargeted, arrays)


def training_step(weight, bias):
    def step(x):
        loss = ((x @ weight + bias).relu() ** 2).sum()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.01 * weight.grad)
            bias.sub_(0.01 * bias.grad)
        weight.grad = bias.grad = None
        return loss
    return step


def test_a_step_runs_on_the_runners_check_and_falls_back_when_it_refuses(monkeypatch):
    values = [generator.standard_normal((16, 16)).astype(np.float32) * 0.3,
              generator.standard_normal(16).astype(np.float32) * 0.3]
    weight, bias = (autojit.tensor(v.copy(), requires_grad=True) for v in values)
    eager_weight, eager_bias = (autojit.tensor(v.copy(), requires_grad=True) for v in values)
    compiled = autojit.compile(training_step(weight, bias))
    eager = training_step(eager_weight, eager_bias)
    x = autojit.tensor(generator.standard_normal((16, 16)).astype(np.float32))
    for _ in range(3):
        compiled(x)
        eager(x)
    (executable,) = compiled.executables
    assert executable.plan.program, executable.plan.program_refusal
    python_checks = []
    original = program.Program._inputs_match

    def counted(self, plan, inputs):
        python_checks.append(1)
        return original(self, plan, inputs)

    monkeypatch.setattr(program.Program, "_inputs_match", counted)
    for _ in range(3):
        np.testing.assert_allclose(compiled(x).item(), eager(x).item(), rtol=1e-5)
    assert python_checks == []
    # The input is the weight's own storage: the weight may not be written in place while
    # the step reads it, so the table refuses and Python's checks decline the program.
    shared = weight.detach()
    eager_shared = eager_weight.detach()
    np.testing.assert_allclose(compiled(shared).item(), eager(eager_shared).item(), rtol=1e-5)
    assert python_checks == [1]
    for mine, theirs in ((weight, eager_weight), (bias, eager_bias)):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
