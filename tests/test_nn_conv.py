"""Convolution and pooling layers (nn/convolution.py, nn/pooling/__init__.py,
nn/functional/conv.py).

The op table (tests/opinfo/nn_layers.py) checks the functional forms against NumPy with
gradcheck and gradgradcheck; here: the modules (defaults, reprs, errors), a small CNN that
learns, and conv2d forward and backward under autojit.compile against eager.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autojit
import autojit.nn.functional as F
from autojit import CompileWarning, nn


def random(shape, seed=0, dtype=np.float32):
    return autojit.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# ---- modules ------------------------------------------------------------------------------------


@pytest.mark.parametrize("module, expected", [
    (lambda: nn.Conv2d(3, 8, 3), "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))"),
    (lambda: nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False),
     "Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "bias=False)"),
    (lambda: nn.Conv2d(4, 8, 3, padding="same", groups=2),
     "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=2)"),
    (lambda: nn.Conv1d(3, 8, 5, stride=2, padding="valid"),
     "Conv1d(3, 8, kernel_size=(5,), stride=(2,), padding=valid)"),
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, "
     "ceil_mode=False)"),
    (lambda: nn.MaxPool2d((3, 2), stride=1, padding=1, ceil_mode=True),
     "MaxPool2d(kernel_size=(3, 2), stride=1, padding=1, dilation=1, ceil_mode=True)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AvgPool2d(3, 2, 1, count_include_pad=False),
     "AvgPool2d(kernel_size=3, stride=2, padding=1)"),
    (lambda: nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
])
def test_repr(module, expected):
    assert repr(module()) == expected


def test_conv_parameters_and_default_initialization():
    autojit.manual_seed(0)
    layer = nn.Conv2d(4, 6, (3, 2), groups=2)
    assert tuple(layer.weight.shape) == (6, 2, 3, 2)
    assert tuple(layer.bias.shape) == (6,)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    # kaiming_uniform_(a=sqrt(5)) and the bias both draw from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    bound = 1 / math.sqrt(2 * 3 * 2)
    for parameter in (layer.weight, layer.bias):
        values = np.asarray(parameter.detach())
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.5 * bound
    assert nn.Conv1d(2, 3, 4, bias=False).bias is None
    assert [name for name, _ in nn.Conv1d(2, 3, 4, bias=False).named_parameters()] == ["weight"]


def test_conv_module_matches_functional():
    layer = nn.Conv2d(3, 5, 3, stride=2, padding=1)
    x = random((2, 3, 7, 7))
    expected = F.conv2d(x, layer.weight, layer.bias, stride=2, padding=1)
    np.testing.assert_array_equal(np.asarray(layer(x).detach()), np.asarray(expected.detach()))
    assert tuple(layer(x).shape) == (2, 5, 4, 4)
    assert tuple(nn.Conv2d(3, 5, 3, padding="same", dilation=2)(x).shape) == (2, 5, 7, 7)
    assert tuple(nn.Conv1d(3, 5, 4, padding="same")(random((2, 3, 9))).shape) == (2, 5, 9)
    assert tuple(layer(random((3, 7, 7))).shape) == (5, 4, 4)  # unbatched


@pytest.mark.parametrize("make, error, message", [
    (lambda: nn.Conv2d(3, 8, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 6, 3, groups=4), ValueError, "out_channels must be divisible by groups"),
    (lambda: nn.Conv2d(3, 8, 3, groups=0), ValueError, "groups must be a positive integer"),
    (lambda: nn.Conv2d(3, 8, 3, padding="full"), ValueError, "Invalid padding string 'full'"),
    (lambda: nn.Conv2d(3, 8, 3, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv2d(3, 8, 3, padding_mode="mirror"), ValueError, "padding_mode must be one"),
])
def test_conv_module_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize("call, message", [
    (lambda: F.conv2d(random((2, 3)), random((4, 3, 3, 3))),
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: "
     r"\[2, 3\]"),
    (lambda: F.conv2d(random((2, 5, 5, 5)), random((4, 3, 3, 3))),
     r"Given groups=1, weight of size \[4, 3, 3, 3\], expected input\[2, 5, 5, 5\] to have 3 "
     "channels, but got 5 channels instead"),
    (lambda: F.conv2d(random((2, 3, 2, 2)), random((4, 3, 3, 3))),
     r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\)"),
    (lambda: F.conv2d(random((2, 3, 5, 5)), random((4, 3, 3, 3)), random((3,))),
     "expected bias to be 1-dimensional with 4 elements"),
    (lambda: F.conv2d(random((2, 3, 5, 5), dtype=np.float64), random((4, 3, 3, 3))),
     "expected scalar type Double but found Float"),
    (lambda: F.conv1d(random((2, 3, 5)), random((4, 3, 3)), stride=(1, 1)),
     "expected stride to be a single integer value or a list of 1 values"),
    (lambda: F.conv2d(random((2, 3, 5, 5)), random((4, 3, 3, 3)), stride=0),
     "non-positive stride is not supported"),
    (lambda: F.max_pool2d(random((2, 3, 5, 5)), 3, padding=2),
     "pad should be at most half of effective kernel size"),
    (lambda: F.max_pool2d(random((2, 3, 5, 5)), 7),
     r"Given input size: \(3x5x5\). Calculated output size: \(3x0x0\). Output size is too small"),
    (lambda: F.avg_pool2d(random((5,)), 2), "non-empty 3D or 4D"),
    (lambda: F.max_pool2d(random((2, 3, 5, 5)), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda: F.pad(random((2, 3)), (1, 2, 3)), "Padding length must be divisible by 2"),
    (lambda: F.pad(random((2, 3)), (1, 1, 1, 1, 1, 1)),
     "Padding length should be less than or equal to two times the input dimension"),
])
def test_functional_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_max_pool_gradient_goes_to_the_maximum():
    data = np.array([[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 9.0, 1.0], [0.0, 0.0, 1.0, 2.0],
                     [7.0, 1.0, 3.0, 8.0]])
    x = autojit.tensor(data[None, None], requires_grad=True)
    y = nn.MaxPool2d(2)(x)
    assert y.tolist() == [[[[5.0, 9.0], [7.0, 8.0]]]]
    y.sum().backward()
    expected = np.zeros((4, 4))
    expected[0, 1] = expected[1, 2] = expected[3, 0] = expected[3, 3] = 1.0
    np.testing.assert_array_equal(np.asarray(x.grad)[0, 0], expected)


def test_max_pool_of_integers_pads_with_the_smallest_integer():
    x = autojit.tensor(-np.arange(16, dtype=np.int64).reshape(1, 1, 4, 4) - 100)
    result = F.max_pool2d(x, 3, stride=2, padding=1)
    assert result.dtype is autojit.int64
    assert result.tolist() == [[[[-100, -101], [-104, -105]]]]


def test_adaptive_avg_pool_global_average():
    x = random((2, 3, 5, 7))
    pooled = nn.AdaptiveAvgPool2d(1)(x)
    np.testing.assert_allclose(np.asarray(pooled)[..., 0, 0], np.asarray(x).mean(axis=(2, 3)),
                               rtol=1e-5)


# ---- training and compile -----------------------------------------------------------------------


def small_cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.AvgPool2d(1), nn.Flatten(),
                         nn.Linear(6 * 2 * 2, 3))


def test_small_cnn_learns():
    autojit.manual_seed(0)
    model = small_cnn()
    images = random((16, 1, 8, 8), seed=1)
    labels = autojit.tensor(np.random.default_rng(2).integers(0, 3, 16))
    loss_function = nn.CrossEntropyLoss()
    losses = []
    for _ in range(30):
        loss = loss_function(model(images), labels)
        model.zero_grad()
        loss.backward()
        with autojit.no_grad():
            for parameter in model.parameters():
                parameter.sub_(parameter.grad * 0.2)
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0], losses


def test_conv2d_forward_and_backward_compiled_equal_eager():
    x = random((2, 3, 6, 6), seed=3)
    weight = random((4, 3, 3, 3), seed=4).requires_grad_(True)
    bias = random((4,), seed=5).requires_grad_(True)

    def step(x):
        y = F.conv2d(x, weight, bias, stride=1, padding=1)
        pooled = F.max_pool2d(F.relu(y), 2)
        loss = (pooled * pooled).sum()
        weight_grad, bias_grad = autojit.autograd.grad(loss, [weight, bias])
        return loss, weight_grad, bias_grad

    compiled = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        results = compiled(x)
    assert compiled.eager_reason is None
    for got, expected in zip(results, step(x), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected.detach()), rtol=1e-4,
                                   atol=1e-4)
