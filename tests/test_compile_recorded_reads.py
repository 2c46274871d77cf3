"""Guards from what the trace read (compiler/recorder.py, read_selection.py).

State a compiled function can reach but did not read changes between calls without a
retrace (an optimizer's history the step never looks at, a cache an eager call replaces, a
fresh `.grad` tensor of the same shape); state it read and that changed still retraces, and
every result equals eager's (tests/guard_staleness.py runs each program three ways). What the
recorder cannot see falls back to guarding everything under it, and with no recorder at all
(another trace function installed) to the complete walk.
"""

from __future__ import annotations

import operator
import sys
import warnings

import numpy as np
import pytest

import autojit
from autojit import nn
from autojit.compiler.frame_stack import reader, stack_depths
from autojit.compiler.recorder import Recorder

pytest.importorskip("torch")
from guard_staleness import X, check, tensor  # noqa: E402

Y = np.array([[1.0], [-0.5]], dtype=np.float32)


def _linear(lib, seed: int = 0):
    lib.manual_seed(seed)
    model = lib.nn.Linear(3, 1)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.5, -0.25, 1.0]]))
        model.bias.fill_(0.1)
    return model


def test_the_recorder_works_on_this_python():
    assert reader() is not None, sys.version
    assert Recorder.available() is None


def test_the_static_stack_depths_match_the_interpreters():
    if sys.version_info[:2] != (3, 11):
        pytest.skip("3.11 keeps the stack pointer for trace functions: the check needs it")
    import ctypes

    from autojit.compiler.frame_stack import _n_localsplus

    mismatches, checked = [], [0]

    def local(frame, event, arg):
        if event == "opcode":
            base = ctypes.c_void_p.from_address(id(frame) + 3 * ctypes.sizeof(
                ctypes.c_void_p)).value
            top = ctypes.c_int.from_address(base + 8 * ctypes.sizeof(ctypes.c_void_p)).value
            depth = top - _n_localsplus(frame.f_code)
            checked[0] += 1
            if stack_depths(frame.f_code).get(frame.f_lasti) != depth:
                mismatches.append((frame.f_code.co_name, frame.f_lasti))
        return local

    def start(frame, event, arg):
        frame.f_trace_opcodes = True
        return local

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = autojit.optim.Adam(model.parameters())
    x = autojit.tensor(X)
    previous = sys.gettrace()
    sys.settrace(start)
    try:
        for _ in range(2):
            opt.zero_grad()
            loss = ((model(x) - 1.0) ** 2).mean()
            loss.backward()
            opt.step()
            try:
                {}["missing"]
            except KeyError:
                pass
    finally:
        sys.settrace(previous)
    assert checked[0] > 10000 and not mismatches, mismatches[:5]


def test_an_lbfgs_closure_that_zeroes_gradients_keeps_one_executable():
    def program(lib, wrap):
        model = _linear(lib)
        opt = lib.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
        x, y = tensor(lib, X), tensor(lib, Y)

        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss

        compiled = wrap(closure)
        for _ in range(3):
            yield opt.step(compiled)
        yield model.weight

    (executables,) = check(program, [1])
    assert executables.stats().traces == 1  # opt.state's growing history is never read


@pytest.mark.parametrize("name, options", [
    ("SGD", {}), ("SGD", {"momentum": 0.9, "nesterov": True}), ("Adam", {}),
    ("AdamW", {"amsgrad": True}), ("RMSprop", {"momentum": 0.5}), ("Adagrad", {}),
    ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Adadelta", {}), ("ASGD", {}),
    ("Rprop", {})])
def test_a_compiled_optimizer_step_given_a_new_grad_each_call(name, options):
    def program(lib, wrap):
        model = _linear(lib)
        opt = getattr(lib.optim, name)(model.parameters(), lr=0.05, **options)
        step = wrap(opt.step)
        x, y = tensor(lib, X), tensor(lib, Y)
        for _ in range(5):
            opt.zero_grad()  # set_to_none: every backward makes a new .grad tensor
            ((model(x) - y) ** 2).mean().backward()
            step()
            yield model.weight
            yield model.bias

    (step,) = check(program, [1])
    # The first call runs eagerly where it makes the optimizer's state (traced, it would
    # serve that call only; Adagrad makes its state when built): one trace serves the rest.
    stats = step.stats()
    assert stats.traces == 1 and stats.eager_calls == 0, stats
    assert stats.state_calls == (name != "Adagrad"), stats


