"""Depthwise convolutions (codegen/cpu/convolution/depthwise.py): the three products against
torch in float64 over 1-3 spatial dims, strides, padding (uneven too), dilation, kernels wider
than the image and channel counts that are not whole vectors; the same bits on one thread or
two, eagerly and compiled; second derivatives; and the weight gradient of many positions (its
float32 sums flushed into float64) close to exact."""

from __future__ import annotations

import numpy as np
import pytest
from conv_products import assert_near_torchs, products_and_torchs, second_derivatives

import autojit
from autojit.codegen.cpu import convolution as native
from autojit.codegen.cpu.convolution import depthwise

torch = pytest.importorskip("torch")
GEOMETRY = depthwise.DepthwiseGeometry  # the class (the fixture below spies on its making)

# (spatial, batch, channels, size, kernel, stride, padding, dilation)
CASES = [
    (2, 3, 5, 9, 3, 1, 1, 1),
    (2, 2, 13, 8, 3, 2, 1, 1),
    (2, 2, 40, 7, 7, 1, 3, 1),
    (2, 1, 18, 6, 5, 2, 2, 1),
    (2, 2, 9, 11, 4, 3, 2, 1),
    (2, 2, 8, 9, 3, 1, 2, 2),
    (2, 4, 24, 2, 5, 1, 2, 1),
    (2, 1, 3, 5, 3, 1, 0, 1),
    (1, 3, 11, 12, 5, 2, 1, 1),
    (1, 2, 17, 10, 3, 1, 4, 3),
    (3, 2, 6, 5, 3, 1, 1, 1),
    (3, 1, 10, 6, 2, 2, 0, 1),
]


def _operands(case, dtype, seed=0):
    spatial, batch, channels, size, kernel, stride, padding, dilation = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels) + (size,) * spatial).astype(dtype)
    w = rng.standard_normal((channels, 1) + (kernel,) * spatial).astype(dtype)
    options = dict(stride=stride, padding=padding, dilation=dilation, groups=channels)
    return f"conv{spatial}d", x, w, options


@pytest.fixture
def made(monkeypatch):
    """The kinds of the depthwise geometries made while the test runs."""
    kinds = []
    make = depthwise.DepthwiseGeometry

    def spy(kind, *arguments):
        kinds.append(kind)
        return make(kind, *arguments)

    monkeypatch.setattr(depthwise, "DepthwiseGeometry", spy)
    native.geometry.cache_clear()
    yield kinds
    native.geometry.cache_clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: "-".join(map(str, case)))
def test_products_match_torch(case, dtype, made):
    name, x, w, options = _operands(case, dtype)
    mine, theirs = products_and_torchs(torch, name, x, w, options, dtype)
    assert sorted(made) == ["forward", "input", "weight"]
    assert_near_torchs(mine, theirs, dtype)


def test_uneven_padding_matches_torch(made):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((3, 12, 9, 11)), rng.standard_normal((12, 1, 3, 4))
    padding = ((1, 2), (3, 0))
    attrs = {"stride": (1, 2), "padding": padding, "dilation": (2, 1), "groups": 12}
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yt = torch.nn.functional.conv2d(torch.nn.functional.pad(xt, (3, 0, 1, 2)), wt,
                                    stride=(1, 2), dilation=(2, 1), groups=12)
    g = rng.standard_normal(tuple(yt.shape))
    dx, dw = torch.autograd.grad(yt, (xt, wt), torch.tensor(g))
    mine = (native.eager("forward", x, w, attrs),
            native.eager("input", g, w, {**attrs, "input_size": x.shape[2:]}),
            native.eager("weight", x, g, {**attrs, "kernel_size": w.shape[2:]}))
    assert sorted(made) == ["forward", "input", "weight"]
    for ours, reference in zip(mine, (yt, dx, dw), strict=True):
        np.testing.assert_allclose(ours, reference.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", [CASES[2], CASES[4], CASES[6]],
                         ids=lambda case: "-".join(map(str, case)))
