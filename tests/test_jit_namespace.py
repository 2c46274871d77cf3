"""autojit.jit: torch.jit's names on autojit.compile, against torch (CPU build) where both run.

A scripted function and a scripted module (an MLP with torch's weights) give torch's values and
gradients; a traced module gives torch.jit.trace's values and state_dict keys; is_scripting is
True in a scripted call, as in torch, and False in a traced one and inside autojit.compile;
is_tracing is False; the TorchScript decorators and type hints leave the code as it is; fork and
wait; freeze raises as torch's does on a module in training mode and gives its values in eval
mode. save and load are in test_jit_archives.py.
"""

from __future__ import annotations

import typing
import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

jit = autojit.jit


@pytest.fixture(autouse=True)
def _quiet_torch_jit():
    # torch.jit.script, trace and freeze warn that TorchScript is deprecated.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _numpy(tensor) -> np.ndarray:
    return tensor.detach().numpy()


def _close(mine, theirs) -> None:
    np.testing.assert_allclose(_numpy(mine), _numpy(theirs), rtol=1e-5, atol=1e-6)


def _mlp(framework):
    nn = framework.nn
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))


def _mlps():
    """(autojit MLP, torch MLP) with the same weights."""
    torch.manual_seed(0)
    theirs = _mlp(torch)
    mine = _mlp(autojit)
    mine.load_state_dict(
        {name: autojit.tensor(_numpy(value)) for name, value in theirs.state_dict().items()}
    )
    return mine, theirs


def _inputs(*shape, requires_grad: bool = False):
    value = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    return (
        autojit.tensor(value, requires_grad=requires_grad),
        torch.tensor(value, requires_grad=requires_grad),
    )


def _raised(call) -> tuple[type, str]:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error is the result
        return type(error), str(error)
    raise AssertionError("did not raise")


def polynomial(x, w):
    return ((x * w).exp() + x.sin() * w).sum(dim=1)


# ---- script and trace --------------------------------------------------------------------------


def test_a_scripted_function_gives_torchs_values_and_gradients():
    scripted = jit.script(polynomial)
    assert isinstance(scripted, jit.ScriptFunction) and jit.script(scripted) is scripted
    x, torch_x = _inputs(5, 3, requires_grad=True)
    w, torch_w = _inputs(3, requires_grad=True)
    result, expected = scripted(x, w), torch.jit.script(polynomial)(torch_x, torch_w)
    _close(result, expected)
    result.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    _close(x.grad, torch_x.grad)
    _close(w.grad, torch_w.grad)
    assert scripted.stats().compiled_calls == 1


def test_a_scripted_module_gives_torchs_values_gradients_and_state_dict_keys():
    mine, theirs = _mlps()
    scripted, torch_scripted = jit.script(mine), torch.jit.script(theirs)
    assert isinstance(scripted, jit.ScriptModule) and isinstance(scripted, autojit.nn.Module)
    assert list(scripted.state_dict()) == list(torch_scripted.state_dict())
    assert [name for name, _ in scripted.named_parameters()] == [
        name for name, _ in torch_scripted.named_parameters()
    ]
    # The module's own parameters, as a scripted module's are in torch.
    assert all(a is b for a, b in zip(scripted.parameters(), mine.parameters()))
    x, torch_x = _inputs(8, 4)
    result, expected = scripted(x), torch_scripted(torch_x)
    _close(result, expected)
    result.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for (_, parameter), (_, torch_parameter) in zip(
        mine.named_parameters(), theirs.named_parameters()
    ):
        _close(parameter.grad, torch_parameter.grad)
    assert scripted.stats().compiled_calls == 1  # the compiled call's inspection, through it
    assert len(scripted) == 3 and scripted[0] is mine[0]


def test_a_scripted_module_is_usable_as_a_module():
    mine, _ = _mlps()
    scripted = jit.script(mine)
    assert scripted.eval() is scripted and not mine.training and not mine[0].training
    scripted.train()
    assert mine.training and scripted.training
    zeros = {name: autojit.zeros_like(value) for name, value in mine.state_dict().items()}
    scripted.load_state_dict(zeros)
    assert float(mine[0].weight.detach().abs().sum()) == 0.0
    x, _ = _inputs(2, 4)
    assert float(scripted(x).detach().abs().sum()) == 0.0
    mine.load_state_dict(_mlps()[0].state_dict())
    optimizer = autojit.optim.SGD(scripted.parameters(), lr=0.1)
    before = mine[2].bias.detach().clone()
    scripted(x).sum().backward()
    optimizer.step()
    assert not bool((mine[2].bias == before).all())  # the step updated the module itself
    _close(scripted(x), mine(x))


def test_trace_of_a_module_gives_torchs_values_and_runs_it_once():
    mine, theirs = _mlps()
    x, torch_x = _inputs(8, 4)
    traced, torch_traced = jit.trace(mine, x), torch.jit.trace(theirs, torch_x)
    assert isinstance(traced, jit.ScriptModule)
    assert traced.stats().calls == 1  # run on the example, as torch's trace runs it
    assert list(traced.state_dict()) == list(torch_traced.state_dict())
    y, torch_y = _inputs(5, 4)  # another batch size
    _close(traced(y), torch_traced(torch_y))
    _close(jit.trace(mine.forward, (x,))(y), torch_traced(torch_y))


