"""Convolutions of few output positions and large weights as one gemm
(codegen/cpu/convolution/gemm.py: the windows gathered into columns, gemm/kernel.py's product,
the result swapped or scattered into place) against torch in float64: the forward product and
the input gradient over 1-3 spatial dims, strides, uneven padding, dilation and even kernels,
in float32 and float64; second derivatives; the same bits on one thread and two; compiled
plans that repeat the same calls in their native program; and which products take it.

The gemm runs where gemm/kernel.py makes its product (AVX-512 hosts); elsewhere these tests
skip and the other routines compute every product (tests/test_conv_native_torch.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from conv_products import assert_near_torchs, products_and_torchs, second_derivatives

import autojit
from autojit.codegen.cpu import convolution as native
from autojit.codegen.cpu.convolution import channels, gemm

torch = pytest.importorskip("torch")
F = autojit.nn.functional

# (spatial, batch, in channels, out channels, stride, padding, dilation, kernel, size): both
# products have at least 16 rows and 24 columns, as gemm/kernel.py's product needs (the
# fixture records the geometries by_gemm gives, so a case the gemm does not take fails).
CASES = [
    (2, 8, 24, 32, 1, 1, 1, 3, 2),
    (2, 8, 16, 40, 2, 1, 1, 3, 4),
    (2, 3, 28, 24, 1, 0, 1, 1, 3),
    (2, 2, 8, 17, 2, ((0, 1), (2, 0)), 1, 2, 7),
    (2, 2, 6, 18, 1, 2, 2, 3, 5),
    (1, 8, 12, 20, 3, 1, 1, 4, 13),
    (3, 3, 4, 16, 1, 1, 1, 3, 3),
    (2, 1, 32, 16, 2, 1, 1, 3, 9),
]


def _runs_here() -> bool:
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    return gemm.by_gemm("forward", (8, 512, 2, 2), (512, 512, 3, 3), attrs, "<f4") is not None


pytestmark = pytest.mark.skipif(not _runs_here(), reason="no native gemm on this host")


@pytest.fixture
def made(monkeypatch):
    """Every product by the gemm where it can run (gemm.MODE), and the kinds of product it
    computed."""
    found = []
    choose = gemm.by_gemm

    def spy(*arguments):
        result = choose(*arguments)
        if result is not None:
            found.append(result.kind)
        return result

    monkeypatch.setattr(gemm, "MODE", "gemm")
    monkeypatch.setattr(gemm, "by_gemm", spy)
    native.geometry.cache_clear()
    yield found
    native.geometry.cache_clear()


def _operands(case, dtype, seed=0):
    spatial, batch, cin, cout, stride, pad, dil, k, size = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, cin) + (size,) * spatial).astype(dtype)
    w = rng.standard_normal((cout, cin) + (k,) * spatial).astype(dtype)
    if isinstance(pad, tuple):  # uneven: torch's F.pad, then no padding
        return x, w, {"stride": stride, "dilation": dil}, pad
    return x, w, {"stride": stride, "padding": pad, "dilation": dil}, None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: "-".join(map(str, case)))
def test_products_match_torch(case, dtype, made):
    x, w, options, uneven = _operands(case, dtype)
    name = f"conv{case[0]}d"
    if uneven is not None:  # the padding is an op of its own: the geometry sees none
        x = np.pad(x, ((0, 0), (0, 0), *uneven))
    mine, theirs = products_and_torchs(torch, name, x, w, options, dtype)
    assert sorted(set(made)) == ["forward", "input"]
    assert_near_torchs(mine, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[5]],
                         ids=lambda case: "-".join(map(str, case)))
def test_second_derivatives_match_torch(case, dtype, made):
    x, w, options, _ = _operands(case, dtype, seed=2)
    name = f"conv{case[0]}d"
    mine = second_derivatives(autojit, getattr(F, name),
                              lambda v: autojit.tensor(v, requires_grad=True), x, w, options)
    theirs = second_derivatives(
        torch, getattr(torch.nn.functional, name),
        lambda v: torch.tensor(v.astype(np.float64), requires_grad=True), x, w, options)
    assert set(made) == {"forward", "input"}
    tolerance = 1e-13 if dtype == "float64" else 2e-6
    for ours, reference in zip(mine, theirs, strict=True):
        assert np.abs(ours - reference).max() / np.abs(reference).max() < tolerance


def test_geometries_taken_by_the_channel_routines_without_the_gemm():
    """With the gemm forced off (or another routine forced, channels.MODE), the same products
    go to the channel routines; the gemm's results are within float32 rounding of theirs."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64, 2, 2)).astype("float32")
    w = rng.standard_normal((512, 64, 3, 3)).astype("float32")
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    key = native.attrs_key(attrs)
    results = {}
    try:
        for mode in ("gemm", "off"):
            gemm.MODE = mode
            native.geometry.cache_clear()
            found = native.geometry("forward", x.shape, w.shape, key, "<f4")
            assert isinstance(found, gemm.GemmGeometry) == (mode == "gemm")
            results[mode] = native.eager("forward", x, w, attrs)
        gemm.MODE = "gemm"
        channels.MODE = "channels"
        native.geometry.cache_clear()
        assert isinstance(native.geometry("forward", x.shape, w.shape, key, "<f4"),
                          channels.ChannelGeometry)
    finally:
        gemm.MODE = channels.MODE = None
        native.geometry.cache_clear()
    np.testing.assert_allclose(results["gemm"], results["off"], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", ["forward", "input"])
def test_the_result_does_not_depend_on_the_thread_count(kind, made):
    """Split over one part or two (the gather by rows of columns, the gemm by rows or
    columns, the swap and the scatter by their outer rows), the same bits."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 96, 3, 3)).astype("float32")
    w = rng.standard_normal((80, 96, 3, 3)).astype("float32")
    g = rng.standard_normal((6, 80, 3, 3)).astype("float32")
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    operands = (x, w, attrs) if kind == "forward" else (g, w, {**attrs, "input_size": (3, 3)})
    before = autojit.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            autojit.set_num_threads(threads)
            results.append(native.eager(kind, *operands))
    finally:
        autojit.set_num_threads(before)
    assert made == [kind]
    np.testing.assert_array_equal(results[0], results[1])


def test_a_compiled_function_repeats_the_eager_calls_in_its_program(monkeypatch):
    """Two convolutions of 2x2 images and their gradients (the forward products and input
    gradients by the gemm, the weight gradients by the channel routines): the compiled plan
    runs them inside its native program, to the bit of the eager calls."""
    monkeypatch.setattr(gemm, "MODE", "gemm")
    native.geometry.cache_clear()
    rng = np.random.default_rng(9)
    w1 = autojit.tensor(rng.standard_normal((64, 48, 3, 3)).astype("float32"),
                        requires_grad=True)
    w2 = autojit.tensor(rng.standard_normal((32, 64, 3, 3)).astype("float32"),
                        requires_grad=True)
    x = autojit.tensor(rng.standard_normal((8, 48, 2, 2)).astype("float32"),
                       requires_grad=True)
    g = autojit.tensor(rng.standard_normal((8, 32, 2, 2)).astype("float32"))

    def both(x):
        hidden = F.conv2d(x, w1, padding=1).relu()
        y = F.conv2d(hidden, w2, padding=1)
        return (y, *autojit.autograd.grad(y, (x, w1, w2), g))

    compiled = autojit.compile(both)
    eager = both(x)
    for _ in range(3):
        for mine, theirs in zip(compiled(x), eager, strict=True):
            np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    plan = compiled.executables[0].plan
    assert plan.program, plan.program_refusal
    kinds = sorted(step.geometry.kind for step in plan.steps
                   if type(getattr(step, "geometry", None)) is gemm.GemmGeometry)
    assert kinds == ["forward", "forward", "input", "input"]
    native.geometry.cache_clear()


def test_the_choice_takes_large_weights_on_few_positions():
    """By default the gemm computes the forward product and input gradient of a large weight
    on few output positions (a ResNet-18's 512 -> 512 channels on 2x2 images), not the weight
    gradient, a small weight's (96 -> 40 channels 1x1 on 4x4) or many positions' (64 -> 64
    channels on 16x16)."""
    native.geometry.cache_clear()
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    one = {"stride": (1, 1), "padding": ((0, 0), (0, 0)), "dilation": (1, 1), "groups": 1}
    cases = [("forward", (8, 512, 2, 2), (512, 512, 3, 3), attrs, True),
             ("input", (8, 512, 2, 2), (512, 512, 3, 3), {**attrs, "input_size": (2, 2)},
              True),
             ("weight", (8, 512, 2, 2), (8, 512, 2, 2), {**attrs, "kernel_size": (3, 3)},
              False),
             ("forward", (8, 96, 4, 4), (40, 96, 1, 1), one, False),
             ("forward", (8, 64, 16, 16), (64, 64, 3, 3), attrs, False)]
    try:
        for kind, first, second, options, expected in cases:
            found = native.geometry(kind, first, second, native.attrs_key(options), "<f4")
            assert isinstance(found, gemm.GemmGeometry) == expected, (kind, first, second)
    finally:
        native.geometry.cache_clear()


@pytest.mark.parametrize("kind", ["forward", "input"])
def test_uneven_padding_strides_and_dilation_reach_the_windows(kind, made):
    """The gathered windows and the scatter's table follow each side's padding, the strides
    and the dilation of the geometry itself (the tests above pad with F.pad)."""
    rng = np.random.default_rng(13)
    attrs = {"stride": (2, 1), "padding": ((0, 2), (3, 1)), "dilation": (1, 2), "groups": 1}
    x = rng.standard_normal((3, 12, 7, 6)).astype("float64")
    w = rng.standard_normal((20, 12, 3, 3)).astype("float64")
    xt, wt = torch.tensor(x), torch.tensor(w)
    padded = torch.nn.functional.pad(xt, (3, 1, 0, 2))
    yt = torch.nn.functional.conv2d(padded, wt, stride=(2, 1), dilation=(1, 2))
    if kind == "forward":
        mine, theirs = native.eager("forward", x, w, attrs), yt
    else:
        g = rng.standard_normal(tuple(yt.shape))
        xt.requires_grad_(True)
        out = torch.nn.functional.conv2d(torch.nn.functional.pad(xt, (3, 1, 0, 2)), wt,
                                         stride=(2, 1), dilation=(1, 2))
        (theirs,) = torch.autograd.grad(out, xt, torch.tensor(g))
        mine = native.eager("input", g, w, {**attrs, "input_size": (7, 6)})
    assert made == [kind]
    np.testing.assert_allclose(mine, theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