@pytest.mark.parametrize("name, options", [
    ("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("RMSprop", {}),
    ("Adagrad", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Adadelta", {}),
    ("ASGD", {}), ("Rprop", {})])
@pytest.mark.parametrize("schedule", [None, "StepLR", "ExponentialLR"])
def test_eager_and_compiled_calls_of_one_step_alternate_freely(name, options, schedule):
    def program(lib, wrap):
        model = _linear(lib)
        opt = getattr(lib.optim, name)(model.parameters(), lr=0.05, **options)
        scheduler = None
        if schedule == "StepLR":
            scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        elif schedule == "ExponentialLR":
            scheduler = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        x, y = tensor(lib, X), tensor(lib, Y)

        def train_step(x, y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        compiled = wrap(train_step)
        for index in range(8):
            step = compiled if index % 3 else train_step  # eager, compiled, compiled, ...
            yield step(x, y)
            if scheduler is not None:
                scheduler.step()
            yield model.weight

    (compiled,) = check(program, [1] if schedule is None else None)
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.compiled_calls == 5
    # A scheduler's learning rate is a float read on every call after its first change.
    assert stats.traces <= (1 if schedule is None else 2), compiled.recompile_reasons


def test_state_the_trace_did_not_read_changes_without_a_retrace():
    class Settings:
        pass

    def program(lib, wrap):
        settings = Settings()
        settings.scale, settings.note, settings.history = 2.0, "a", []
        f = wrap(lambda x: x * settings.scale)
        x = tensor(lib, X)
        yield f(x)
        settings.note = "b"  # never read
        settings.history.append(1.0)
        settings.extra = 3
        yield f(x)
        settings.scale = -1.0  # read: a retrace
        yield f(x)

    (f,) = check(program, [2])
    assert f.stats().traces == 2


def test_a_global_the_code_does_not_load_is_not_guarded():
    namespace = {"autojit": autojit}
    exec("SCALE = 2.0\nUNUSED = 1\n"  # noqa: S102
         "def f(x, flag):\n    if flag:\n        return x * SCALE\n    return x\n",
         namespace)
    compiled = autojit.compile(namespace["f"])
    x = autojit.tensor(X)
    compiled(x, False)
    namespace["SCALE"] = 3.0  # loaded by the code, but not on the path this trace took
    namespace["UNUSED"] = 2
    assert np.allclose(compiled(x, False).numpy(), X)
    assert compiled.stats().traces == 1
    assert np.allclose(compiled(x, True).numpy(), 3 * X)


def test_state_passed_to_c_code_is_guarded_through_and_through():
    class Config:
        def __init__(self):
            self.scale = 2.0
            self.nested = {"shift": 1.0}

    def program(lib, wrap):
        config = Config()
        read_scale = operator.attrgetter("scale")  # C code: the recorder cannot follow it
        f = wrap(lambda x: x * read_scale(config) + sorted(config.nested.values())[0])
        x = tensor(lib, X)
        yield f(x)
        config.scale = 5.0
        yield f(x)
        config.nested["shift"] = -4.0
        yield f(x)

    check(program, [3])


def test_a_method_defined_later_on_the_instance_shadows_the_class():
    def program(lib, wrap):
        class Scaler:
            def factor(self):
                return 2.0

        scaler = Scaler()
        f = wrap(lambda x: x * scaler.factor())
        x = tensor(lib, X)
        yield f(x)
        scaler.factor = lambda: -3.0  # an instance attribute now wins over the method
        yield f(x)
        Scaler.factor = lambda self: 7.0
        del scaler.factor
        yield f(x)

    check(program, [3])


def test_a_read_through_one_path_of_an_object_reached_by_two():
    class Holder:
        pass

    def program(lib, wrap):
        shared, other = Holder(), Holder()
        shared.value, other.value = 2.0, 2.0
        first, second = Holder(), Holder()
        first.item, second.item = shared, shared  # the walk meets `shared` through `first`
        f = wrap(lambda x: x * second.item.value)
        x = tensor(lib, X)
        yield f(x)
        first.item = other  # not what the trace read through
        shared.value = -1.0
        yield f(x)

    check(program, [2])


def test_reads_under_another_trace_function_fall_back_to_the_walk():
    if sys.version_info[:2] >= (3, 12):
        pytest.skip("sys.monitoring runs beside other trace functions")
    scale = [2.0]
    f = autojit.compile(lambda x: x * scale[0])
    x = autojit.tensor(X)

    def tracer(frame, event, arg):
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first = f(x).numpy()
            scale[0] = -1.0
            second = f(x).numpy()
    finally:
        sys.settrace(previous)
    assert np.allclose(first, 2 * X) and np.allclose(second, -X)


def test_the_guards_name_only_what_was_read():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.unused_note = "not read"

    @autojit.compile
    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    x = autojit.tensor(X)
    for _ in range(3):
        step(x)
    text = step.guards()
    assert "unused_note" not in text
    assert "'lr'" in text or ".lr" in text or "lr" in text


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="sys.monitoring has no global trace "
                    "function to turn off")
def test_the_recorders_trace_function_is_off_while_a_node_is_made_and_back_after(monkeypatch):
    """The ops layer traces each primitive (registry._run, decompositions included, and the
    tracer's node for it, ir/trace.Tracer.bind) with the recorder's trace function off (it
    was half of a small CNN's trace: every Python call made there called it); the function is
    back for the program's next line, so a global read after an op is still guarded."""
    from autojit.ir import trace
    from autojit.ops import registry

    seen, decomposed = [], []
    make, decompose = trace.Tracer.bind, registry.decompose

    def watching(self, op, inputs, attrs):
        seen.append(sys.gettrace())
        return make(self, op, inputs, attrs)

    def watching_decompose(op, inputs, attrs):
        decomposed.append(sys.gettrace())
        return decompose(op, inputs, attrs)

    monkeypatch.setattr(trace.Tracer, "bind", watching)
    monkeypatch.setattr(registry, "decompose", watching_decompose)
    scale = {"value": 2.0}
    during = []

    def function(x):
        y = (x * 3.0).softmax(0) * 3.0
        during.append(sys.gettrace())
        return y * scale["value"]

    compiled = autojit.compile(function)
    x = autojit.ones(3)
    np.testing.assert_allclose(compiled(x).numpy(), np.full(3, 2.0, np.float32), rtol=1e-6)
    assert seen and all(found is None for found in seen)
    assert decomposed and all(found is None for found in decomposed)
    assert during[0] is not None  # the recorder's, between two ops
    scale["value"] = -1.0
    np.testing.assert_allclose(compiled(x).numpy(), np.full(3, -1.0, np.float32), rtol=1e-6)
    assert compiled.stats().traces == 2
