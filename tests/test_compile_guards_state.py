"""Guard staleness in Python state of other kinds than test_compile_guards.py's categories.

The order of a dict's keys, a global that did not exist when traced (a builtin shadowed
later), a metaclass attribute, sets of objects, deques, bytearrays and array.array buffers,
the object a weakref refers to, a tensor read only for its shape or requires_grad or
returned as it is, and NumPy arrays whose values the function reads in Python: each changed
between two calls must be seen (tests/guard_staleness.py runs the programs).
"""

from __future__ import annotations

import array
import collections
import warnings
import weakref

import numpy as np
import pytest

import autojit
from autojit import CompileWarning
from autojit.compiler.reachability import MAX_ARRAY_BYTES

pytest.importorskip("torch")
from guard_staleness import X, check, guard_source, tensor  # noqa: E402, F401


def _fold(x, items):
    for _, value in items:
        x = x * 2 + value
    return x


def test_the_order_of_a_dicts_keys():
    def program(lib, wrap):
        weights = {"a": 1.0, "b": -2.0}
        f = wrap(lambda x: _fold(x, weights.items()))
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        weights["a"] = weights.pop("a")  # the same keys and values, another order
        yield f(x)

    check(program, [2])


def test_the_order_of_attributes_and_of_an_ordered_dict():
    class Settings:
        pass

    def program(lib, wrap):
        settings = Settings()
        settings.a, settings.b = 1.0, -2.0
        ordered = collections.OrderedDict(c=0.5, d=3.0)
        f = wrap(lambda x: _fold(_fold(x, vars(settings).items()), ordered.items()))
        x = tensor(lib, X)
        yield f(x)
        del settings.a
        settings.a = 1.0
        yield f(x)
        ordered.move_to_end("c")
        yield f(x)

    check(program, [3])


def test_the_modules_of_a_sequential_reordered():
    def program(lib, wrap):
        model = lib.nn.Sequential(lib.nn.Tanh(), lib.nn.ReLU())
        f = wrap(lambda x: model(x - 1) * 1)
        x = tensor(lib, X)
        yield f(x)
        model._modules["0"] = model._modules.pop("0")  # ReLU, then Tanh
        yield f(x)

    check(program, [2])


def _shadowing():
    return abs(-2.0)


def test_a_global_defined_after_the_trace_shadows_a_builtin():
    def program(lib, wrap):
        f = wrap(lambda x: x * _shadowing())
        x = tensor(lib, X)
        yield f(x)
        globals()["abs"] = lambda value: 5.0
        try:
            yield f(x)
        finally:
            del globals()["abs"]
        yield f(x)

    check(program, [2])


def test_a_metaclass_attribute():
    def program(lib, wrap):
        class Meta(type):
            factor = 2.0

        class Model(metaclass=Meta):
            pass

        f = wrap(lambda x: x * Model.factor)
        x = tensor(lib, X)
        yield f(x)
        Meta.factor = -3.0
        yield f(x)

    check(program, [2])


def test_a_set_of_tuples_and_the_objects_in_a_set():
    class Scale:
        def __init__(self, value):
            self.value = value

    def program(lib, wrap):
        flags = {("mode", 1)}
        scales = {Scale(2.0)}
        f = wrap(lambda x: sum((x * scale.value for scale in scales),
                               x * (2 if ("mode", 1) in flags else 3)))
        x = tensor(lib, X)
        yield f(x)
        flags.clear()
        flags.add(("mode", 2))  # the same length, other contents
        yield f(x)
        next(iter(scales)).value = -1.0  # an attribute of an object in a set
        yield f(x)
        scales.clear()
        scales.add(Scale(4.0))
        yield f(x)

    check(program, [4])


def test_a_deque_a_bytearray_and_an_array_of_scalars():
    def program(lib, wrap):
        queue = collections.deque([1.0, 2.0])
        raw = bytearray(b"ab")
        values = array.array("d", [0.5])
        f = wrap(lambda x: x * queue[0] + (1 if raw[0] == ord("a") else -1) + values[0])
        x = tensor(lib, X)
        yield f(x)
        queue.rotate(1)
        yield f(x)
        raw[0] = ord("z")
        yield f(x)
        values[0] = 4.0
        yield f(x)

    check(program, [4])


