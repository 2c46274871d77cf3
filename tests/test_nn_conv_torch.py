"""Convolutions against torch (nn/functional/conv*.py, nn/convolution*.py, nn/padding.py):
conv3d, transposed convolutions (stride, padding, output_padding, groups, dilation and
output_size=), padding='same'/'valid' and every padding_mode, F.pad in every mode, unfold and
fold, and the padding layers. With torch's state_dict loaded, outputs and every gradient match
in float64 and float32; a compiled training step equals eager; gradgradcheck on a few."""

from __future__ import annotations

import numpy as np
import pytest
from torch_reference import check_function, check_module, module_pair

import autojit
from autojit import nn

torch = pytest.importorskip("torch")
F = nn.functional


def _random(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


TRANSPOSE_CASES = [
    (1, dict()),
    (1, dict(stride=3, padding=1, output_padding=2, dilation=2)),
    (2, dict(stride=2, padding=1, output_padding=1, groups=2)),
    (2, dict(stride=(1, 2), padding=(2, 0), dilation=(2, 1))),
    (3, dict(stride=2, padding=1, groups=2, dilation=(1, 2, 1))),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("spatial", "options"), TRANSPOSE_CASES)
def test_conv_transpose_matches_torch(spatial, options, dtype):
    groups = options.get("groups", 1)
    x = _random((2, 4) + (4,) * spatial, dtype)
    weight = _random((4, 3) + (3,) * spatial, dtype, 1)
    bias = _random((3 * groups,), dtype, 2)
    check_function(f"conv_transpose{spatial}d", (x, weight, bias), options, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", [dict(), dict(stride=(1, 2, 2), padding=1, groups=2),
                                     dict(padding="same", dilation=(2, 2, 1))])
def test_conv3d_matches_torch(options, dtype):
    check_function("conv3d", (_random((2, 4, 5, 4, 6), dtype), _random((6, 4 // options.get(
        "groups", 1), 3, 2, 3), dtype, 1), _random((6,), dtype, 2)), options, dtype)


CONV_MODULE_CASES = [
    ("Conv1d", (3, 4, 3), dict(padding="same", padding_mode="reflect"), (2, 3, 7)),
    ("Conv2d", (2, 4, 3), dict(padding=(1, 2), padding_mode="circular", stride=2), (2, 2, 5, 6)),
    ("Conv2d", (2, 2, (2, 3)), dict(padding="same", padding_mode="replicate", dilation=2),
     (1, 2, 5, 6)),
    ("Conv3d", (2, 4, 3), dict(padding="valid", bias=False), (1, 2, 4, 5, 4)),
    ("Conv3d", (2, 4, 2), dict(padding=1, padding_mode="reflect", groups=2), (1, 2, 3, 4, 3)),
    ("ConvTranspose1d", (3, 4, 3), dict(stride=2, padding=1, output_padding=1), (2, 3, 5)),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, groups=2, bias=False), (1, 4, 3, 4)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=(2, 1, 2), dilation=2), (1, 2, 3, 2, 3)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("kind", "args", "kwargs", "shape"), CONV_MODULE_CASES)
def test_conv_modules_match_torch(kind, args, kwargs, shape, dtype):
    mine, theirs = module_pair(kind, dtype, *args, **kwargs)
    check_module(mine, theirs, (_random(shape, dtype),), dtype)


def test_conv_transpose_output_size_picks_the_output_padding():
    mine, theirs = module_pair("ConvTranspose2d", "float64", 2, 3, 3, stride=3, padding=1)
    x = _random((1, 2, 4, 3))
    check_module(mine, theirs, (x,), "float64", output_size=[11, 9])
    check_module(mine, theirs, (x,), "float64", output_size=(1, 3, 12, 8))
    with pytest.raises(ValueError, match="requested an output size of"):
        mine(autojit.tensor(x), output_size=[14, 9])


def test_conv_layers_reset_parameters_like_torch():
    layer = nn.ConvTranspose3d(4, 6, 3, groups=2)
    assert tuple(layer.weight.shape) == (4, 3, 3, 3, 3)
    bound = 1 / np.sqrt(3 * 27)  # fan_in of the transposed weight is dim 1 times the kernel
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    assert np.abs(layer.bias.detach().numpy()).max() <= bound
    assert repr(layer) == repr(torch.nn.ConvTranspose3d(4, 6, 3, groups=2))


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: nn.Conv3d(3, 8, 3, stride=2, padding="same"), ValueError, "strided"),
    (lambda: nn.ConvTranspose2d(3, 8, 3, padding_mode="reflect"), ValueError, "zeros"),
    (lambda: F.conv_transpose2d(autojit.zeros(1, 3, 4, 4), autojit.zeros(2, 2, 3, 3)),
     RuntimeError, "weight of size"),
    (lambda: F.conv_transpose1d(autojit.zeros(1, 2, 4), autojit.zeros(2, 2, 3), stride=2,
                                output_padding=2), RuntimeError, "output padding must be"),
    (lambda: F.pad(autojit.zeros(1, 2, 3), (3, 0), mode="reflect"), RuntimeError,
     "Padding size should be less than"),
    (lambda: F.pad(autojit.zeros(2, 3), (1, 1, 1, 1, 1, 1), mode="replicate"),
     NotImplementedError, "Padding size 6"),
])
def test_conv_and_pad_errors_match_torch(make, error, message):
    with pytest.raises(error, match=message):
        make()