def test_the_bits_do_not_depend_on_the_thread_count(case, made):
    _, x, w, options = _operands(case, "float32")
    spatial = x.ndim - 2
    attrs = {"stride": (options["stride"],) * spatial,
             "padding": ((options["padding"],) * 2,) * spatial,
             "dilation": (options["dilation"],) * spatial, "groups": options["groups"]}
    y = native.eager("forward", x, w, attrs)
    g = np.random.default_rng(2).standard_normal(y.shape).astype("float32")
    before, results = autojit.get_num_threads(), []
    try:
        for threads in (1, 2):
            autojit.set_num_threads(threads)
            results.append((native.eager("forward", x, w, attrs),
                            native.eager("input", g, w, {**attrs, "input_size": x.shape[2:]}),
                            native.eager("weight", x, g, {**attrs, "kernel_size": w.shape[2:]})))
    finally:
        autojit.set_num_threads(before)
    for one, two in zip(*results, strict=True):
        np.testing.assert_array_equal(one, two)
    # (the parts are one per core whatever the threads), and whichever part takes a block of
    # channels: here one part per block of `lanes`
    lanes = native.lanes(x.dtype, native.wide())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GEOMETRY, "_cores", staticmethod(lambda: 64))
        native.geometry.cache_clear()
        many = native.eager("weight", x, g, {**attrs, "kernel_size": w.shape[2:]})
        found = native.geometry("weight", x.shape, g.shape, native.attrs_key(
            {**attrs, "kernel_size": w.shape[2:]}), x.dtype.str)
        assert found.parts == -(-x.shape[1] // lanes)
    np.testing.assert_array_equal(many, results[0][2])


def test_compiled_equals_eager(made):
    _, x, w, options = _operands(CASES[1], "float32")

    def step(xs, ws):
        y = autojit.nn.functional.conv2d(xs, ws, **options)
        (y * y).sum().backward()
        return y.detach()

    def run(function):
        xs = autojit.tensor(x, requires_grad=True)
        ws = autojit.tensor(w, requires_grad=True)
        y = function(xs, ws)
        return [t.numpy() for t in (y, xs.grad, ws.grad)]

    eager = run(step)
    compiled = run(autojit.compile(step))
    assert set(made) == {"forward", "input", "weight"}
    for one, other in zip(eager, compiled, strict=True):
        np.testing.assert_array_equal(one, other)


def test_second_derivatives_match_torch(made):
    name, x, w, options = _operands(CASES[3], "float64", seed=4)

    mine = second_derivatives(autojit, getattr(autojit.nn.functional, name),
                              lambda v: autojit.tensor(v, requires_grad=True), x, w, options)
    theirs = second_derivatives(torch, getattr(torch.nn.functional, name),
                                lambda v: torch.tensor(v, requires_grad=True), x, w, options)
    for ours, reference in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(ours, reference, rtol=1e-11, atol=1e-11)


def test_a_weight_gradient_of_many_positions_stays_close_to_exact(made):
    """8 images of 40x40 (12,800 positions per weight, FLUSH of them at a time in float32):
    held to float64 exactness as closely as the float32 inputs allow."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((8, 16, 40, 40)) + 3).astype("float32")
    g = np.full((8, 16, 40, 40), 0.1, "float32")
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 16,
             "kernel_size": (3, 3)}
    ours = native.eager("weight", x, g, attrs)
    exact = torch.ops.aten.convolution_backward(
        torch.tensor(g, dtype=torch.float64), torch.tensor(x, dtype=torch.float64),
        torch.zeros(16, 1, 3, 3, dtype=torch.float64), None, [1, 1], [1, 1], [1, 1], False,
        [0, 0], 16, [False, True, False])[1].numpy()
    assert made == ["weight"]
    assert np.abs(ours - exact).max() / np.abs(exact).max() < 2e-7
