"""Guard staleness: state changed between two calls of a compiled function is never missed.

Each test is a program written once against a module `lib` (autojit or torch) as a generator:
it calls its function, changes some state the function reads, calls again, and yields every
result. It runs three ways: eagerly with torch, eagerly with autojit, and with the function
compiled by `autojit.compile`. A guard missing from the compiled function would give the
result of the state before the change (a stale executable); the number of executables each
test expects pins that the change was seen and the calls before it reused the executable.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

pytest.importorskip("torch")
from guard_staleness import W, X, check, guard_source, tensor  # noqa: E402, F401

# ---- globals --------------------------------------------------------------------------------

GAIN = 2.0
ACTIVATION = None


def _helper(x):
    return x * GAIN + 1


def _double(x):
    return x * 2


def _triple(x):
    return x * 3


def test_a_global_read_by_a_helper_function():
    def program(lib, wrap):
        global GAIN
        GAIN = 2.0
        f = wrap(lambda x: _helper(x).sum(0))
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        GAIN = 5.0
        yield f(x)
        GAIN = 2.0

    check(program, [2])


def test_a_global_rebound_to_another_function():
    def program(lib, wrap):
        global ACTIVATION
        ACTIVATION = _double
        f = wrap(lambda x: ACTIVATION(x) - 1)
        x = tensor(lib, X)
        yield f(x)
        ACTIVATION = _triple  # a function of the user's: another code object
        yield f(x)
        ACTIVATION = lib.tanh  # a library function: another object
        yield f(x)
        ACTIVATION = lib.sigmoid
        yield f(x)
        ACTIVATION = None

    check(program, [4])


# ---- classes and modules --------------------------------------------------------------------

def test_a_class_attribute_own_and_inherited():
    def program(lib, wrap):
        class Base:
            offset = 1.0

        class Model(Base):
            scale = 2.0

            def forward(self, x):
                return x * self.scale + self.offset

        model = Model()
        f = wrap(model.forward)
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        Model.scale = 7
        yield f(x)
        Base.offset = -3.0  # inherited
        yield f(x)
        model.offset = 0.5  # an instance attribute now shadows the class's
        yield f(x)

    check(program, [4])


def test_an_attribute_of_a_user_module_made_at_run_time():
    def program(lib, wrap):
        cfg = types.ModuleType("guard_test_cfg")
        cfg.GAIN = 2.0
        f = wrap(lambda x: x * cfg.GAIN)
        x = tensor(lib, X)
        yield f(x)
        cfg.GAIN = 6
        yield f(x)
        cfg.GAIN = 6.0
        yield f(x)

    check(program, [3])


def test_an_attribute_of_a_user_module_file(tmp_path):
    (tmp_path / "guard_test_settings.py").write_text("GAIN = 2.0\n\n\ndef gain():\n"
                                                     "    return GAIN\n")
    sys.path.insert(0, str(tmp_path))
    try:
        cfg = importlib.import_module("guard_test_settings")

        def program(lib, wrap):
            cfg.GAIN = 2.0
            f = wrap(lambda x: x * cfg.GAIN + cfg.gain())
            x = tensor(lib, X)
            yield f(x)
            yield f(x)
            cfg.GAIN = 6.0  # read directly and by the module's own function
            yield f(x)
            yield f(x)

        check(program, [2])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("guard_test_settings", None)


# ---- nn modules ------------------------------------------------------------------------------

def _linear(lib, inputs, outputs, seed):
    layer = lib.nn.Linear(inputs, outputs)
    generator = np.random.default_rng(seed)
    with lib.no_grad():
        layer.weight.copy_(tensor(lib, generator.uniform(-1, 1, (outputs, inputs))))
        layer.bias.copy_(tensor(lib, generator.uniform(-1, 1, outputs)))
    return layer


def test_eval_and_train_on_a_submodule_three_levels_down():
    def program(lib, wrap):
        norm = lib.nn.BatchNorm1d(3)
        model = lib.nn.Sequential(_linear(lib, 3, 3, 0), lib.nn.Sequential(
            lib.nn.ReLU(), lib.nn.Sequential(norm)))
        f = wrap(lambda x: model(x) * 1)
        x = tensor(lib, X)
        yield f(x), norm.running_mean
        yield f(x), norm.running_mean
        model[1][1][0].eval()  # running statistics from now on, and no update of them
        yield f(x), norm.running_mean
        yield f(x), norm.running_mean
        model[1][1].train()
        yield f(x), norm.running_mean

    check(program, [2])


def test_dropout_probability_of_a_nested_module():
    def program(lib, wrap):
        dropout = lib.nn.Dropout(0.0)
        model = lib.nn.Sequential(_linear(lib, 3, 4, 1), lib.nn.Sequential(dropout))
        f = wrap(lambda x: model(x) + 1)
        x = tensor(lib, X)
        yield f(x)
        model[1][0].p = 1.0  # every element dropped
        yield f(x)
        model[1][0].p = 0.0
        yield f(x)
        model.eval()
        dropout.p = 1.0  # eval: dropout does nothing whatever p is
        yield f(x)

    check(program, [3])


def test_a_parameter_replaced_in_child_66_of_70():
    def program(lib, wrap):
        model = lib.nn.Sequential(*[_linear(lib, 3, 3, seed) for seed in range(70)])
        f = wrap(lambda x: model(x).sum(1))
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        model[66].weight = lib.nn.Parameter(tensor(lib, np.eye(3) * 2))
        yield f(x)
        yield f(x)
        model[69].bias = lib.nn.Parameter(tensor(lib, [1.0, 2.0, 3.0]))
        yield f(x)

    check(program, [3])


# ---- hooks -----------------------------------------------------------------------------------

def test_a_tensor_hook_registered_and_removed_between_calls():
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)

        def step(x):
            weight.grad = None
            (weight * x).sum().backward()
            return weight.grad * 1

        f = wrap(step)
        x = tensor(lib, X)
        yield f(x)
        handle = weight.register_hook(lambda grad: grad * 3)
        yield f(x)
        yield f(x)
        handle.remove()
        yield f(x)

    check(program, [2])


def test_a_post_accumulate_grad_hook_registered_and_removed_between_calls():
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)

        def halve(parameter):
            parameter.grad.mul_(0.5)

        def step(x):
            weight.grad = None
            (weight * x).sum().backward()
            return weight.grad * 1

        f = wrap(step)
        x = tensor(lib, X)
        yield f(x)
        handle = weight.register_post_accumulate_grad_hook(halve)
        yield f(x)
        yield f(x)
        handle.remove()
        yield f(x)

    check(program, [2])


def test_module_forward_and_forward_pre_hooks_on_a_nested_module():
    def program(lib, wrap):
        inner = _linear(lib, 3, 2, 2)
        model = lib.nn.Sequential(lib.nn.Sequential(inner), lib.nn.Tanh())
        f = wrap(lambda x: model(x) * 1)
        x = tensor(lib, X)
        yield f(x)
        after = inner.register_forward_hook(lambda module, args, out: out * 2)
        yield f(x)
        yield f(x)
        before = inner.register_forward_pre_hook(lambda module, args: (args[0] + 1,))
        yield f(x)
        after.remove()
        yield f(x)
        before.remove()
        yield f(x)

    check(program, [4])


# ---- container arguments ---------------------------------------------------------------------

def test_a_list_argument_that_grew():
    def program(lib, wrap):
        def scale_all(x, factors):
            for factor in factors:
                x = x * factor
            return x

        f = wrap(scale_all)
        x = tensor(lib, X)
        factors = [2.0, 3.0]
        yield f(x, factors)
        factors.append(-1.0)  # the same list object, longer
        yield f(x, factors)
        yield f(x, [2.0, 3.0])

    check(program, [2])


def test_a_list_argument_of_tensors_that_grew():
    def program(lib, wrap):
        f = wrap(lambda x, terms: sum(terms, x))
        x = tensor(lib, X)
        terms = [tensor(lib, W)]
        yield f(x, terms)
        terms.append(tensor(lib, W * 2))
        yield f(x, terms)

    check(program, [2])


def test_a_dict_argument_that_gained_a_key():
    def program(lib, wrap):
        def weighted(x, weights):
            return sum((x.sum(int(axis)) * weight).sum() for axis, weight in weights.items())

        f = wrap(weighted)
        x = tensor(lib, X)
        weights = {"0": 2.0}
        yield f(x, weights)
        weights["1"] = -1.0
        yield f(x, weights)
        del weights["0"]
        yield f(x, weights)

    check(program, [3])


def test_a_tuple_argument_of_another_length():
    def program(lib, wrap):
        f = wrap(lambda x, shifts: [x + shift for shift in shifts])
        x = tensor(lib, X)
        yield f(x, (1.0, 2.0))
        yield f(x, (1.0, 2.0, 3.0))
        yield f(x, (1.0,))
        yield f(x, (1.0, 2.0))

    check(program, [3])


# ---- deep and odd places ---------------------------------------------------------------------

class _Node:
    def __init__(self, child=None, value=1.0):
        self.child, self.value = child, value


class _Slotted:
    __slots__ = ("factor", "name", "__secret")

    def __init__(self, factor):
        self.factor = factor
        self.__secret = 1.0

    def secret(self):
        return self.__secret

    def reveal(self, value):
        self.__secret = value


def _affine(x, scale, shift=0.0):
    return x * scale + shift


def test_an_attribute_five_levels_deep():
    def program(lib, wrap):
        # Strings: a float or int that changes becomes a runtime input
        # (test_compile_runtime_floats.py), where this test is about the guards reaching five
        # levels down.
        root = _Node(_Node(_Node(_Node(_Node(value="ab")))))
        f = wrap(lambda x: x * len(root.child.child.child.child.value))
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        root.child.child.child.child.value = "abcd"
        yield f(x)
        root.child.child.child = _Node(_Node(value="abc"))  # a subtree replaced
        yield f(x)

    check(program, [3])


def test_item_80_of_a_list():
    def program(lib, wrap):
        table = [float(index) for index in range(100)]
        f = wrap(lambda x: x * table[80] + table[3])
        x = tensor(lib, X)
        yield f(x)
        yield f(x)
        table[80] = -1.0
        yield f(x)

    check(program, [2])


def test_a_long_string_that_decides_a_branch():
    def program(lib, wrap):
        mode = {"name": "a" * 70 + "-double"}
        f = wrap(lambda x: x * 2 if mode["name"].endswith("double") else x * 3)
        x = tensor(lib, X)
        yield f(x)
        mode["name"] = "a" * 70 + "-triple"  # equal to the traced string in its first 64
        yield f(x)

    check(program, [2])


def test_a_slots_attribute():
    def program(lib, wrap):
        holder = _Slotted(2.0)
        f = wrap(lambda x: x * holder.factor - (1 if hasattr(holder, "name") else 0) +
                 holder.secret())
        x = tensor(lib, X)
        yield f(x)
        holder.factor = 3.0
        yield f(x)
        holder.name = "set"  # a slot that was empty
        yield f(x)
        del holder.name
        yield f(x)
        holder.reveal(-2.0)  # a private slot, stored under its mangled name
        yield f(x)

    check(program, [4])


def test_the_arguments_of_a_partial():
    def program(lib, wrap):
        parts = {"call": functools.partial(_affine, scale=2.0, shift=1.0)}
        f = wrap(lambda x: parts["call"](x))
        x = tensor(lib, X)
        yield f(x)
        parts["call"].keywords["shift"] = -5.0  # the keywords dict, changed in place
        yield f(x)
        parts["call"] = functools.partial(_affine, shift=-5.0, scale=3.0)
        yield f(x)
        parts["call"] = functools.partial(_affine, 4.0)  # positional
        yield f(x)
        parts["call"] = functools.partial(_affine, 0.5)
        yield f(x)
        parts["call"].__setstate__((_affine, (0.25,), {}, None))  # the same partial, new args
        yield f(x)

    check(program, [6])


def test_a_closure_cell_rebound():
    def program(lib, wrap):
        factor = 2.0

        def scaled(x):
            return x * factor

        def set_factor(value):
            nonlocal factor
            factor = value

        f = wrap(lambda x: scaled(x) + 1)  # the cell of a function the compiled one calls
        g = wrap(scaled)  # the compiled function's own cell
        x = tensor(lib, X)
        yield f(x), g(x)
        yield f(x), g(x)
        set_factor(-3.0)
        yield f(x), g(x)

    check(program, [2, 2])


def test_a_default_argument_changed_through_defaults():
    def program(lib, wrap):
        def shifted(x, shift=1.0):
            return _affine(x, 2.0) + shift

        f = wrap(shifted)
        g = wrap(lambda x: shifted(x) * 1)
        x = tensor(lib, X)
        yield f(x), g(x)
        yield f(x), g(x)
        shifted.__defaults__ = (4.0,)
        yield f(x), g(x)
        _affine.__defaults__ = (10.0,)  # a default of a global function both reach
        try:
            yield f(x), g(x)
        finally:
            _affine.__defaults__ = (0.0,)

    check(program, [3, 3])


# ---- optimizers ------------------------------------------------------------------------------

def test_add_param_group_after_the_first_call_and_a_changed_lr():
    def program(lib, wrap):
        first = tensor(lib, W, requires_grad=True)
        second = tensor(lib, W[::-1], requires_grad=True)
        optimizer = lib.optim.SGD([first], lr=0.1)

        def step(x):
            optimizer.zero_grad()
            loss = ((first * x).sum() + (second * x * x).sum()) * 1
            loss.backward()
            optimizer.step()
            return loss.detach()

        f = wrap(step)
        x = tensor(lib, X)
        yield f(x), first, second
        yield f(x), first, second
        optimizer.add_param_group({"params": [second], "lr": 0.5})  # must update from now on
        yield f(x), first, second
        yield f(x), first, second
        optimizer.param_groups[0]["lr"] = 0.01
        yield f(x), first, second
        optimizer.param_groups[1]["lr"] = 0.25
        yield f(x), first, second

    # One executable before the new group and one after it: the learning rates are read on
    # every call (an optimizer's group floats are runtime floats from the first trace).
    check(program, [2])


def test_adam_state_and_a_new_group():
    def program(lib, wrap):
        model = lib.nn.Sequential(_linear(lib, 3, 2, 3), lib.nn.Tanh(), _linear(lib, 2, 1, 4))
        optimizer = lib.optim.Adam(model[0].parameters(), lr=0.05)

        def step(x):
            optimizer.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        f = wrap(step)
        x = tensor(lib, X)
        for _ in range(3):
            yield f(x), list(model.parameters())
        optimizer.add_param_group({"params": list(model[2].parameters()), "lr": 0.1})
        for _ in range(3):
            yield f(x), list(model.parameters())

    check(program, [2])


# ---- what guarded correctly before -----------------------------------------------------------

def test_scalar_arguments_shapes_dtypes_requires_grad_and_grad_mode():
    def program(lib, wrap):
        def scaled(x, scale):
            y = x * scale
            return y, y.requires_grad

        f = wrap(scaled)
        yield f(tensor(lib, X), 2.0)
        yield f(tensor(lib, X), 3.0)
        yield f(tensor(lib, X), 2)  # an int: another trace
        yield f(tensor(lib, X[:1]), 2.0)  # a shape
        yield f(tensor(lib, X).double(), 2.0)  # a dtype
        yield f(tensor(lib, X, requires_grad=True), 2.0)  # requires_grad
        with lib.no_grad():  # grad mode around the call
            yield f(tensor(lib, X, requires_grad=True), 2.0)
        yield f(tensor(lib, X, requires_grad=True), 2.0)

    check(program, [7])


def test_a_captured_tensor_rebound_and_no_grad_around_the_call():
    def program(lib, wrap):
        state = {"weight": tensor(lib, W, requires_grad=True)}

        def step(x):
            out = (state["weight"] * x).sum()
            if out.requires_grad:
                out.backward()
            return out.detach(), state["weight"].grad

        f = wrap(step)
        x = tensor(lib, X)
        for _ in range(3):  # .grad None, then accumulated into
            yield f(x)
        state["weight"] = tensor(lib, W * 3, requires_grad=True)  # its .grad is None
        yield f(x)
        with lib.no_grad():
            yield f(x)
        yield f(x)
        state["weight"] = tensor(lib, W * 3, requires_grad=True)
        state["weight"].grad = tensor(lib, W)  # the same shape and .grad, another tensor
        yield f(x)

    # .grad None and accumulated into for the first two weights, no_grad, the third weight
    check(program, [6])


# ---- a walk over budget ----------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: [[index] for index in range(25000)],  # over the number of objects
    lambda: list(range(60000)),  # over the number of values
], ids=["objects", "values"])
def test_a_walk_over_budget_warns_and_runs_eagerly(make):
    table = make()
    flat = table if isinstance(table[0], int) else [row[0] for row in table]

    def program(x):
        index = len(flat) - 1
        return x * (table[index] if isinstance(table[index], int) else table[index][0])

    compiled = autojit.compile(program)
    x = autojit.tensor([1.0, 2.0])
    with pytest.warns(CompileWarning, match="walk stopped at"):
        assert compiled(x).tolist() == program(x).tolist()
    assert compiled.executables == [] and compiled.eager_reason is not None
    table[-1] = [3] if isinstance(table[-1], list) else 3  # eager from now on: never stale
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # warned once, not on every call
        assert compiled(x).tolist() == program(x).tolist() == [3.0, 6.0]