PAD_CASES = [
    ("constant", (1, 2, 0, -1), (2, 3, 4), dict(value=1.5)),
    ("constant", (1, 1, 2, 0, 1, 1, 1, 0), (2, 2, 3, 2), dict()),
    ("reflect", (2, 1), (2, 3, 4), dict()),
    ("reflect", (1, 2, 2, 1), (3, 4, 5), dict()),
    ("reflect", (1, 0, 1, 1, 2, 1), (1, 2, 3, 4, 3), dict()),
    ("replicate", (3, -1, 0, 2), (1, 2, 3, 4), dict()),
    ("replicate", (1, 2, 2, 0, 1, 1), (2, 3, 2, 3), dict()),
    ("circular", (2, 1), (2, 3, 4), dict()),
    ("circular", (1, 2, -1, 2, 1, 0), (1, 1, 3, 4, 3), dict()),
]


@pytest.mark.parametrize(("mode", "amounts", "shape", "options"), PAD_CASES)
def test_pad_matches_torch(mode, amounts, shape, options):
    check_function("pad", (_random(shape), amounts), dict(mode=mode, **options))


PADDING_LAYERS = [
    ("ZeroPad1d", (2,), (2, 3, 4)), ("ZeroPad2d", ((1, 0, 2, -1),), (1, 2, 3, 4)),
    ("ZeroPad3d", (1,), (1, 2, 2, 3)), ("ConstantPad1d", ((1, 2), 0.5), (3, 4)),
    ("ConstantPad2d", (1, -2.0), (1, 2, 3, 4)), ("ConstantPad3d", ((1, 0, 1, 0, 0, 2), 3.0),
                                                 (1, 1, 2, 3, 2)),
    ("ReflectionPad1d", ((2, 1),), (2, 3, 4)), ("ReflectionPad2d", (2,), (1, 2, 3, 4)),
    ("ReflectionPad3d", (1,), (1, 2, 3, 2, 3)), ("ReplicationPad1d", (3,), (3, 4)),
    ("ReplicationPad2d", ((1, 0, 2, 3),), (1, 2, 3, 4)), ("ReplicationPad3d", (2,), (2, 2, 3, 2)),
    ("CircularPad1d", (2,), (2, 3, 4)), ("CircularPad2d", ((1, 2, 0, 1),), (1, 2, 3, 4)),
    ("CircularPad3d", (1,), (1, 1, 2, 3, 2)),
]


@pytest.mark.parametrize(("kind", "args", "shape"), PADDING_LAYERS)
def test_padding_layers_match_torch(kind, args, shape):
    mine, theirs = module_pair(kind, "float64", *args)
    check_module(mine, theirs, (_random(shape),))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("shape", "options"), [
    ((2, 3, 5, 6), dict(kernel_size=2)),
    ((1, 2, 6, 5), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(2, 1))),
    ((2, 5, 4), dict(kernel_size=3, padding=(1, 0))),
])
def test_unfold_and_fold_match_torch(shape, options, dtype):
    columns, _ = check_function("unfold", (_random(shape, dtype),), options, dtype)
    folded = _random(tuple(columns.shape), dtype, 3)
    check_function("fold", (folded,), dict(output_size=shape[-2:], **options), dtype)
    mine, theirs = module_pair("Fold", dtype, output_size=shape[-2:], **options)
    check_module(mine, theirs, (folded,), dtype)
    mine, theirs = module_pair("Unfold", dtype, **options)
    check_module(mine, theirs, (_random(shape, dtype),), dtype)


@pytest.mark.parametrize(("name", "shapes", "options"), [
    ("conv3d", ((1, 2, 3, 3, 3), (2, 1, 2, 2, 2), (2,)), dict(groups=2, padding=1)),
    ("conv_transpose2d", ((1, 2, 3, 3), (2, 2, 2, 2), (2,)), dict(stride=2, output_padding=1)),
    ("fold", ((1, 4, 4),), dict(output_size=(3, 3), kernel_size=2)),
])
def test_second_derivatives(name, shapes, options):
    inputs = [autojit.tensor(_random(shape, seed=i), requires_grad=True)
              for i, shape in enumerate(shapes)]
    function = getattr(F, name)
    assert autojit.autograd.gradgradcheck(lambda *a: function(*a, **options), inputs)


def test_pad_second_derivatives():
    x = autojit.tensor(_random((1, 2, 3, 4)), requires_grad=True)
    for mode in ("reflect", "replicate", "circular"):
        assert autojit.autograd.gradgradcheck(lambda a, m=mode: F.pad(a, (2, 1, 1, 2), mode=m),
                                              [x])


def _train(make_model, shape, compiled: bool, steps: int = 3):
    autojit.manual_seed(0)
    model = make_model()
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    x = autojit.tensor(rng.standard_normal(shape), dtype=autojit.float32)

    def step(x):
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    losses = [function(x).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


TRAINING_MODELS = {
    "conv3d_reflect": (lambda: nn.Conv3d(2, 3, 2, padding=1, padding_mode="reflect"),
                       (2, 2, 3, 4, 3)),
    "conv_transpose2d": (lambda: nn.Sequential(nn.ConvTranspose2d(2, 3, 3, stride=2, groups=1),
                                               nn.CircularPad2d(1)), (2, 2, 3, 3)),
    "conv1d_same_fold": (lambda: nn.Sequential(nn.Conv1d(2, 4, 3, padding="same",
                                                         padding_mode="replicate"),
                                               nn.Fold((3, 3), 2)), (1, 2, 4)),
}


@pytest.mark.parametrize("name", list(TRAINING_MODELS))
def test_a_compiled_training_step_equals_eager(name):
    make_model, shape = TRAINING_MODELS[name]
    compiled_losses, compiled_weights = _train(make_model, shape, True)
    eager_losses, eager_weights = _train(make_model, shape, False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
