"""autojit.compile (compiler/api.py): results equal eager's, guards retrace, graph breaks fall
back."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from custom_function_cases import Exp

import autojit
from autojit import CompileWarning, autograd


def make_parameters(seed=0):
    generator = np.random.default_rng(seed)
    weight = autojit.tensor(generator.standard_normal((4, 3)), dtype=autojit.float32,
                            requires_grad=True)
    bias = autojit.zeros(3, requires_grad=True)
    return weight, bias


def sgd_step_function(weight, bias, lr=0.1):
    def step(x, y):
        loss = ((x @ weight + bias - y) ** 2).mean()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(lr * weight.grad)
            bias.sub_(lr * bias.grad)
        weight.grad = None
        bias.grad = None
        return loss
    return step


def data(rows=8, seed=1):
    generator = np.random.default_rng(seed)
    return (autojit.tensor(generator.standard_normal((rows, 4)), dtype=autojit.float32),
            autojit.tensor(generator.standard_normal((rows, 3)), dtype=autojit.float32))


def test_training_step_equals_eager_after_several_steps():
    weight, bias = make_parameters()
    eager_weight, eager_bias = make_parameters()
    compiled = autojit.compile(sgd_step_function(weight, bias))
    eager = sgd_step_function(eager_weight, eager_bias)
    x, y = data()
    for _ in range(5):
        np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-6)
    np.testing.assert_allclose(weight.detach().numpy(), eager_weight.detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(bias.detach().numpy(), eager_bias.detach().numpy(), rtol=1e-6)
    assert weight.grad is None and bias.grad is None
    assert len(compiled.executables) == 1 and compiled.executables[0].calls == 5
    assert weight._version > 0  # the in-place updates bump version counters as in eager


def test_grad_accumulates_across_calls_like_eager():
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)

    def accumulate(x):
        (weight * x).sum().backward()

    compiled = autojit.compile(accumulate)
    x = autojit.tensor([3.0, 4.0])
    for _ in range(3):
        compiled(x)
    np.testing.assert_array_equal(weight.grad.numpy(), [9.0, 12.0])
    # The first call assigned .grad; later ones accumulate into that same tensor in place.
    assert len(compiled.executables) == 2


def test_new_shape_retraces_and_stays_correct():
    weight, bias = make_parameters()
    eager_weight, eager_bias = make_parameters()
    compiled = autojit.compile(sgd_step_function(weight, bias))
    eager = sgd_step_function(eager_weight, eager_bias)
    for rows in (8, 8, 5, 8, 5):
        x, y = data(rows)
        np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-6)
    assert len(compiled.executables) == 2


def test_python_scalar_argument_is_guarded():
    compiled = autojit.compile(lambda x, scale: x * scale)
    x = autojit.tensor([1.0, 2.0])
    assert compiled(x, 2.0).tolist() == [2.0, 4.0]
    assert compiled(x, 3.0).tolist() == [3.0, 6.0]
    assert compiled(x, 2).tolist() == [2.0, 4.0]  # int, not float: another executable
    assert len(compiled.executables) == 3


def test_scalar_reached_through_a_global_dict_is_guarded():
    settings = {"lr": 0.5}
    weight = autojit.tensor([1.0], requires_grad=True)

    def step():
        weight.grad = None
        (weight * 2).sum().backward()
        with autojit.no_grad():
            weight.sub_(settings["lr"] * weight.grad)

    compiled = autojit.compile(step)
    compiled()
    np.testing.assert_allclose(weight.detach().numpy(), [0.0])
    settings["lr"] = 0.25  # skipping this guard would subtract 1.0 again
    compiled()
    np.testing.assert_allclose(weight.detach().numpy(), [-0.5])
    assert len(compiled.executables) == 2


def test_rebinding_a_captured_tensor_retraces():
    holder = {"weight": autojit.tensor([1.0, 2.0])}
    compiled = autojit.compile(lambda x: x * holder["weight"])
    x = autojit.tensor([1.0, 1.0])
    assert compiled(x).tolist() == [1.0, 2.0]
    holder["weight"] = autojit.tensor([5.0, 6.0])  # a stale executable would give [1, 2]
    assert compiled(x).tolist() == [5.0, 6.0]


def test_writes_to_a_captured_tensor_are_seen_by_the_next_call():
    weight = autojit.tensor([1.0, 2.0])
    compiled = autojit.compile(lambda x: x * weight)
    x = autojit.tensor([1.0, 1.0])
    compiled(x)
    weight.add_(1)
    assert compiled(x).tolist() == [2.0, 3.0]
    assert len(compiled.executables) == 1


def test_grad_mode_and_requires_grad_are_guarded():
    weight = autojit.tensor([2.0], requires_grad=True)

    def f(x):
        y = (weight * x).sum()
        if y.requires_grad:
            y.backward()
        return y.detach()

    compiled = autojit.compile(f)
    x = autojit.tensor([3.0])
    compiled(x)
    assert weight.grad.tolist() == [3.0]
    with autojit.no_grad():
        compiled(x)
    assert weight.grad.tolist() == [3.0]  # no backward without grad mode
    assert len(compiled.executables) == 2


def test_double_backward_gradient_penalty_equals_eager():
    def penalty_step(weight, x):
        out = (x @ weight).tanh().sum()
        (grad_x,) = autograd.grad(out, x, create_graph=True)
        loss = out + 10 * ((grad_x * grad_x).sum() - 1) ** 2
        loss.backward()
        return loss.detach()

    generator = np.random.default_rng(3)
    start = generator.standard_normal((4, 2))
    x_data = generator.standard_normal((5, 4))
    weight = autojit.tensor(start, requires_grad=True)
    eager_weight = autojit.tensor(start, requires_grad=True)
    compiled = autojit.compile(lambda x: penalty_step(weight, x))
    for _ in range(2):
        weight.grad = None
        eager_weight.grad = None
        got = compiled(autojit.tensor(x_data, requires_grad=True))
        want = penalty_step(eager_weight, autojit.tensor(x_data, requires_grad=True))
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
        np.testing.assert_allclose(weight.grad.numpy(), eager_weight.grad.numpy(), rtol=1e-12)


def test_argument_gradients_are_written_back():
    compiled = autojit.compile(lambda x: (x * x).sum().backward())
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    compiled(x)
    assert x.grad.tolist() == [2.0, 4.0]
    compiled(x)  # accumulates, like eager
    assert x.grad.tolist() == [4.0, 8.0]


def test_results_keep_structure_and_constants():
    compiled = autojit.compile(lambda x: {"double": x * 2, "pair": (x + 1, 7), "none": None})
    result = compiled(autojit.tensor([1.0]))
    assert result["double"].tolist() == [2.0]
    assert result["pair"][0].tolist() == [2.0] and result["pair"][1] == 7
    assert result["none"] is None


def test_result_differentiated_outside_gets_a_compiled_backward():
    weight = autojit.tensor([2.0], requires_grad=True)
    compiled = autojit.compile(lambda x: (weight * x).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = compiled(autojit.tensor([3.0]))
    loss.backward()
    assert weight.grad.tolist() == [3.0]
    assert compiled.executables[0].backward is not None


def test_result_of_a_step_differentiated_outside_raises_eagers_error():
    weight = autojit.tensor([2.0], requires_grad=True)

    def step(x):
        loss = (weight * x).sum()
        loss.backward()
        return loss

    loss = autojit.compile(step)(autojit.tensor([3.0]))
    assert loss.requires_grad and loss.grad_fn.name() == "CompiledFunctionBackward"
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_a_branch_on_a_tensor_is_checked_on_every_call():
    def f(x):
        if x.sum() > 0:  # data-dependent control flow: the branch taken is checked
            return x * 2
        return x * 3

    compiled = autojit.compile(f, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value in (1.0, -1.0, 2.0, -2.0):
            assert compiled(autojit.tensor([value])).tolist() == f(autojit.tensor([value])).tolist()
    assert len(compiled.executables) == 2 and compiled.stats().eager_calls == 0


def test_graph_break_runs_eagerly_and_warns_once_per_line():
    def f(x):
        autojit.manual_seed(0)  # a generator's state cannot be set in a trace
        return x * autojit.rand(1)

    compiled = autojit.compile(f)
    with pytest.warns(CompileWarning, match="graph break") as record:
        assert compiled(autojit.tensor([1.0])).tolist() == f(autojit.tensor([1.0])).tolist()
    assert "autojit.manual_seed(0)" in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled(autojit.tensor([-1.0])).tolist() == f(autojit.tensor([-1.0])).tolist()


def test_fullgraph_raises_naming_the_line():
    def f(x):
        return x * int(x.sum().item())

    compiled = autojit.compile(f, fullgraph=True)
    with pytest.raises(autojit.ir.GraphBreak, match=r"return x \* int\(x.sum\(\).item\(\)\)"):
        compiled(autojit.tensor([1.0]))


def test_recompile_limit_falls_back_to_eager_with_one_warning():
    # A string argument is guarded by its value (an int or float would be read on every call).
    compiled = autojit.compile(lambda x, n: x + len(n), recompile_limit=2)
    x = autojit.tensor([0.0])
    compiled(x, "a")
    compiled(x, "aa")
    with pytest.warns(CompileWarning, match="recompile limit of 2 reached"):
        assert compiled(x, "aaa").tolist() == [3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled(x, "aaaa").tolist() == [4.0]
    assert len(compiled.executables) == 2


def test_eager_backend_and_disable_variable(monkeypatch):
    compiled = autojit.compile(backend="eager")(lambda x: x + 1)
    assert compiled(autojit.tensor([1.0])).tolist() == [2.0]
    assert compiled.executables == []
    monkeypatch.setenv("AUTOJIT_DISABLE", "1")
    other = autojit.compile(lambda x: x + 1)
    assert other(autojit.tensor([1.0])).tolist() == [2.0]
    assert other.executables == []
    with pytest.raises(ValueError, match="unknown backend"):
        autojit.compile(lambda x: x, backend="tpu")


def test_methods_keywords_and_inspection():
    class Scaler:
        def __init__(self):
            self.factor = autojit.tensor([3.0])

        @autojit.compile
        def __call__(self, x, *, offset=0.0):
            return x * self.factor + offset

    scaler = Scaler()
    assert scaler(autojit.tensor([1.0])).tolist() == [3.0]
    assert scaler(autojit.tensor([1.0]), offset=1.0).tolist() == [4.0]
    scaler.factor = autojit.tensor([5.0])
    assert scaler(autojit.tensor([1.0])).tolist() == [5.0]

    compiled = autojit.compile(lambda x: (x * 2).exp())
    with pytest.raises(RuntimeError, match="has not been compiled yet"):
        compiled.ir()
    compiled(autojit.tensor([1.0]))
    assert "exp" in compiled.ir() and "mul" in compiled.ir(optimized=False)
    assert "args[0]._payload.shape == (1,)" in compiled.guards()


def test_custom_function_hooks_and_retain_grad_inside_a_compiled_step():
    def make_step(weight):
        def step(x):
            y = Exp.apply(weight * x)
            y.retain_grad()
            y.register_hook(lambda grad: grad * 2)
            y.sum().backward()
            return y.grad
        return step

    weight = autojit.tensor([0.5, 1.0], requires_grad=True)
    eager_weight = autojit.tensor([0.5, 1.0], requires_grad=True)
    compiled = autojit.compile(make_step(weight))
    eager = make_step(eager_weight)
    x = autojit.tensor([1.0, 2.0])
    for _ in range(2):
        np.testing.assert_allclose(compiled(x).numpy(), eager(x).numpy())
        np.testing.assert_allclose(weight.grad.numpy(), eager_weight.grad.numpy(), rtol=1e-6)
    assert compiled.executables[0].plan.kernel_count == 1


def test_fusion_keeps_intermediates_in_registers():
    compiled = autojit.compile(lambda x, y: ((x * y).exp() + 1).sum(dim=1))
    x, y = autojit.ones(4, 8), autojit.ones(8)
    np.testing.assert_allclose(compiled(x, y).numpy(), ((x * y).exp() + 1).sum(dim=1).numpy(),
                               rtol=1e-6)
    assert compiled.fusion_groups() == \
        "0: kernel k0_mul_exp_add_sum[4, 8]: mul exp add -> 1 outputs (sum)"


def test_each_step_of_a_compiled_call_is_a_profiler_event():
    compiled = autojit.compile(lambda x, w: ((x @ w).exp() + 1).sum())
    x, w = autojit.ones(2, 3), autojit.ones(3, 4)
    compiled(x, w)
    with autograd.profiler.profile(record_shapes=True) as prof:
        compiled(x, w)
    names = [event.name for event in prof.function_events]
    assert names[0] == "autojit::matmul"
    assert "autojit::kernel k0_exp_add_sum" in names


_PROFILED_STEP = """
import torch

