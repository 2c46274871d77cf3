"""The gradient of a piecewise-linear activation or of max pooling depends on its input, as
torch's does.

torch computes relu's, hardtanh's (relu6's), leaky_relu's (rrelu's in evaluation),
softshrink's, hardshrink's, threshold's and max pooling's gradients with a backward kernel on
the saved input (or result) whose derivative in it is zeros. A gradient taken with
create_graph therefore requires grad, and its derivative in the input alone is zeros. A
`where` on a comparison has no such dependence: autograd.grad raised "not used in the graph"
where torch returned zeros (ops/nn/rectifiers.py, threshold_backward in
ops/elementwise/math_primitives.py, the max pooling scatter in ops/nn/pooling.py). Checked
here against torch: node names, requires_grad, values of the first and second derivatives,
eagerly and compiled, with channels-last inputs too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

ACTIVATIONS = {
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "relu_inplace": lambda lib, x: lib.nn.functional.relu(x * 1, inplace=True),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 0.7),
    "hardtanh_inplace": lambda lib, x: lib.nn.functional.hardtanh_(x * 1, -0.5, 0.7),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "rrelu_eval": lambda lib, x: lib.nn.functional.rrelu(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x, 0.3),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x, 0.3),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.1, 2.0),
    "max_pool1d": lambda lib, x: lib.nn.functional.max_pool1d(x.flatten(2), 3),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "max_pool3d": lambda lib, x: lib.nn.functional.max_pool3d(x[None], (2, 1, 2),
                                                              padding=(1, 0, 1)),
}


def _derivatives(lib, name, values, dtype, channels_last):
    x = lib.tensor(values, dtype=dtype)
    if channels_last:
        x = x.to(memory_format=lib.channels_last)
    x.requires_grad_()
    y = ACTIVATIONS[name](lib, x)
    (first,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    (second,) = lib.autograd.grad((first * first).sum(), x, create_graph=True)
    # The gradient of y alone: no product rule, so its derivative in x is torch's zeros.
    (plain,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (zeros,) = lib.autograd.grad(plain.sum(), x)
    return {"y": y, "first": first, "second": second, "plain": plain, "zeros": zeros}


@pytest.mark.parametrize("channels_last", [False, True], ids=["contiguous", "channels_last"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_second_derivative_in_the_input_alone_is_torchs(name, dtype, channels_last):
    values = np.random.default_rng(3).standard_normal((2, 3, 4, 5))
    ours = _derivatives(autojit, name, values, getattr(autojit, dtype), channels_last)
    theirs = _derivatives(torch, name, values, getattr(torch, dtype), channels_last)
    for key, expected in theirs.items():
        got = ours[key]
        assert got.requires_grad == expected.requires_grad, key
        # Through an in-place op autojit's gradients are row-major where torch's keep a
        # channels-last input's layout, rrelu's results keep it where torch's are row-major,
        # and pooling's are row-major (docs/differences.md, "Memory formats").
        known = name == "rrelu_eval" or name.startswith("max_pool") or (
            name.endswith("_inplace") and key != "y")
        if not (channels_last and known):
            assert tuple(got.stride()) == tuple(expected.stride()), key
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-6, err_msg=key)
    # rrelu's node is leaky_relu's (torch's RreluWithNoiseBackward0 and its backward's); the
    # poolings' inputs are reshaped, whose gradient's last node is the reshape's.
    if name != "rrelu_eval" and not name.startswith("max_pool"):
        assert ours["plain"].grad_fn.name() == theirs["plain"].grad_fn.name()
    assert not np.any(ours["zeros"].numpy())


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "softshrink", "hardshrink",
                                  "threshold", "max_pool2d"])
def test_compiled_second_derivative_equals_eager(name):
    """A compiled function taking both derivatives runs compiled (no fallback warning) and
    gives eager's values, the zeros of the input alone included."""
    values = np.random.default_rng(4).standard_normal((2, 3, 4, 5))
    weight = autojit.tensor(np.random.default_rng(5).standard_normal(5),
                            dtype=autojit.float32, requires_grad=True)

    def derivatives(x):
        y = ACTIVATIONS[name](autojit, x * weight + 0.1)
        (first,) = autojit.autograd.grad((y * y).sum(), x, create_graph=True)
        (plain,) = autojit.autograd.grad(y.sum(), x, create_graph=True)
        return first, autojit.autograd.grad((first * first).sum() + plain.sum(), (x, weight))

    x = autojit.tensor(values, dtype=autojit.float32, requires_grad=True)
    eager_first, eager_second = derivatives(x)
    compiled = autojit.compile(derivatives)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        for _ in range(2):
            first, second = compiled(x)
    np.testing.assert_allclose(first.detach().numpy(), eager_first.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    for got, expected in zip(second, eager_second, strict=True):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
