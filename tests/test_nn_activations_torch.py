"""The activation layers and their functional forms (nn/activation/,
nn/functional/activation.py) against torch: every activation module of torch.nn exists, prints
as torch's, and with torch's state_dict loaded gives torch's output and gradients (input and
parameters) in float64 and float32; the in-place forms write into their input as torch's do;
errors are torch's; RReLU and gumbel_softmax draw their randomness as documented, the same with
the same seed eagerly and compiled. Derivatives at the kinks are in test_nn_activation_points.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit import nn

sys.path.insert(0, str(Path(__file__).parent))

from torch_pairs import assert_close, compare_with_gradients, leaves, pair  # noqa: E402

torch = pytest.importorskip("torch")
F = nn.functional

# (class name, constructor arguments): each torch.nn activation, with its options.
MODULES = [
    ("ReLU", ()), ("ReLU6", ()), ("Hardtanh", ()), ("Hardtanh", (-0.5, 2.0)),
    ("Threshold", (0.1, -3.0)), ("ELU", (0.7,)), ("SELU", ()), ("CELU", (1.5,)),
    ("LeakyReLU", (0.2,)), ("RReLU", (0.1, 0.4)), ("PReLU", ()), ("PReLU", (4, 0.1)),
    ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Mish", ()), ("Hardswish", ()),
    ("Hardsigmoid", ()), ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)), ("Tanhshrink", ()),
    ("Softsign", ()), ("Softplus", (2.0, 3.0)), ("Sigmoid", ()), ("Tanh", ()),
    ("LogSigmoid", ()), ("GLU", (1,)), ("Softmax", (1,)), ("LogSoftmax", (2,)),
    ("Softmin", (0,)), ("Softmax2d", ()),
]


def test_every_torch_activation_exists():
    from torch.nn.modules import activation

    names = set(activation.__all__) - {"MultiheadAttention"}  # attention is its own layer
    assert sorted(name for name in names if not hasattr(nn, name)) == []


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind, args", MODULES, ids=[f"{kind}{args}" for kind, args in MODULES])
def test_module_matches_torch(kind, args, dtype):
    mine, theirs = pair(torch, kind, dtype, *args)
    mine.eval(), theirs.eval()  # RReLU's evaluation slope; the others have no mode
    assert repr(mine) == repr(theirs)
    rng = np.random.default_rng(0)
    # Values around every kink of the activations above, and ordinary ones.
    x = np.concatenate([rng.standard_normal(24) * 3,
                        [0.0, -3.0, 3.0, 0.3, -0.3, 6.0, 0.1, -1.0, -0.5, 2.0, 1.0, -2.0]])
    x = x.reshape(3, 4, 3).astype(dtype)
    (x_mine,), (x_theirs,) = leaves(torch, x)
    out_mine, out_theirs = mine(x_mine), theirs(x_theirs)
    compare_with_gradients(torch, out_mine, out_theirs, [x_mine, *mine.parameters()],
                           [x_theirs, *theirs.parameters()], dtype, kind)


@pytest.mark.parametrize("kind, args", [
    ("ReLU", (True,)), ("ReLU6", (True,)), ("Hardtanh", (-1.0, 1.0, True)),
    ("Threshold", (0.1, 20.0, True)), ("ELU", (0.5, True)), ("SELU", (True,)),
    ("CELU", (2.0, True)), ("LeakyReLU", (0.2, True)), ("RReLU", (0.1, 0.3, True)),
    ("SiLU", (True,)), ("Mish", (True,)), ("Hardswish", (True,)), ("Hardsigmoid", (True,)),
])
def test_inplace_modules_write_their_input_as_torch_does(kind, args):
    mine, theirs = pair(torch, kind, "float64", *args)
    mine.eval(), theirs.eval()
    assert repr(mine) == repr(theirs)
    x = np.linspace(-4, 4, 9)
    (w_mine,), (w_theirs,) = leaves(torch, np.full(9, 1.5))
    hidden_mine, hidden_theirs = x * w_mine, torch.tensor(x) * w_theirs
    version = hidden_mine._version
    out_mine, out_theirs = mine(hidden_mine), theirs(hidden_theirs)
    assert out_mine is hidden_mine and out_theirs is hidden_theirs
    assert hidden_mine._version == version + 1
    compare_with_gradients(torch, out_mine, out_theirs, [w_mine], [w_theirs], "float64", kind)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        mine(autojit.ones(2, requires_grad=True))


@pytest.mark.parametrize("name, args", [
    ("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5)),
    ("threshold_", (0.2, -1.0)), ("selu_", ()), ("celu_", (2.0,)), ("rrelu_", (0.1, 0.3)),
])
def test_underscore_forms_match_torch(name, args):
    x = np.linspace(-2, 2, 7)
    mine, theirs = autojit.tensor(x), torch.tensor(x)
    assert getattr(F, name)(mine, *args) is mine
    getattr(torch.nn.functional, name)(theirs, *args)
    assert_close(mine, theirs)


def test_integer_inputs_as_torch():
    x = [-2, 0, 3, 7]
    for name, args in [("relu", ()), ("relu6", ()), ("hardtanh", ()), ("threshold", (2, 5)),
                       ("hardtanh", (-1.5, 2.5))]:
        mine = getattr(F, name)(autojit.tensor(x), *args)
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), *args)
        assert mine.dtype is autojit.int64 and mine.tolist() == theirs.tolist(), name
    for name in ("elu", "selu", "hardswish", "mish", "glu", "hardshrink", "leaky_relu",
                 "logsigmoid", "silu", "rrelu", "gelu", "softplus"):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'") as error:
            getattr(F, name)(autojit.tensor(x))
        with pytest.raises(NotImplementedError) as reference:
            getattr(torch.nn.functional, name)(torch.tensor(x))
        assert str(error.value) == str(reference.value)
    for name, dtype in [("gelu", "bool"), ("softplus", "bool"), ("gelu", "complex64")]:
        with pytest.raises(NotImplementedError) as error:
            getattr(F, name)(autojit.ones(2, dtype=getattr(autojit, dtype)))
        with pytest.raises(NotImplementedError) as reference:
            getattr(torch.nn.functional, name)(torch.ones(2, dtype=getattr(torch, dtype)))
        assert str(error.value) == str(reference.value)


def _error(function, *args):
    try:
        function(*args)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error), str(error)
    return None, None


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.glu(lib.zeros(2, 3)),
    lambda lib: lib.nn.functional.glu(lib.zeros(())),
    lambda lib: lib.nn.functional.prelu(lib.zeros(2, 3), lib.zeros(4)),
    lambda lib: lib.nn.functional.prelu(lib.zeros(2, 3), lib.zeros(1, 3)),
    lambda lib: lib.nn.functional.prelu(lib.zeros(3), lib.zeros(3)),
    lambda lib: lib.nn.Softmax2d()(lib.zeros(2, 3)),
    lambda lib: lib.nn.functional.hardtanh(lib.zeros(2), 2.0, 1.0),
    lambda lib: lib.nn.Hardtanh(2.0, 1.0),
    lambda lib: lib.nn.functional.rrelu(lib.zeros(2), 0.5, 0.1),
    lambda lib: lib.nn.functional.celu(lib.zeros(2), alpha=0.0),
    lambda lib: lib.nn.functional.softshrink(lib.zeros(2), -1.0),
    lambda lib: lib.nn.functional.softshrink(lib.zeros(2, dtype=lib.float64), -1.0),
], ids=["glu-odd", "glu-scalar", "prelu-count", "prelu-2d-weight", "prelu-1d-input",
        "softmax2d", "hardtanh-bounds", "Hardtanh-bounds", "rrelu-bounds", "celu-alpha",
        "softshrink-lambda", "softshrink-lambda-double"])
def test_errors_match_torch(call):
    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs[0] is not None and mine == theirs


def test_hardtanh_deprecated_arguments_warn():
    with pytest.warns(FutureWarning, match="`min_value` is deprecated"):
        layer = nn.Hardtanh(min_value=-2.0)
    assert repr(layer) == "Hardtanh(min_val=-2.0, max_val=1.0)"


def test_prelu_parameters_and_init():
    layer = nn.PReLU(4, init=0.1, dtype=autojit.float64)
    assert list(layer.state_dict()) == ["weight"] and layer.weight.dtype is autojit.float64
    assert layer.weight.tolist() == [0.1] * 4
    with autojit.no_grad():
        layer.weight.fill_(3.0)
    layer.reset_parameters()
    assert layer.weight.tolist() == [0.1] * 4


def test_rrelu_training_draws_slopes_in_its_range():
    layer = nn.RReLU(0.1, 0.3)
    x = -autojit.ones(20000, dtype=autojit.float64)
    slopes = -layer(x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.std() - 0.2 / np.sqrt(12)) < 0.005
    assert layer(autojit.tensor([2.0, 0.0])).tolist() == [2.0, 0.0]
    # The gradient of each element is its slope, as torch's.
    x = autojit.full((5,), -1.0, dtype=autojit.float64, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -out.detach().numpy())


def _seeded_runs(function, x):
    autojit.manual_seed(7)
    eager = [function(x).detach().numpy() for _ in range(2)]
    compiled_function = autojit.compile(function)
    autojit.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        compiled = [compiled_function(x).detach().numpy() for _ in range(2)]
    return eager, compiled


@pytest.mark.parametrize("function", [
    lambda x: F.rrelu(x, training=True),
    lambda x: F.gumbel_softmax(x, tau=0.5),
    lambda x: F.gumbel_softmax(x, hard=True),
], ids=["rrelu", "gumbel_softmax", "gumbel_softmax-hard"])
def test_random_activations_repeat_with_the_seed_eagerly_and_compiled(function):
    x = autojit.tensor(np.linspace(-2, 2, 12).reshape(3, 4), dtype=autojit.float32)
    eager, compiled = _seeded_runs(function, x)
    assert not np.array_equal(eager[0], eager[1]) or eager[0].max() == 1  # each call draws anew
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_gumbel_softmax_samples_the_softmax_distribution():
    logits = autojit.tensor([[0.0, 1.0, 2.0]], dtype=autojit.float64).expand(20000, 3)
    autojit.manual_seed(0)
    hard = F.gumbel_softmax(logits, hard=True)
    frequencies = hard.numpy().mean(0)
    np.testing.assert_allclose(frequencies, F.softmax(logits[0], 0).numpy(), atol=0.015)
    assert set(np.unique(hard.numpy())) == {0.0, 1.0} and (hard.numpy().sum(1) == 1).all()
    soft = F.gumbel_softmax(logits[:4], tau=2.0, dim=0)
    np.testing.assert_allclose(soft.numpy().sum(0), 1.0)


def test_gumbel_softmax_hard_is_straight_through():
    logits = autojit.tensor([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]], requires_grad=True)
    weights = autojit.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    for hard in (True, False):
        autojit.manual_seed(3)
        (F.gumbel_softmax(logits, tau=0.7, hard=hard) * weights).sum().backward()
        if hard:
            hard_gradient, logits.grad = logits.grad.numpy().copy(), None
    np.testing.assert_allclose(hard_gradient, logits.grad.numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-5)


# A representative subset: a bound, an exponential unit, a learned slope, a gate, a smooth unit,
# a shrink, the random slopes in evaluation and in place.
TRAINED = [("Hardtanh", (-0.5, 0.5)), ("CELU", (0.5,)), ("PReLU", (6,)), ("GLU", ()),
           ("Mish", ()), ("Softshrink", (0.1,)), ("RReLU", (0.1, 0.3, True))]


@pytest.mark.parametrize("kind, args", TRAINED, ids=[kind for kind, _ in TRAINED])
def test_a_compiled_training_step_equals_eager(kind, args):
    def run(compiled: bool):
        autojit.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 6), getattr(nn, kind)(*args), nn.Linear(
            3 if kind == "GLU" else 6, 1)).eval()
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
        rng = np.random.default_rng(0)
        x = autojit.tensor(rng.standard_normal((5, 3)), dtype=autojit.float32)
        y = autojit.tensor(rng.standard_normal((5, 1)), dtype=autojit.float32)

        def step(x, y):
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", autojit.CompileWarning)
            losses = [float(function(x, y)) for _ in range(4)]
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    compiled_losses, compiled_weights = run(True)
    eager_losses, eager_weights = run(False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
