"""Dynamic shapes: symbolic sizes in a trace, their guards, and one executable for many sizes.

Each test counts how often the Python function body runs (a trace runs it once; a compiled
call runs none of it), and compares every result with the eager run.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit
import autojit.nn.functional as F
from autojit import nn
from autojit.tensor.symbolic import ShapeEnv, poly_source


def _tensor(rng, *shape, requires_grad=False):
    return autojit.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


class Counted:
    """A function wrapper counting its runs (traces, or eager calls). The guards'
    walk looks only at `fn` (the attribute compiler/api.py's own functions use): the counter,
    written by every run, is not state the traced function depends on."""

    _reachable_attributes = ("fn",)
    __slots__ = ("fn", "runs")

    def __init__(self, fn):
        self.fn, self.runs = fn, 0

    def __call__(self, *args):
        self.runs += 1
        return self.fn(*args)


# ---- symbolic sizes ---------------------------------------------------------------------------

def test_symbolic_arithmetic_records_only_the_decisions_it_needs():
    env = ShapeEnv()
    n = env.create_symbol(12, (0, 0))
    assert poly_source((n * 3 + 4).poly) in ("3*s0 + 4", "4 + 3*s0")
    assert (n * 4) // 2 == n * 2  # exact division stays a polynomial: decided, no guard
    assert (n * 4) % 2 == 0
    assert n + 1 > n  # a constant difference decides the comparison without a guard
    assert env.guards == []
    assert n > 10  # depends on the size: recorded
    assert env.guards == ["s0 > 10"]
    assert (1.0 / n).evaluate({"s0": 7}) == 1.0 / 7
    assert int(n) == 12 and env.guards[-1] == "s0 == 12"  # a real int specializes
    assert env.check({"s0": 12}) and not env.check({"s0": 13})
    # The user's code formatting a size gets its value, and the text is a decision on it.
    assert str(n * 3 + 4) == "40" and f"{n:>3}" == " 12"
    assert any(guard.startswith("format((") and guard.endswith(", '') == '40'")
               for guard in env.guards)


# ---- one executable for many sizes ------------------------------------------------------------

def _mlp_and_step(seed: int):
    autojit.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return model, step


@pytest.mark.parametrize("dynamic", [True, None])
def test_training_step_runs_every_batch_size_from_one_trace(dynamic):
    rng = np.random.default_rng(0)
    sizes = [5, 9, 5, 17, 32, 9, 7]
    batches = [(autojit.tensor(rng.standard_normal((n, 6)), dtype=autojit.float32),
                autojit.tensor(rng.integers(0, 3, n))) for n in sizes]
    model, step = _mlp_and_step(1)
    expected = [step(x, y).item() for x, y in batches]
    expected_parameters = [p.detach().numpy().copy() for p in model.parameters()]

    model, step = _mlp_and_step(1)
    counted = Counted(step)
    compiled = autojit.compile(counted, dynamic=dynamic)
    got = [compiled(x, y).item() for x, y in batches]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    for parameter, want in zip(model.parameters(), expected_parameters, strict=True):
        np.testing.assert_allclose(parameter.detach().numpy(), want, rtol=1e-5, atol=1e-6)
    # The first call traces with .grad None; the second traces again with .grad set (and, when
    # automatic, with the batch size made symbolic); no size after that traces.
    assert counted.runs == 2
    dynamic_executable = compiled.executables[0]
    assert len(dynamic_executable.specialized) == len(set(sizes[1:]))
    assert "f32[s0," in compiled.ir(optimized=False)


def test_automatic_dynamic_starts_static_and_dynamic_false_never_generalizes():
    rng = np.random.default_rng(1)
    counted = Counted(lambda x: (x.tanh() * 2).sum(dim=0))
    compiled = autojit.compile(counted)
    for n in (4, 4, 6, 8, 10):
        x = _tensor(rng, n, 3)
        np.testing.assert_allclose(compiled(x).numpy(), (x.tanh() * 2).sum(dim=0).numpy())
    assert counted.runs == 2  # size 4 static; size 6 makes dim 0 symbolic; 8 and 10 reuse it
    assert "f64[3]" in compiled.ir(optimized=False)
    assert "s0" not in compiled.guards().split("#")[0] or "shape[0]" in compiled.guards()

    counted = Counted(lambda x: (x.tanh() * 2).sum(dim=0))
    static = autojit.compile(counted, dynamic=False)
    for n in (4, 6, 8):
        static(_tensor(rng, n, 3))
    assert counted.runs == 3


def test_sizes_in_python_arithmetic_stay_symbolic():
    """x.shape[0] used as a number (a mean by hand, a reshape target) is exact at every size."""
    counted = Counted(lambda x: (x.sum() / x.shape[0], x.reshape(x.shape[0] * 2, -1),
                                 x.mean(dim=0) * (1.0 / x.shape[0])))
    compiled = autojit.compile(counted, dynamic=True)
    rng = np.random.default_rng(2)
    for n in (3, 7, 11):
        x = _tensor(rng, n, 4)
        total, reshaped, scaled = compiled(x)
        assert total.item() == pytest.approx(x.numpy().sum() / n, rel=1e-12)
        assert reshaped.shape == (2 * n, 2)
        np.testing.assert_allclose(scaled.numpy(), x.numpy().mean(axis=0) / n, rtol=1e-12)
    assert counted.runs == 1


def test_a_branch_on_a_size_is_guarded():
    counted = Counted(lambda x: x * 2 if x.shape[0] > 10 else x * 3)
    compiled = autojit.compile(counted, dynamic=True)
    rng = np.random.default_rng(3)
    for n, factor in ((4, 3), (12, 2), (6, 3), (20, 2)):
        x = _tensor(rng, n)
        np.testing.assert_array_equal(compiled(x).numpy(), x.numpy() * factor)
    assert counted.runs == 2  # one trace per side of the branch
    assert "shape[0] > 10" in compiled.guards() or "shape[0] <= 10" in compiled.guards()


def test_a_size_needed_as_an_int_specializes_and_stays_correct():
    def rows(x):
        return autojit.stack([x[i] * i for i in range(x.shape[0])])

    counted = Counted(rows)
    compiled = autojit.compile(counted, dynamic=True)
    rng = np.random.default_rng(4)
    for n in (3, 5, 3):
        x = _tensor(rng, n, 2)
        np.testing.assert_allclose(compiled(x).numpy(), x.numpy() * np.arange(n)[:, None])
    assert counted.runs == 2  # specialized per size: 3, then 5; 3 again reuses the first


def test_sizes_zero_and_one_are_traced_as_constants():
    counted = Counted(lambda x, y: x + y)
    compiled = autojit.compile(counted, dynamic=True)
    rng = np.random.default_rng(5)
    for n in (3, 1, 4):
        x, y = _tensor(rng, n, 2), _tensor(rng, 1, 2)
        np.testing.assert_array_equal(compiled(x, y).numpy(), x.numpy() + y.numpy())
    assert counted.runs == 2  # n = 1 is its own (static) trace; 3 and 4 share one


def test_mismatched_dynamic_sizes_raise_the_eager_error():
    compiled = autojit.compile(lambda x, y: x * y, dynamic=True)
    rng = np.random.default_rng(6)
    compiled(_tensor(rng, 4, 3), _tensor(rng, 4, 3))
    with pytest.raises(RuntimeError, match="must match the size"):
        compiled(_tensor(rng, 4, 3), _tensor(rng, 5, 3))


def test_outside_backward_and_dropout_at_several_sizes():
    layer = nn.Linear(4, 3)
    layer.train()

    def forward(x):
        return F.dropout(layer(x).relu(), p=0.3).sum()

    compiled = autojit.compile(forward, dynamic=True)
    rng = np.random.default_rng(7)
    for n in (5, 8, 6):
        data = rng.standard_normal((n, 4))
        autojit.manual_seed(n)
        x = autojit.tensor(data, dtype=autojit.float32, requires_grad=True)
        eager = forward(x)
        eager.backward()
        expected_grad, expected_weight = x.grad.numpy().copy(), layer.weight.grad.numpy().copy()
        layer.weight.grad = None
        layer.bias.grad = None
        autojit.manual_seed(n)
        x = autojit.tensor(data, dtype=autojit.float32, requires_grad=True)
        loss = compiled(x)
        assert loss.item() == pytest.approx(eager.item(), rel=1e-5)
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), expected_grad, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(layer.weight.grad.numpy(), expected_weight, rtol=1e-5,
                                   atol=1e-6)
        layer.weight.grad = None
        layer.bias.grad = None
    assert len(compiled.executables) == 1


def test_gradient_penalty_with_a_dynamic_batch():
    """Double backward in a dynamic trace."""
    weight = autojit.tensor(np.random.default_rng(8).standard_normal((3, 1)), requires_grad=True)

    def penalty(x):
        out = (x @ weight).tanh().sum()
        (gradient,) = autojit.autograd.grad(out, x, create_graph=True)
        loss = ((gradient.norm(dim=1) - 1) ** 2).mean()
        loss.backward()
        return loss.detach()

    compiled = autojit.compile(penalty, dynamic=True)
    rng = np.random.default_rng(9)
    for n in (4, 9, 6):
        data = rng.standard_normal((n, 3))
        weight.grad = None
        expected = penalty(autojit.tensor(data, requires_grad=True)).item()
        expected_grad = weight.grad.numpy().copy()
        weight.grad = None
        got = compiled(autojit.tensor(data, requires_grad=True)).item()
        assert got == pytest.approx(expected, rel=1e-12)
        np.testing.assert_allclose(weight.grad.numpy(), expected_grad, rtol=1e-10)


def test_compile_rejects_a_non_boolean_dynamic():
    with pytest.raises(TypeError, match="dynamic must be None, True or False"):
        autojit.compile(lambda x: x, dynamic="yes")


def _float_batch(rng, *shape):
    return autojit.tensor(rng.standard_normal(shape), dtype=autojit.float32)


MODELS = {
    "conv": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                   nn.Flatten(), nn.Linear(3 * 4 * 4, 5)),
             lambda rng, n: _float_batch(rng, n, 2, 8, 8)),
    "layer_norm": (lambda: nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU()),
                   lambda rng, n: _float_batch(rng, n, 6)),
    "batch_norm": (lambda: nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Tanh()),
                   lambda rng, n: _float_batch(rng, n, 6)),
    "embedding": (lambda: nn.Embedding(10, 4),
                  lambda rng, n: autojit.tensor(rng.integers(0, 10, (n, 3)))),
    "sequence_softmax": (lambda: nn.Linear(5, 5), lambda rng, n: _float_batch(rng, 2, n, 5)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_layers_trace_once_for_every_batch_size(name):
    """Slicing (convolution's im2col), normalization over the batch, embedding lookups and
    softmax over a dynamic axis keep their sizes symbolic: one trace serves every size."""
    build, make_input = MODELS[name]
    autojit.manual_seed(0)
    model = build()

    def step(x):
        loss = model(x).square().mean()
        loss.backward()
        return loss.detach()

    counted = Counted(step)
    compiled = autojit.compile(counted, dynamic=True)
    rng = np.random.default_rng(10)
    for n in (4, 6, 9):
        x = make_input(rng, n)
        for parameter in model.parameters():
            parameter.grad = None
        expected = step(x).item()
        expected_grads = [p.grad.numpy().copy() for p in model.parameters()]
        for parameter in model.parameters():
            parameter.grad = None
        assert compiled(x).item() == pytest.approx(expected, rel=1e-5, abs=1e-6)
        for parameter, want in zip(model.parameters(), expected_grads, strict=True):
            np.testing.assert_allclose(parameter.grad.numpy(), want, rtol=1e-4, atol=1e-6)
    assert counted.runs == 1


def test_new_sizes_reuse_the_compiled_kernels():
    """A dynamic trace's kernels read their extents at run time: a new size compiles none."""
    from autojit.codegen.cpu import jit as cpu

    weight = autojit.tensor(np.random.default_rng(11).standard_normal((3, 4)))
    compiled = autojit.compile(lambda x: ((x @ weight).relu() * 2 + x.sum()).sum(dim=0),
                               dynamic=True)
    rng = np.random.default_rng(12)
    compiled(_tensor(rng, 5, 3))
    kernels = len(cpu._CACHE)
    for n in (7, 9, 64, 1000):
        x = _tensor(rng, n, 3)
        expected = (np.maximum(x.numpy() @ weight.numpy(), 0) * 2 + x.numpy().sum()).sum(axis=0)
        np.testing.assert_allclose(compiled(x).numpy(), expected, rtol=1e-12)
    assert len(cpu._CACHE) == kernels


def test_large_dynamic_kernels_split_over_cores_stay_exact():
    compiled = autojit.compile(lambda x: ((x * 2).tanh() + 1).sum(dim=1), dynamic=True)
    rng = np.random.default_rng(13)
    for rows in (600, 800):
        x = _tensor(rng, rows, 512)
        expected = (np.tanh(x.numpy() * 2) + 1).sum(axis=1)
        np.testing.assert_allclose(compiled(x).numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["chunk", "split", "interpolate_linear",
                                  "interpolate_bicubic", "interpolate_antialias"])
def test_shape_dependent_python_in_ops_works_at_new_sizes(name):
    # chunk's piece count and interpolate's source positions are Python values computed from
    # a size: in a dynamic trace they specialize (guarded) instead of failing.
    functions = {
        "chunk": lambda x: x.chunk(2, -1)[0] * 2,
        "split": lambda x: sum(piece.sum() for piece in x.split(3, -1)),
        "interpolate_linear": lambda x: F.interpolate(x[0], scale_factor=2, mode="linear"),
        "interpolate_bicubic": lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"),
        "interpolate_antialias": lambda x: F.interpolate(x, scale_factor=0.5,
                                                         mode="bilinear", antialias=True),
    }
    function = functions[name]
    compiled = autojit.compile(function)
    for size in (8, 10, 12, 10):
        x = autojit.tensor(np.random.default_rng(size).standard_normal((1, 2, size, size)),
                           dtype=autojit.float32)
        np.testing.assert_allclose(compiled(x).numpy(), function(x).numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_full_batches_keep_their_own_executable_after_a_ragged_last_batch():
    model, step = _mlp_and_step(0)
    compiled = autojit.compile(step)
    rng = np.random.default_rng(0)
    for rows in (16, 16, 7, 16, 16):  # the last batch of an epoch, then the next epoch
        x = autojit.tensor(rng.standard_normal((rows, 6)).astype(np.float32))
        y = autojit.tensor(rng.integers(0, 3, rows))
        compiled(x, y)
    # The executable made for 16 rows serves them, not the size-generic one made after 7.
    assert type(compiled._last_run).__name__ == "Executable"
    assert type(compiled.executables[-1]).__name__ == "DynamicExecutable"


def test_a_binding_called_often_gets_a_static_plan():
    # After a recompile for another reason (a learning rate that changed), the size-generic
    # executable serves the full batches too: a binding it serves STATIC_AFTER times in a row
    # is compiled again with static kernels, one called as often between others (an epoch's
    # last batch) is not, and the values stay eager's.
    from autojit.compiler.dynamic_shapes import STATIC_AFTER

    rng = np.random.default_rng(0)
    sizes = [6, 9] * STATIC_AFTER + [6] * STATIC_AFTER + [9]
    batches = [(autojit.tensor(rng.standard_normal((n, 6)), dtype=autojit.float32),
                autojit.tensor(rng.integers(0, 3, n))) for n in sizes]
    model, step = _mlp_and_step(2)
    expected = [step(x, y).item() for x, y in batches]
    model, step = _mlp_and_step(2)
    compiled = autojit.compile(step, dynamic=True)
    got = [compiled(x, y).item() for x, y in batches]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    dynamic_executable = compiled.executables[0]
    plans = {key[0]: plan.static for key, plan in dynamic_executable.specialized.items()}
    assert plans == {6: True, 9: False}


def test_an_epochs_last_batch_keeps_its_generic_plan():
    # dynamic=None: the full batches run the static executable of their size, the ragged last
    # batch of each epoch the size-generic one; its calls are never in a row, so that its
    # plan is not compiled again (about 0.1 s each for a 1-2 ms call).
    from autojit.compiler.dynamic_shapes import STATIC_AFTER

    rng = np.random.default_rng(1)
    sizes = [6, 6, 6] + [6, 9] * (STATIC_AFTER + 1)
    batches = [(autojit.tensor(rng.standard_normal((n, 6)), dtype=autojit.float32),
                autojit.tensor(rng.integers(0, 3, n))) for n in sizes]
    model, step = _mlp_and_step(3)
    expected = [step(x, y).item() for x, y in batches]
    model, step = _mlp_and_step(3)
    compiled = autojit.compile(step)
    got = [compiled(x, y).item() for x, y in batches]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    dynamic_executable = compiled.executables[-1]
    assert type(dynamic_executable).__name__ == "DynamicExecutable"
    plans = {key[0]: plan.static for key, plan in dynamic_executable.specialized.items()}
    assert plans == {9: False}


def test_a_retrace_at_the_full_batch_compiles_it_static_at_once():
    # A float the step reads that changed traces it again (dynamic: a last batch of another
    # size was seen); the full batch, which a static executable served, gets a static plan
    # at its first call rather than a generic one and a static one three calls later. (An
    # optimizer's learning rate would not: it is read on every call from the first trace.)
    rng = np.random.default_rng(2)
    sizes = [6, 6, 6, 9, 6, 6]
    batches = [(autojit.tensor(rng.standard_normal((n, 6)), dtype=autojit.float32),
                autojit.tensor(rng.integers(0, 3, n))) for n in sizes]

    def run(compile_it):
        autojit.manual_seed(4)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
        settings = {"scale": 1.0}

        def step(x, y):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y) * settings["scale"]
            loss.backward()
            optimizer.step()
            return loss

        compiled = autojit.compile(step) if compile_it else step
        losses = [compiled(x, y).item() for x, y in batches[:5]]
        settings["scale"] = 0.5
        losses.append(compiled(*batches[5]).item())
        return losses, compiled

    expected, _ = run(False)
    got, compiled = run(True)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    latest = compiled._last_run
    assert type(latest).__name__ == "DynamicExecutable"
    assert {key[0]: plan.static for key, plan in latest.specialized.items()} == {6: True}