def test_trace_of_a_function_runs_it_on_the_example_inputs():
    traced = jit.trace(polynomial, (autojit.ones(2, 3), autojit.ones(3)))
    assert isinstance(traced, jit.ScriptFunction) and traced.stats().calls == 1
    keywords = jit.trace(
        polynomial, example_kwarg_inputs={"x": autojit.ones(2, 3), "w": autojit.ones(3)}
    )
    _close(
        keywords(autojit.ones(2, 3), autojit.ones(3)), polynomial(torch.ones(2, 3), torch.ones(3))
    )

    def square(a):
        return a @ a

    # An error in the function surfaces at trace time, as in torch.
    with pytest.raises(RuntimeError):
        torch.jit.trace(square, torch.ones(2, 3))
    with pytest.raises(RuntimeError):
        jit.trace(square, autojit.ones(2, 3))


def test_trace_module_compiles_each_method_named():
    class Scaler(autojit.nn.Module):
        def forward(self, x):
            return x * 2

        def half(self, x):
            return x / 2

    traced = jit.trace_module(Scaler(), {"forward": autojit.ones(2), "half": autojit.ones(2)})
    assert isinstance(traced.half, jit.ScriptFunction) and traced.half.stats().calls == 1
    assert traced.half(autojit.full((2,), 4.0)).tolist() == [2.0, 2.0]
    assert _raised(lambda: jit.trace(Scaler().half, autojit.ones(2))) == _raised(
        lambda: torch.jit.trace(torch.nn.Identity().__repr__, torch.ones(2))
    )


def test_script_errors_and_pass_throughs_are_torchs():
    error, message = _raised(lambda: jit.script(autojit.nn.Linear))
    torch_error, torch_message = _raised(lambda: torch.jit.script(torch.nn.Linear))
    assert (
        error is torch_error
        and "cannot be compiled since it inherits from nn.Module" in message
        and message.split("'")[-1] == torch_message.split("'")[-1]
    )

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    assert jit.script(Pair) is Pair
    table = {"a": 1}
    assert jit.script(table) == table and jit.script(table) is not table
    with pytest.raises(TypeError, match="got int"):
        jit.script(3)


# ---- what TorchScript would be told ----------------------------------------------------------


def _branchy(framework):
    class Branchy(framework.nn.Module):
        def forward(self, x):
            if framework.jit.is_scripting():
                return x * 0
            return x + 1

    return Branchy()


def scripting_branch(x):
    return x * 3 if autojit.jit.is_scripting() else x + 1


def torch_scripting_branch(x):
    if torch.jit.is_scripting():
        return x * 3
    return x + 1


def test_is_scripting_is_true_in_a_scripted_call_as_in_torch():
    assert not jit.is_scripting() and not jit.is_tracing()
    assert not torch.jit.is_scripting() and not torch.jit.is_tracing()
    x, torch_x = _inputs(3)
    for build in (
        lambda framework, value: framework.jit.script(_branchy(framework)),
        lambda framework, value: framework.jit.trace(_branchy(framework), value),
    ):
        assert _numpy(build(autojit, x)(x)).tolist() == \
            _numpy(build(torch, torch_x)(torch_x)).tolist()
    scripted = jit.script(_branchy(autojit))
    assert scripted(x).abs().sum().item() == 0 and not jit.is_scripting()
    assert _branchy(autojit)(x).tolist() == (x + 1).tolist()  # the module itself: eager
    _close(jit.script(scripting_branch)(x), torch.jit.script(torch_scripting_branch)(torch_x))
    _close(jit.trace(scripting_branch, x)(x), torch.jit.trace(torch_scripting_branch, torch_x)(
        torch_x))


def test_is_tracing_is_false_in_trace_and_compile():
    x = autojit.ones(3)
    seen = []

    @autojit.compile
    def step(x):
        seen.append((jit.is_tracing(), jit.is_scripting(), autojit.compiler.is_compiling()))
        return x * 2

    step(x)
    assert seen[0] == (False, False, True)