model = torch.nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def step(x):
    optimizer.zero_grad()
    loss = torch.flatten(model(x)).exp().sum()
    loss.backward()
    optimizer.step()
    return loss.detach()


x = torch.ones(2, 4)
compiled = torch.compile(step)
compiled(x)
compiled(x)
with torch.autograd.profiler.profile() as prof:
    compiled(x)
    later = torch.compile(step)
    later(x)
    later(x)
compiled(x)
later(x)
print(len(compiled.executables), compiled.recompile_reasons)
print(len(later.executables), later.recompile_reasons)
print("autojit::matmul" in [event.name for event in prof.function_events])
"""


def test_a_profiler_does_not_trace_a_function_reading_public_functions_again(tmp_path):
    """A profiler puts dispatching wrappers in place of torch's public functions
    (tensor/torch_function.py) and takes them off after: a training step that reads one
    (`torch.flatten`, through the drop-in) runs the executable traced without them under the
    profiler, and one traced under it runs after it. Each traced again before."""
    script = tmp_path / "profiled.py"
    script.write_text(_PROFILED_STEP)
    done = subprocess.run([sys.executable, "-m", "autojit.drop_in", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["1 []", "1 []", "True"]


def test_random_numbers_are_drawn_anew_on_each_call_as_eager_draws_them():
    compiled = autojit.compile(lambda x: x + autojit.randn(2) * autojit.rand(2))
    x = autojit.zeros(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        autojit.manual_seed(4)
        first, second = compiled(x), compiled(x)
    assert first.tolist() != second.tolist()  # fresh numbers on every call
    autojit.manual_seed(4)
    eager = [x + autojit.randn(2) * autojit.rand(2) for _ in range(2)]
    assert [first.tolist(), second.tolist()] == [value.tolist() for value in eager]
    assert len(compiled.executables) == 1 and "random" in compiled.ir()
    with pytest.warns(CompileWarning, match="random numbers"):  # a random leaf: still a break
        autojit.compile(lambda x: x * autojit.rand(2, requires_grad=True))(x)


def test_dropout_in_a_compiled_training_step_equals_eager():
    import autojit.nn as nn

    losses = {}
    for compiled in (True, False):
        autojit.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 1))
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, optimizer=optimizer):
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        run = autojit.compile(step, fullgraph=True) if compiled else step
        autojit.manual_seed(5)
        losses[compiled] = [run(autojit.ones(8, 4), autojit.zeros(8, 1)).item()
                            for _ in range(4)]
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-6)


def test_dropout_mask_is_saved_for_a_compiled_backward():
    import autojit.nn as nn

    autojit.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5))
    compiled = autojit.compile(model)
    gradients = []
    for run in (compiled, model):
        autojit.manual_seed(3)
        run(autojit.ones(2, 4)).sum().backward()
        gradients.append(model[0].weight.grad.numpy().copy())
        model.zero_grad()
    np.testing.assert_array_equal(gradients[0], gradients[1])


def test_dropout_of_probability_one_differentiated_outside_equals_eager():
    # Its zeros are a constant of the forward: anchored on the backward's cotangent input of
    # the same shape, the split into forward and backward graphs failed.
    import autojit.nn as nn

    layer = nn.Linear(3, 4)
    model = nn.Sequential(layer, nn.Dropout(1.0))
    compiled = autojit.compile(lambda x: model(x) + 1)
    for run in (compiled, compiled, lambda x: model(x) + 1):
        result = run(autojit.ones(2, 3))
        np.testing.assert_array_equal(result.detach().numpy(), np.ones((2, 4)))
        result.sum().backward()
        np.testing.assert_array_equal(layer.weight.grad.numpy(), np.zeros((4, 3)))
        layer.weight.grad = None
    assert len(compiled.executables) == 1


def test_clearing_grad_at_the_start_of_a_step_does_not_retrace_every_call():
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        weight.grad = None  # zero_grad(set_to_none=True) before the backward
        (weight * x).sum().backward()

    compiled = autojit.compile(step)
    for scale in range(1, 6):
        compiled(autojit.tensor([float(scale), 1.0]))
        assert weight.grad.tolist() == [float(scale), 1.0]
    # The .grad held before a call is assigned before it is read: no guard, no retrace.
    assert len(compiled.executables) == 1

    only_clears = autojit.compile(lambda: setattr(weight, "grad", None))
    only_clears()
    assert weight.grad is None


def test_parameter_subclass_passes_its_guard():
    weight = autojit.nn.Parameter(autojit.ones(3))
    compiled = autojit.compile(lambda x: (x * weight).sum())
    for _ in range(3):
        compiled(autojit.ones(3))
    assert len(compiled.executables) == 1


def test_a_reachable_none_is_guarded_without_retracing():
    settings = {"clip": None}
    compiled = autojit.compile(lambda x: x * 2 if settings["clip"] is None else x * 3)
    for _ in range(3):
        assert compiled(autojit.ones(2)).tolist() == [2.0, 2.0]
    assert len(compiled.executables) == 1
    settings["clip"] = 1.0
    assert compiled(autojit.ones(2)).tolist() == [3.0, 3.0]


class _Box:
    def __init__(self):
        self.weight = autojit.ones(2)

    def scale(self, x):
        return x * self.weight


_box = _Box()


def scale(x):  # shares its name with the attribute it calls
    return _box.scale(x)


def test_attribute_names_are_not_taken_for_globals():
    compiled = autojit.compile(scale)
    globals()["scale"] = compiled  # the compiled function itself is a global named "scale"
    try:
        for _ in range(3):
            compiled(autojit.ones(2))
    finally:
        globals()["scale"] = compiled.fn
    assert len(compiled.executables) == 1
