"""Lazy layers against torch (nn/lazy.py, nn/parameter.py): the uninitialized parameters and
buffers, shape inference on the first call, the class each becomes, its initialization, state
dicts before and after, dtype conversion, optimizers built before the first call, errors, and a
compiled model whose first call materializes it eagerly."""

from __future__ import annotations

import copy
import io
import pickle
import warnings

import numpy as np
import pytest
from torch_reference import check_module

import autojit
from autojit import nn

torch = pytest.importorskip("torch")

# (kind, constructor arguments, input shape)
LAZY = [
    ("LazyLinear", (3,), (2, 4)),
    ("LazyConv1d", (4, 3), (2, 2, 5)),
    ("LazyConv2d", (4, 3), (1, 2, 5, 5)),
    ("LazyConv3d", (2, 2), (2, 3, 3, 3)),
    ("LazyConvTranspose1d", (3, 2), (1, 2, 4)),
    ("LazyConvTranspose2d", (4, 3), (1, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), (2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), (3, 2)),
    ("LazyBatchNorm2d", (), (3, 2, 2, 2)),
    ("LazyBatchNorm3d", (), (2, 2, 1, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 4)),
    ("LazyInstanceNorm2d", (), (2, 3, 2, 2)),
    ("LazyInstanceNorm3d", (), (2, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", {"bias": False, "momentum": None}, (3, 2, 3)),
]


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


@pytest.mark.parametrize(("kind", "args", "shape"), LAZY)
def test_lazy_layer_becomes_torchs_layer(kind, args, shape):
    args, kwargs = (args, {}) if isinstance(args, tuple) else ((), args)
    mine, theirs = getattr(nn, kind)(*args, **kwargs), getattr(torch.nn, kind)(*args, **kwargs)
    becomes = theirs.cls_to_become.__name__
    assert repr(mine) == repr(theirs)
    assert mine.has_uninitialized_params() and theirs.has_uninitialized_params()
    state_mine, state_theirs = mine.state_dict(), theirs.state_dict()
    assert list(state_mine) == list(state_theirs)
    for key, value in state_theirs.items():
        assert type(state_mine[key]).__name__ == type(value).__name__, key
    x = _random(shape)
    mine(autojit.tensor(x))
    theirs(torch.tensor(x))
    assert type(mine).__name__ == type(theirs).__name__ == becomes
    assert repr(mine) == repr(theirs)
    assert all(type(p) is nn.Parameter for p in mine.parameters())
    state_theirs = theirs.state_dict()
    assert list(mine.state_dict()) == list(state_theirs)
    # The layer it became is torch's numerically, given torch's state.
    mine.load_state_dict({key: autojit.tensor(value.numpy()) for key, value in
                          state_theirs.items()})
    check_module(mine, theirs, (_random(shape, seed=1),), "float32")


@pytest.mark.parametrize(("lazy", "eager", "args", "shape"), [
    ("LazyLinear", "Linear", (3,), (2, 4)),
    ("LazyConv2d", "Conv2d", (4, 3), (1, 2, 5, 5)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (3, 2), (1, 2, 4)),
])
def test_first_call_draws_the_layers_default_initialization(lazy, eager, args, shape):
    # Nothing is drawn until the first call, which draws what the eager layer's constructor
    # does: with one seed both hold the same values, in autojit as in torch.
    for library in (autojit, torch):
        library.manual_seed(3)
        made = getattr(library.nn, lazy)(*args)
        made(library.ones(*shape))
        library.manual_seed(3)
        in_channels = shape[-1] if lazy == "LazyLinear" else shape[1]
        reference = getattr(library.nn, eager)(in_channels, *args)
        for a, b in zip(made.parameters(), reference.parameters(), strict=True):
            assert a.shape == b.shape
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_uninitialized_parameters_raise_torchs_errors():
    layer, reference = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert isinstance(layer.weight, nn.parameter.UninitializedParameter)
    assert isinstance(layer.weight, nn.Parameter)
    assert nn.UninitializedParameter is nn.parameter.UninitializedParameter
    assert repr(layer.weight) == repr(reference.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        layer.weight.shape  # noqa: B018
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        layer.weight + 1  # noqa: B018
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        reference.weight + 1  # noqa: B018
    buffer = nn.parameter.UninitializedBuffer()
    assert repr(buffer) == "<UninitializedBuffer>" and not buffer.requires_grad
    # An uninitialized state into an initialized layer: torch's error, the shape unreadable.
    for library, made in ((nn, nn.Linear(4, 3)), (torch.nn, torch.nn.Linear(4, 3))):
        with pytest.raises(RuntimeError, match="Can't access the shape"):
            made.load_state_dict(library.LazyLinear(3).state_dict())
    # An uninitialized tensor is not data: saved as an object, as torch saves it, it loads
    # with weights_only=False only.
    saved = io.BytesIO()
    autojit.save(nn.LazyLinear(3).state_dict(), saved)
    saved.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        autojit.load(saved)
    saved.seek(0)
    assert repr(autojit.load(saved, weights_only=False)["weight"]) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Expected 2D \\(unbatched\\) or 3D \\(batched\\) "
                       "input to LazyConv1d, but got input of size"):
        nn.LazyConv1d(2, 3)(autojit.ones(1, 1, 2, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(2, 1, groups=2)(autojit.ones(1, 3, 5))


def test_lazy_state_loads_and_converts_as_torchs():
    # A lazy layer loading an initialized state takes its shapes and values and stays lazy
    # until its first call, which keeps them.
    source = nn.Linear(4, 3)
    layer = nn.LazyLinear(3)
    layer.load_state_dict(source.state_dict())
    reference = torch.nn.LazyLinear(3)
    reference.load_state_dict(torch.nn.Linear(4, 3).state_dict())
    assert type(layer).__name__ == type(reference).__name__ == "LazyLinear"
    assert not layer.has_uninitialized_params()
    x = autojit.ones(2, 4)
    np.testing.assert_array_equal(layer(x).detach().numpy(), source(x).detach().numpy())
    assert type(layer) is nn.Linear
    # dtype conversion before the first call is kept for materialization; copies and pickles
    # stay lazy.
    doubled = nn.LazyBatchNorm1d().double()
    for copied in (copy.deepcopy(doubled), pickle.loads(pickle.dumps(doubled))):
        copied(autojit.ones(3, 2, dtype=autojit.float64))
        assert type(copied) is nn.BatchNorm1d and not copied._forward_pre_hooks
        assert copied.weight.dtype == copied.running_mean.dtype == autojit.float64
        assert copied.num_batches_tracked.item() == 1
    assert doubled.has_uninitialized_params()


def test_optimizer_built_before_the_first_call_steps_the_materialized_parameters():
    layer = nn.LazyLinear(2)
    optimizer = autojit.optim.SGD(layer.parameters(), lr=0.5)
    weight = layer.weight
    layer(autojit.ones(3, 4)).sum().backward()
    assert layer.weight is weight and type(weight) is nn.Parameter
    before = weight.detach().numpy().copy()
    optimizer.step()
    np.testing.assert_allclose(weight.detach().numpy(), before - 0.5 * 3.0, rtol=1e-6)
    # An optimizer that makes its state from the parameters when it is built cannot.
    for library in (autojit, torch):
        with pytest.raises((ValueError, RuntimeError), match="uninitialized parameter"):
            library.optim.Adagrad(library.nn.LazyLinear(2).parameters())


def test_compiled_lazy_model_materializes_eagerly_then_compiles():
    autojit.manual_seed(0)
    model = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(1))
    compiled = autojit.compile(model)
    x = autojit.tensor(_random((2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = compiled(x)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
    assert model[0].weight.shape == (5, 3)
    second = compiled(x)
    assert compiled.executables, "the calls after the first did not compile"
    np.testing.assert_allclose(second.detach().numpy(), first.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(second.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
