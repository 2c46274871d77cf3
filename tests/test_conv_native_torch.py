"""The native convolution routines (codegen/cpu/convolution/__init__.py, and
convolution/channels.py's vectorized over channels) against torch: the forward product and both
backward products over geometries that reach each part of the kernels (1-3 spatial dims, strides
laid out by phase, padding, dilation, groups and depthwise, batches of several weight-gradient
chunks and cores), in float32 and float64, and second derivatives through them, each with both kinds
of routine (`routines`). Each case checks that the native routine, not the NumPy reference, computed
it. The reference is torch in float64; float32 results are held to a few float32 roundings.

`AUTOJIT_CONV_BROAD=1` runs every combination of the geometry axes instead of the list below
(about 10 s of CPU).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conv_products import assert_near_torchs, products_and_torchs, second_derivatives

import autojit
from autojit.codegen.cpu import convolution as native
from autojit.codegen.cpu.convolution import channels, depthwise
from autojit.ops.nn import convolution as convolution_ops

torch = pytest.importorskip("torch")
F = autojit.nn.functional

# (spatial, batch, in channels, out channels, groups, stride, padding, dilation, kernel, size)
CASES = [
    (1, 3, 4, 6, 2, 2, 1, 1, 3, 9),
    (1, 2, 3, 4, 1, 1, 2, 2, 3, 7),
    (2, 1, 3, 4, 1, 1, 0, 1, 1, 7),
    (2, 5, 4, 6, 2, 2, 1, 1, 3, 7),
    (2, 3, 4, 4, 4, 1, 1, 1, 3, 8),
    (2, 2, 6, 6, 3, 3, 1, 1, 3, 7),
    (2, 2, 4, 8, 1, 2, 0, 2, 3, 9),
    (2, 2, 4, 8, 1, 2, 0, 1, 1, 8),
    (2, 13, 16, 32, 1, 2, 1, 1, 3, 16),
    (2, 9, 3, 8, 1, 1, 1, 1, 3, 32),
    (3, 2, 4, 6, 2, 2, 1, 1, 3, 5),
    (3, 3, 2, 4, 1, 1, 2, 2, 3, 5),
    # padding beyond the kernel's reach (the input gradient's laid-out rows start later),
    # strides 3 with even kernels, and 8x8 grids whose last panel is one vector wide
    (2, 2, 3, 5, 1, 1, 3, 1, 3, 6),
    (1, 2, 3, 4, 1, 3, 2, 1, 2, 10),
    (2, 3, 8, 20, 1, 1, 1, 1, 3, 8),
]
if os.environ.get("AUTOJIT_CONV_BROAD"):
    CASES = [(spatial, batch, cin, cout, groups, stride, pad, dil, k, 7 if spatial < 3 else 5)
             for spatial in (1, 2, 3)
             for batch, cin, cout, groups in ((1, 3, 4, 1), (5, 4, 6, 2), (3, 4, 4, 4),
                                              (9, 8, 16, 1))
             for stride, pad, dil in ((1, 0, 1), (2, 1, 1), (1, 2, 2), (3, 1, 1), (2, 0, 2))
             for k in (1, 3)
             if (7 if spatial < 3 else 5) + 2 * pad - dil * (k - 1) > 0]


@pytest.fixture(params=["positions", "channels", "channels in chunks"])
def routines(request, monkeypatch):
    """Which routines compute every product: vectorized over positions, or over channels
    (convolution_channels.MODE; the weight gradient of groups stays with positions), whose
    weight gradient of few terms is one product into the output (channels.DIRECT_TERMS:
    every case's here) or, "in chunks", always chunks of images summed in float64.
    Yields the names of the geometries' classes made."""
    made = []
    choose = channels.by_channels

    def spy(base):
        found = choose(base)
        made.append(type(found).__name__)
        return found

    def spy_depthwise(*arguments):
        made.append("DepthwiseGeometry")
        return make_depthwise(*arguments)

    make_depthwise = depthwise.DepthwiseGeometry
    monkeypatch.setattr(depthwise, "DepthwiseGeometry", spy_depthwise)
    mode = request.param.split()[0]
    monkeypatch.setattr(channels, "MODE", mode)
    if request.param == "channels in chunks":
        monkeypatch.setattr(channels, "DIRECT_TERMS", 0)
    monkeypatch.setattr(channels, "by_channels", spy)
    native.geometry.cache_clear()
    yield made
    native.geometry.cache_clear()


def _check_routines(made: list, mode: str, groups: int = 1, grouped_one: bool = False) -> None:
    if grouped_one:  # depthwise.py's routines, whatever the mode
        assert made and set(made) == {"DepthwiseGeometry"}
    elif mode == "positions" or groups != 1:
        assert "Geometry" in made and (mode == "channels" or "ChannelGeometry" not in made)
    else:
        assert made and set(made) == {"ChannelGeometry"}


@pytest.fixture
def native_calls(monkeypatch):
    """The kinds of product the native routines computed (None where one declined)."""
    calls = []
    run = native.eager

    def spy(kind, first, second, attrs):
        result = run(kind, first, second, attrs)
        calls.append(kind if result is not None else None)
        return result

    monkeypatch.setattr(native, "eager", spy)
    # the slot holds the routine itself after its first call (codegen/__init__.py)
    monkeypatch.setattr(convolution_ops, "NATIVE", spy)
    return calls


def _operands(case, dtype, seed=0):
    spatial, batch, cin, cout, groups, stride, pad, dil, k, size = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, cin) + (size,) * spatial).astype(dtype)
    w = rng.standard_normal((cout, cin // groups) + (k,) * spatial).astype(dtype)
    return f"conv{spatial}d", x, w, dict(stride=stride, padding=pad, dilation=dil,
                                          groups=groups)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: "-".join(map(str, case)))
def test_products_match_torch(case, dtype, native_calls, routines):
    name, x, w, options = _operands(case, dtype)
    mine, theirs = products_and_torchs(torch, name, x, w, options, dtype)
    assert sorted(native_calls) == ["forward", "input", "weight"]
    _check_routines(routines, channels.MODE, options["groups"],
                    options["groups"] == x.shape[1] == w.shape[0] > 1)
    assert_near_torchs(mine, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [CASES[3], CASES[1], CASES[10]],
                         ids=lambda case: "-".join(map(str, case)))
def test_second_derivatives_match_torch(case, dtype, native_calls, routines):
    name, x, w, options = _operands(case, dtype, seed=2)

    mine = second_derivatives(autojit, getattr(F, name),
                              lambda v: autojit.tensor(v, requires_grad=True), x, w, options)
    theirs = second_derivatives(
        torch, getattr(torch.nn.functional, name),
        lambda v: torch.tensor(v.astype(np.float64), requires_grad=True), x, w, options)
    assert None not in native_calls and set(native_calls) == {"forward", "input", "weight"}
    _check_routines(routines, channels.MODE, options["groups"])
    tolerance = 1e-13 if dtype == "float64" else 2e-6
    for ours, reference in zip(mine, theirs, strict=True):
        assert np.abs(ours - reference).max() / np.abs(reference).max() < tolerance


@pytest.mark.parametrize("padding", [((1, 2), (2, 1)), ((0, 3), (3, 0)), ((2, 2), (0, 1))],
                         ids=str)
@pytest.mark.parametrize("dilation", [1, 2])
def test_uneven_padding_matches_torch(padding, dilation, routines):
    """Padding of different widths on either side (the rows of the laid-out image share
    their zero columns: max(lo, hi) of them), through the native routines directly."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 9, 11))
    w = rng.standard_normal((5, 4, 3, 3))
    attrs = {"stride": (1, 1), "padding": padding, "dilation": (dilation, dilation),
             "groups": 1}
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (top, bottom), (left, right) = padding
    yt = torch.nn.functional.conv2d(torch.nn.functional.pad(xt, (left, right, top, bottom)),
                                    wt, dilation=dilation)
    g = rng.standard_normal(tuple(yt.shape))
    dx, dw = torch.autograd.grad(yt, (xt, wt), torch.tensor(g))
    y = native.eager("forward", x, w, attrs)
    gx = native.eager("input", g, w, {**attrs, "input_size": x.shape[2:]})
    gw = native.eager("weight", x, g, {**attrs, "kernel_size": w.shape[2:]})
    _check_routines(routines, channels.MODE)
    for ours, reference in ((y, yt), (gx, dx), (gw, dw)):
        np.testing.assert_allclose(ours, reference.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_the_weight_gradient_does_not_depend_on_the_thread_count(routines):
    _, x, _, options = _operands(CASES[8], "float32")
    y_shape = (x.shape[0], 32, 8, 8)
    g = np.random.default_rng(3).standard_normal(y_shape).astype("float32")
    attrs = {"stride": (2, 2), "padding": ((1, 1), (1, 1)), "dilation": (1, 1),
             "groups": options["groups"], "kernel_size": (3, 3)}
    before = autojit.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            autojit.set_num_threads(threads)
            results.append(native.eager("weight", x, g, attrs))
    finally:
        autojit.set_num_threads(before)
    assert results[0] is not None
    _check_routines(routines, channels.MODE)
    np.testing.assert_array_equal(*results)



def test_the_weight_gradient_does_not_depend_on_how_its_chunks_are_shared(monkeypatch,
                                                                          routines):
    """Each part sums the chunks part, part + parts, ... in its own scratch, each chunk into
    its own partials: the bits are the same whether one part takes every chunk or each
    chunk has a part."""
    _, x, _, options = _operands((2, 13, 16, 32, 1, 2, 1, 1, 3, 16), "float32")
    g = np.random.default_rng(4).standard_normal((x.shape[0], 32, 8, 8)).astype("float32")
    attrs = {"stride": (2, 2), "padding": ((1, 1), (1, 1)), "dilation": (1, 1),
             "groups": options["groups"], "kernel_size": (3, 3)}
    found = native.geometry("weight", x.shape, g.shape, native.attrs_key(attrs), x.dtype.str)
    _check_routines(routines, channels.MODE)
    assert found.chunks >= 3
    results = []
    for parts in (1, 2, found.chunks):
        monkeypatch.setattr(native.Geometry, "parts", property(lambda self, p=parts: p))
        results.append(native.eager("weight", x, g, attrs))
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])


@pytest.mark.parametrize("threads", [1, 2])
def test_a_weight_gradient_of_few_terms_is_one_product(threads, monkeypatch):
    """512 -> 512 channels on 2x2 images (a ResNet-18's last layer on 64x64 pictures): 32
    terms per weight, summed straight into the output by blocks of columns (weight_gemm),
    the same bits whichever part takes which block, and torch's values."""
    native.geometry.cache_clear()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 40, 2, 2)).astype("float32")
    g = rng.standard_normal((8, 37, 2, 2)).astype("float32")
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1,
             "kernel_size": (3, 3)}
    found = native.geometry("weight", x.shape, g.shape, native.attrs_key(attrs), x.dtype.str)
    assert isinstance(found, channels.ChannelGeometry) and found.direct and found.chunks == 1
    before = autojit.get_num_threads()
    results = []
    try:
        autojit.set_num_threads(threads)
        for parts in (1, 2, 5):
            monkeypatch.setattr(channels.ChannelGeometry, "_gemm_parts", lambda self, p=parts: p)
            results.append(native.eager("weight", x, g, attrs))
    finally:
        autojit.set_num_threads(before)
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])
    reference = torch.ops.aten.convolution_backward(
        torch.tensor(g, dtype=torch.float64), torch.tensor(x, dtype=torch.float64),
        torch.zeros(37, 40, 3, 3, dtype=torch.float64), None, [1, 1], [1, 1], [1, 1], False,
        [0, 0], 1, [False, True, False])[1].numpy()
    np.testing.assert_allclose(results[0], reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_of_a_large_weight_split_its_rows(dtype, monkeypatch):
    """Where the weight outweighs the images (136 <- 40 channels on 2x2 images), each part of
    the channel products takes its share of the blocks of rows (packing only those), not of
    the images: the same bits either way, and torch's values."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 40, 2, 2)).astype(dtype)
    w = rng.standard_normal((136, 40, 3, 3)).astype(dtype)
    g = rng.standard_normal((2, 136, 2, 2)).astype(dtype)
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    found = {}
    for cores in (2, 1000):  # 1000: too few blocks of rows to share, so by images
        monkeypatch.setattr(channels, "_cores", lambda cores=cores: cores)
        native.geometry.cache_clear()
        made = native.geometry("forward", x.shape, w.shape, native.attrs_key(attrs), x.dtype.str)
        assert isinstance(made, channels.ChannelGeometry) and made.by_rows == (cores == 2)
        found[cores] = (native.eager("forward", x, w, attrs),
                        native.eager("input", g, w, {**attrs, "input_size": (2, 2)}))
    native.geometry.cache_clear()
    for split, whole in zip(found[2], found[1000], strict=True):
        np.testing.assert_array_equal(split, whole)
    xt, wt, gt = (torch.tensor(v, dtype=torch.float64) for v in (x, w, g))
    theirs = (torch.nn.functional.conv2d(xt, wt, padding=1), torch.ops.aten.convolution_backward(
        gt, xt, wt, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, False, False])[0])
    tolerance = 1e-12 if dtype == "float64" else 2e-5
    for ours, reference in zip(found[2], theirs, strict=True):
        np.testing.assert_allclose(ours, reference.numpy(), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_both_tile_shapes_match_torch(dtype, monkeypatch, routines):
    """The routines' two tile shapes (AVX-512's, and AVX2's of 16 registers) over output
    channels giving every remainder of the tile heights and of the weight tiles' columns (input
    channels times taps) of each: both run on any host, LLVM splitting vectors wider than its
    registers, whichever one the host's calls take."""
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    for wide in (False, True):
        monkeypatch.setattr(native, "_state", {"wide": wide})
        native.geometry.cache_clear()
        try:
            for cout, kernel, cin in ((1, 2, 3), (3, 2, 5), (7, 3, 6), (14, 2, 7), (16, 3, 7),
                                      (26, 2, 4)):
                rng = np.random.default_rng(cout)
                x = rng.standard_normal((3, cin, 5, 4)).astype(dtype)
                w = rng.standard_normal((cout, cin, kernel, kernel)).astype(dtype)
                xt, wt = (torch.tensor(v, dtype=torch.float64) for v in (x, w))
                yt = torch.nn.functional.conv2d(xt, wt, padding=1)
                g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
                mine = [native.eager("forward", x, w, attrs),
                        native.eager("input", g, w, {**attrs, "input_size": (5, 4)}),
                        native.eager("weight", x, g, {**attrs, "kernel_size": (kernel,) * 2})]
                theirs = [yt, *torch.ops.aten.convolution_backward(
                    torch.tensor(g, dtype=torch.float64), xt, wt, None, [1, 1], [1, 1], [1, 1],
                    False, [0, 0], 1, [True, True, False])[:2]]
                tolerance = 1e-13 if dtype == "float64" else 3e-6
                for ours, reference in zip(mine, theirs, strict=True):
                    reference = reference.numpy()
                    assert ours.shape == reference.shape
                    error = np.abs(ours - reference).max() / np.abs(reference).max()
                    assert error < tolerance, (wide, cout, kernel)
        finally:
            native.geometry.cache_clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_images_take_the_channel_routines(dtype):
    """By default (convolution_channels.prefers_channels) a 4x4 image's products, whose grid
    of 19 positions fills 16 of a position panel's 32 lanes, run vectorized over channels, and
    a 32x32 image's with half a vector of channels (8 float32 channels with AVX-512, 2 float64
    channels with AVX2), which fill their panels, over positions."""
    native.geometry.cache_clear()
    attrs = native.attrs_key({"stride": (1, 1), "padding": ((1, 1), (1, 1)),
                              "dilation": (1, 1), "groups": 1})
    half = max(1, native.lanes(np.dtype(dtype), native.wide()) // 2)
    small, large = ((64, 16, 4, 4), (64, 32, 4, 4)), ((64, half, 32, 32), (64, half, 32, 32))
    kinds = {"forward": lambda x, y: (x, (y[1], x[1], 3, 3)),
             "input": lambda x, y: (y, (y[1], x[1], 3, 3)),
             "weight": lambda x, y: (x, y)}
    for (x, y), expected in ((small, channels.ChannelGeometry), (large, native.Geometry)):
        for kind, operands in kinds.items():
            extra = {"forward": (), "input": (("input_size", x[2:]),),
                     "weight": (("kernel_size", (3, 3)),)}[kind]
            found = native.geometry(kind, *operands(x, y), tuple(sorted(attrs + extra)),
                                    np.dtype(dtype).str)
            assert type(found) is expected, (kind, x)


@pytest.mark.parametrize("case", CASES, ids=lambda case: "-".join(map(str, case)))
def test_the_choice_counts_the_positions_the_channel_tables_list(case):
    """convolution_channels.kept_count, which the choice reads before any table is made, is
    the number of positions the channel routines' tables list, for every job of the forward
    product and of the input gradient (whose stride phases are jobs of their own)."""
    _, x, w, options = _operands(case, "float32")
    spatial = x.ndim - 2
    attrs = {"stride": (options["stride"],) * spatial,
             "padding": ((options["padding"],) * 2,) * spatial,
             "dilation": (options["dilation"],) * spatial, "groups": options["groups"]}
    forward = native.Geometry("forward", x.shape, w.shape, attrs, x.dtype)
    g_shape = forward.out_shape
    gradient = native.Geometry("input", g_shape, w.shape, {**attrs, "input_size": x.shape[2:]},
                               x.dtype)
    for geometry in (forward, gradient):
        for job in channels._jobs(geometry):
            assert channels.kept_count(job) == len(channels._positions(job))