class Decorated(autojit.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 3.0

    def forward(self, x):
        return self.ignored(x) + self.dropped(x)

    @jit.ignore
    def ignored(self, x):
        return x * self.scale

    @jit.ignore(drop=False)
    def also_ignored(self, x):
        return x - 1

    @jit.unused
    def dropped(self, x):
        return x + 1

    @jit.unused
    @property
    def doubled(self):
        return self.scale * 2

    @jit.export
    def exported(self, x):
        return self.forward(x) * 2


def test_decorators_leave_methods_callable():
    module = Decorated()
    scripted = jit.script(module)
    x = autojit.tensor([1.0, 2.0])
    assert scripted(x).tolist() == module(x).tolist() == [5.0, 9.0]
    assert scripted.ignored(x).tolist() == [3.0, 6.0]
    assert scripted.also_ignored(x).tolist() == [0.0, 1.0]
    assert scripted.dropped(x).tolist() == [2.0, 3.0]
    assert scripted.doubled == 6.0
    # An exported method is compiled as forward is.
    assert isinstance(scripted.exported, jit.ScriptFunction)
    assert scripted.exported(x).tolist() == [10.0, 18.0]
    assert Decorated.ignored._torchscript_modifier == "ignore"
    assert Decorated.doubled.fget._torchscript_modifier == "unused"


def test_ignore_arguments_are_checked_as_torch_checks_them():
    assert _raised(lambda: jit.ignore(3)) == _raised(lambda: torch.jit.ignore(3))
    with pytest.warns(FutureWarning, match="ignore\\(True\\) has been deprecated"):
        marked = jit.ignore(True)(lambda x: x)
    assert marked._torchscript_modifier == "unused" and marked(4) == 4
    assert _raised(lambda: jit.interface(lambda x: x)) == _raised(
        lambda: torch.jit.interface(lambda x: x)
    )
    assert jit.script_method(polynomial) is polynomial
    assert jit.script_if_tracing(polynomial) is polynomial


def test_final_annotate_and_attribute_pass_values_through():
    assert jit.Final is torch.jit.Final is typing.Final
    assert jit.Final[int] == torch.jit.Final[int]
    empty = []
    assert jit.annotate(list[int], empty) is empty
    assert jit.annotate(dict[str, int], {"a": 1}) == torch.jit.annotate(dict[str, int], {"a": 1})
    assert jit.Attribute(0.5, float) == 0.5


def test_a_script_module_subclass_is_compiled():
    class Doubler(jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.linear = autojit.nn.Linear(2, 2)

        @jit.script_method
        def forward(self, x):
            return self.linear(x) * 2

    module = Doubler()
    x = autojit.ones(3, 2)
    _close(module(x), module.linear(x) * 2)
    assert module._compiled_call_impl.stats().compiled_calls == 1
    assert jit.script(module) is module
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        assert jit.trace(module, x) is module


# ---- fork and wait -----------------------------------------------------------------------------


def test_fork_and_wait_give_the_result_as_torchs_do():
    def scaled(x, scale=1.0):
        return x * scale

    x, torch_x = _inputs(3)
    future, torch_future = (
        jit.fork(scaled, x, scale=2.0),
        torch.jit.fork(scaled, torch_x, scale=2.0),
    )
    assert future.done() and torch_future.done()
    _close(jit.wait(future), torch.jit.wait(torch_future))
    _close(future.value(), torch_future.value())
    assert (
        future.then(lambda done: done.value() + 1).wait().tolist()
        == torch_future.then(lambda done: done.value() + 1).wait().tolist()
    )

    def failing():
        raise ValueError("boom")

    # Outside TorchScript, torch runs the function at fork: its error raises there.
    assert _raised(lambda: jit.fork(failing)) == _raised(lambda: torch.jit.fork(failing))


# ---- freeze and optimize_for_inference ---------------------------------------------------------


def test_freeze_raises_as_torchs_on_a_module_in_training_mode():
    mine, theirs = _mlps()
    assert _raised(lambda: jit.freeze(jit.script(mine))) == _raised(
        lambda: torch.jit.freeze(torch.jit.script(theirs))
    )
    assert _raised(lambda: jit.freeze(mine.eval())) == _raised(
        lambda: torch.jit.freeze(theirs.eval())
    )


def test_freeze_in_eval_mode_gives_torchs_values_with_the_weights_as_constants():
    mine, theirs = _mlps()
    frozen = jit.freeze(jit.script(mine.eval()))
    torch_frozen = torch.jit.freeze(torch.jit.script(theirs.eval()))
    x, torch_x = _inputs(6, 4)
    result, expected = frozen(x), torch_frozen(torch_x)
    _close(result, expected)
    assert result.requires_grad is expected.requires_grad is False
    # The constants share the parameters' storage: an in-place update shows, as in torch.
    with autojit.no_grad():
        mine[0].weight.mul_(2)
    with torch.no_grad():
        theirs[0].weight.mul_(2)
    _close(frozen(x), torch_frozen(torch_x))
    mine.train()  # the frozen copy stays in eval mode
    _close(frozen(x), torch_frozen(torch_x))


def test_optimize_for_inference_freezes_in_eval_mode():
    mine, theirs = _mlps()
    optimized = jit.optimize_for_inference(jit.script(mine))
    torch_optimized = torch.jit.optimize_for_inference(torch.jit.script(theirs))
    x, torch_x = _inputs(4, 4)
    _close(optimized(x), torch_optimized(torch_x))
    assert jit.optimize_for_inference(optimized) is optimized
    assert _raised(lambda: jit.optimize_for_inference(mine)) == _raised(
        lambda: torch.jit.optimize_for_inference(theirs)
    )