def test_the_object_a_weakref_refers_to():
    class Config:
        scale = 2.0

    def program(lib, wrap):
        config = Config()
        reference = weakref.ref(config)
        f = wrap(lambda x: x * reference().scale)
        x = tensor(lib, X)
        yield f(x)
        config.scale = 5.0
        yield f(x)

    check(program, [2])


def test_a_tensor_read_only_for_its_metadata_and_a_tensor_returned_as_it_is():
    def program(lib, wrap):
        state = {"t": tensor(lib, [1.0, 2.0])}
        f = wrap(lambda x: (x * state["t"].shape[0] + (1 if state["t"].requires_grad else 0),
                            state["t"]))  # its values never read by the graph
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        state["t"] = tensor(lib, [1.0, 2.0, 3.0])  # another shape
        yield f(x)
        state["t"].requires_grad_()
        yield f(x)
        state["t"] = tensor(lib, [5.0, 6.0, 7.0], requires_grad=True)  # returned: itself
        yield f(x)

    check(program, [4])


# ---- NumPy arrays -------------------------------------------------------------------------------

def test_numpy_values_read_in_python():
    def program(lib, wrap):
        table = np.array([2.0, 3.0])
        scalar = np.array(0.5)
        f = wrap(lambda x: x * float(np.sum(table[0])) + scalar.item() + table.ndim)
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        table[0] = -1.0
        yield f(x)
        scalar[()] = 4.0
        yield f(x)
        table.shape = (2, 1)  # the same bytes, another shape
        yield f(x)

    check(program, [4])


def test_an_array_the_graph_reads_is_not_compared():
    # autojit.tensor(array) inside the function is read when the graph runs: new values in it
    # need no new trace.
    table = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    compiled = autojit.compile(lambda x: x * autojit.tensor(table))
    for value in (1.0, 5.0, -2.0):
        table[0] = value
        assert compiled(autojit.ones(3)).tolist() == [value, 2.0, 3.0]
    assert len(compiled.executables) == 1


def test_arrays_too_large_to_compare_on_every_call_run_eagerly():
    table, calls = np.zeros(MAX_ARRAY_BYTES // 8 + 1), []

    def program(x):
        calls.append(len(calls))
        return x * float(table[-1])

    compiled = autojit.compile(program)
    with pytest.warns(CompileWarning, match="NumPy arrays of more than"):
        assert compiled(autojit.ones(2)).tolist() == [0.0, 0.0]
    assert len(calls) == 1  # what the trace appended was undone before the eager run
    table[-1] = 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        assert compiled(autojit.ones(2)).tolist() == [3.0, 3.0]
    assert compiled.executables == [] and len(calls) == 2


def test_a_function_writing_into_an_array_writes_on_every_call():
    def run(compiled):
        counts = np.zeros(1)

        def count(x):
            counts[0] += 1
            return x * float(counts[0])

        function = autojit.compile(count) if compiled else count
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            results = [function(autojit.ones(2)).tolist() for _ in range(4)]
        if compiled:  # each trace wrote the array: it served its own call, then eager
            assert function.executables == []
            assert "every call changes Python state" in function.eager_reason
        return results, counts.tolist()

    assert run(True) == run(False) == ([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]],
                                       [4.0])


def test_a_call_that_runs_eagerly_after_its_trace_does_its_python_writes_once():
    # A graph break after a write into an array (.item()), and arguments that overlap a
    # written one (seen after the trace): the trace's writes are undone before the eager run.
    def run(compiled):
        counts, calls = np.zeros(1), []

        def breaks(x):
            counts[0] += 1
            return x * (x.sum().item() + counts[0])

        def overlapping(a, b):
            calls.append(len(calls))
            a.add_(1)
            return b * 2

        wrap = autojit.compile if compiled else (lambda fn: fn)
        first, second = wrap(breaks), wrap(overlapping)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            results = []
            for _ in range(3):
                x = autojit.zeros(2)
                results.append((first(autojit.ones(2)).tolist(), second(x, x).tolist()))
        return results, counts.tolist(), calls

    assert run(True) == run(False)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "detect_anomaly",
                                  "saved_tensors_hooks"])
def test_each_mode_around_the_call_is_guarded(mode):
    """The mode guards read one summary of the modes when the call is made as traced (grad
    mode on, nothing else): each mode entered around a later call still misses them."""
    weight = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    compiled = autojit.compile(lambda x: (x * weight).sin().sum())
    x = autojit.tensor([0.5, -1.0, 2.0])
    compiled(x)
    contexts = {"no_grad": autojit.no_grad, "inference_mode": autojit.inference_mode,
                "detect_anomaly": autojit.autograd.detect_anomaly,
                "saved_tensors_hooks": lambda: autojit.autograd.graph.saved_tensors_hooks(
                    lambda tensor: tensor, lambda tensor: tensor)}
    executable = compiled.executables[0]
    assert executable.guards.failure((x,)) is None
    with contexts[mode]():
        reason = executable.guards.failure((x,))
        result = compiled(x)
    assert reason is not None and ("changed" in reason or "saved tensor hooks" in reason)
    expected = (x * weight).sin().sum()
    assert abs(result.item() - expected.item()) < 1e-6


def test_unfreezing_a_layer_after_the_first_step_stays_compiled():
    # The first step makes Adam's state for the trainable layer, the second (after the caller
    # unfroze the other) for the other: two consecutive traces that change structure, then
    # the step settles and compiles.
    def run(compiled):
        autojit.manual_seed(0)
        model = autojit.nn.Sequential(autojit.nn.Linear(3, 4), autojit.nn.Tanh(),
                                      autojit.nn.Linear(4, 1))
        model[0].weight.requires_grad_(False)
        optimizer = autojit.optim.Adam(model.parameters(), lr=0.1)
        x = autojit.randn(8, 3)

        def step():
            optimizer.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        losses = []
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            for call in range(5):
                losses.append(function().item())
                if call == 0:
                    model[0].weight.requires_grad_(True)
        if compiled:
            assert function.eager_reason is None and len(function.executables) == 1
        return losses, [p.detach().numpy() for p in model.parameters()]

    (eager_losses, eager_parameters), (losses, parameters) = run(False), run(True)
    # The loss falls below 1e-3: float32 rounding of the two orders, absolute near 1e-9.
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6, atol=1e-8)
    for mine, want in zip(parameters, eager_parameters, strict=True):
        np.testing.assert_allclose(mine, want, rtol=1e-5, atol=1e-7)


def test_a_class_whose_module_is_a_descriptor_and_a_system_random_are_walked():
    """Two objects a GPU machine's process reached that the walk over a function's state
    raised on: a class whose `__module__` is a descriptor (cuda-bindings' C types) and
    random.SystemRandom, whose getstate() raises NotImplementedError. The first is a library's
    class; the second has no state to guard."""
    import random

    odd = type("Odd", (), {"__module__": property(lambda self: "elsewhere"), "scale": 2.0})
    assert not isinstance(odd.__module__, str)
    entropy = random.SystemRandom()

    def function(x):
        assert entropy is not None and odd is not None
        return x * 2.0

    compiled = autojit.compile(function)
    x = autojit.ones(3)
    np.testing.assert_array_equal(compiled(x).numpy(), np.full(3, 2.0, np.float32))
    assert compiled.eager_reason is None


def test_numpy_ma_masked_and_a_masked_array_in_the_state_a_function_reads():
    """np.ma.masked refuses the fill_value its tobytes() would set: the walk compares a masked
    array's data and mask instead (a GPU machine's op table reached np.ma.masked, with NumPy
    on PYTHONPATH, and every compiled call raised AttributeError). A change to the mask
    between calls is still seen."""
    state = {"masked": np.ma.masked,
             "weights": np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])}

    def function(x):
        assert state["masked"] is np.ma.masked
        return x * float(state["weights"].sum())

    compiled = autojit.compile(function)
    x = autojit.ones(3)
    np.testing.assert_array_equal(compiled(x).numpy(), np.full(3, 4.0, np.float32))
    state["weights"].mask = [False, False, False]
    np.testing.assert_array_equal(compiled(x).numpy(), np.full(3, 6.0, np.float32))
    assert "numpy" in str(autojit.compiler.library_code.LIBRARY_ROOTS)
