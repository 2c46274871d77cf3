"""torchvision's operators written on autojit (drop_in/torchvision_ops.py), against references
that follow torchvision's CPU kernels loop by loop, written here: nms, roi_align (and its
gradients to second order), roi_pool with its argmax and gradient; then the drop-in's load of
torchvision's library, with a stand-in torchvision package (always) and the real one (where it
is installed)."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autojit
from autojit.drop_in import torchvision_ops

torchvision_ops.register()
ops = autojit.ops.torchvision
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- references, as torchvision's C++ loops ----------------------------------------------------

def nms_reference(boxes, scores, threshold):
    def iou(a, b):
        width = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
        height = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
        inter = width * height
        return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)

    kept = []
    for i in sorted(range(len(scores)), key=lambda i: (-scores[i], i)):
        if all(iou(boxes[i], boxes[j]) <= threshold for j in kept):
            kept.append(i)
    return kept


def _bilinear(image, y, x):
    channels, height, width = image.shape
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return np.zeros(channels)
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_high = y_low = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_high = x_low = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1 - ly, 1 - lx
    return (hy * hx * image[:, y_low, x_low] + hy * lx * image[:, y_low, x_high]
            + ly * hx * image[:, y_high, x_low] + ly * lx * image[:, y_high, x_high])


def roi_align_reference(images, rois, scale, pooled_h, pooled_w, ratio, aligned):
    channels = images.shape[1]
    out = np.zeros((len(rois), channels, pooled_h, pooled_w))
    offset = 0.5 if aligned else 0.0
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        start_w, start_h = x1 * scale - offset, y1 * scale - offset
        roi_w, roi_h = x2 * scale - offset - start_w, y2 * scale - offset - start_h
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / pooled_h, roi_w / pooled_w
        grid_h = ratio if ratio > 0 else int(math.ceil(roi_h / pooled_h))
        grid_w = ratio if ratio > 0 else int(math.ceil(roi_w / pooled_w))
        count = max(grid_h * grid_w, 1)
        for ph in range(pooled_h):
            for pw in range(pooled_w):
                total = np.zeros(channels)
                for iy in range(grid_h):
                    y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                    for ix in range(grid_w):
                        x = start_w + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                        total += _bilinear(images[int(b)], y, x)
                out[k, :, ph, pw] = total / count
    return out


def _c_round(v):
    """C's round: halves away from zero."""
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def _bin(index, size, start, limit):
    """[first, past the last) of bin `index` of `size` from `start`, clipped to [0, limit]."""
    return (min(max(math.floor(index * size) + start, 0), limit),
            min(max(math.ceil((index + 1) * size) + start, 0), limit))


def roi_pool_reference(images, rois, scale, pooled_h, pooled_w):
    _, channels, height, width = images.shape
    out = np.zeros((len(rois), channels, pooled_h, pooled_w))
    argmax = np.full(out.shape, -1)
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        start_w, start_h = _c_round(x1 * scale), _c_round(y1 * scale)
        end_w, end_h = _c_round(x2 * scale), _c_round(y2 * scale)
        bin_h = max(end_h - start_h + 1, 1) / pooled_h
        bin_w = max(end_w - start_w + 1, 1) / pooled_w
        for ph in range(pooled_h):
            h0, h1 = _bin(ph, bin_h, start_h, height)
            for pw in range(pooled_w):
                w0, w1 = _bin(pw, bin_w, start_w, width)
                for c in range(channels):
                    best, where = (0.0, -1) if h1 <= h0 or w1 <= w0 else (-3.4028234663852886e38,
                                                                          -1)
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            if images[int(b), c, h, w] > best:
                                best, where = images[int(b), c, h, w], h * width + w
                    out[k, c, ph, pw], argmax[k, c, ph, pw] = best, where
    return out, argmax


def ps_roi_align_reference(images, rois, scale, pooled_h, pooled_w, ratio):
    channels_out = images.shape[1] // (pooled_h * pooled_w)
    out = np.zeros((len(rois), channels_out, pooled_h, pooled_w))
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        start_w, start_h = x1 * scale - 0.5, y1 * scale - 0.5
        roi_w, roi_h = x2 * scale - 0.5 - start_w, y2 * scale - 0.5 - start_h
        bin_h, bin_w = roi_h / pooled_h, roi_w / pooled_w
        grid_h = ratio if ratio > 0 else int(math.ceil(roi_h / pooled_h))
        grid_w = ratio if ratio > 0 else int(math.ceil(roi_w / pooled_w))
        for c in range(channels_out):
            for ph in range(pooled_h):
                for pw in range(pooled_w):
                    image = images[int(b), (c * pooled_h + ph) * pooled_w + pw][None]
                    total = 0.0
                    for iy in range(grid_h):
                        y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                        for ix in range(grid_w):
                            x = start_w + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                            total += _bilinear(image, y, x)[0]
                    out[k, c, ph, pw] = total / (grid_h * grid_w)
    return out


def ps_roi_pool_reference(images, rois, scale, pooled_h, pooled_w):
    _, channels, height, width = images.shape
    channels_out = channels // (pooled_h * pooled_w)
    out = np.zeros((len(rois), channels_out, pooled_h, pooled_w))
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        start_w, start_h = _c_round(x1 * scale), _c_round(y1 * scale)
        roi_w = max(_c_round(x2 * scale) - start_w, 1)
        roi_h = max(_c_round(y2 * scale) - start_h, 1)
        bin_h, bin_w = roi_h / pooled_h, roi_w / pooled_w
        for c in range(channels_out):
            for ph in range(pooled_h):
                h0, h1 = _bin(ph, bin_h, start_h, height)
                for pw in range(pooled_w):
                    w0, w1 = _bin(pw, bin_w, start_w, width)
                    if h1 <= h0 or w1 <= w0:
                        continue
                    channel = (c * pooled_h + ph) * pooled_w + pw
                    out[k, c, ph, pw] = images[int(b), channel, h0:h1, w0:w1].mean()
    return out


def _boxes(rng, count, size, batch):
    corners = rng.uniform(-3, size + 3, (count, 2, 2))
    lower, upper = corners.min(axis=1), corners.max(axis=1)
    return np.column_stack([rng.integers(0, batch, count), lower, upper])


# ---- nms ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0.1, 0.5, 0.8])
def test_nms_keeps_torchvisions_boxes(dtype, threshold):
    rng = np.random.default_rng(int(threshold * 10))
    for count in (0, 1, 7, 60):
        xy = rng.uniform(0, 50, (count, 2))
        boxes = np.column_stack([xy, xy + rng.uniform(1, 20, (count, 2))]).astype(dtype)
        scores = rng.uniform(0, 1, count).astype(dtype)
        kept = ops.nms(autojit.tensor(boxes), autojit.tensor(scores), threshold)
        assert kept.dtype == autojit.int64
        assert kept.tolist() == nms_reference(boxes.astype(np.float64),
                                              scores.astype(np.float64), threshold)


def test_nms_ties_keep_the_given_order_and_checks_its_arguments():
    boxes = autojit.tensor([[0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 10, 10.0]])
    assert ops.nms(boxes, autojit.tensor([0.5, 0.5, 0.5]), 0.5).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match=r"boxes should be a 2d tensor of shape \[N, 4\]"):
        ops.nms(boxes[:, :3], autojit.tensor([0.5, 0.5, 0.5]), 0.5)
    with pytest.raises(RuntimeError, match="same type"):
        ops.nms(boxes, autojit.tensor([0.5, 0.5, 0.5], dtype=autojit.float64), 0.5)


# ---- roi_align ----------------------------------------------------------------------------------

@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_the_kernels_loops(aligned, ratio):
    rng = np.random.default_rng(ratio + aligned)
    images = rng.standard_normal((2, 3, 9, 11))
    rois = _boxes(rng, 6, 10, 2)
    rois[0, 1:] = (4, 4, 3, 2)  # a box whose corners are swapped: an empty or 1-pixel box
    for dtype, tolerance in ((np.float64, 1e-12), (np.float32, 2e-5)):
        got = ops.roi_align(autojit.tensor(images.astype(dtype)),
                            autojit.tensor(rois.astype(dtype)), 0.8, 3, 2, ratio, aligned)
        assert got.dtype == autojit.tensor(images.astype(dtype)).dtype
        want = roi_align_reference(images, rois.astype(dtype).astype(np.float64), 0.8, 3, 2,
                                   ratio, aligned)
        np.testing.assert_allclose(got.numpy(), want, rtol=tolerance, atol=tolerance)
    empty = ops.roi_align(autojit.tensor(images), autojit.zeros(0, 5, dtype=autojit.float64),
                          1.0, 2, 2, 0, aligned)
    assert tuple(empty.shape) == (0, 3, 2, 2)


def test_roi_align_gradients_to_second_order_and_its_backward_op():
    rng = np.random.default_rng(3)
    images = autojit.tensor(rng.standard_normal((2, 2, 6, 7)), requires_grad=True)
    rois = autojit.tensor(_boxes(rng, 4, 6, 2), requires_grad=True)

    def f(x):
        return ops.roi_align(x, rois, 0.9, 2, 3, 0, True)

    assert autojit.autograd.gradcheck(f, (images,))
    assert autojit.autograd.gradgradcheck(f, (images,))
    grad = autojit.tensor(rng.standard_normal((4, 2, 2, 3)))
    expected, = autojit.autograd.grad(f(images), images, grad)
    given = ops._roi_align_backward(grad, rois.detach(), 0.9, 2, 3, 2, 2, 6, 7, 0, True)
    np.testing.assert_allclose(given.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    # the boxes get no gradient, as torchvision's
    assert autojit.autograd.grad(f(images).sum(), rois, allow_unused=True)[0] is None


def test_roi_align_compiled_matches_eager():
    rng = np.random.default_rng(4)
    images = autojit.tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    rois = autojit.tensor(_boxes(rng, 5, 8, 2).astype(np.float32))

    def f(x, r):
        return ops.roi_align(x, r, 1.0, 2, 2, 2, False) * 2

    compiled = autojit.compile(f)
    for _ in range(2):
        np.testing.assert_allclose(compiled(images, rois).numpy(), f(images, rois).numpy(),
                                   rtol=1e-6, atol=1e-6)


def test_roi_align_checks_its_boxes():
    with pytest.raises(RuntimeError, match=r"rois must have shape as Tensor\[K, 5\]"):
        ops.roi_align(autojit.zeros(1, 1, 4, 4), autojit.zeros(2, 4), 1.0, 2, 2, 0, False)
    with pytest.raises(RuntimeError, match="same type as tensor for rois"):
        ops.roi_align(autojit.zeros(1, 1, 4, 4), autojit.zeros(2, 5, dtype=autojit.float64),
                      1.0, 2, 2, 0, False)


# ---- roi_pool -----------------------------------------------------------------------------------

def test_roi_pool_matches_the_kernels_loops_with_its_argmax():
    rng = np.random.default_rng(5)
    images = rng.standard_normal((2, 3, 9, 10))
    rois = _boxes(rng, 7, 9, 2)
    rois[0, 1:] = (20, 20, 30, 30)  # outside the image: empty bins, 0 and -1
    output, argmax = ops.roi_pool(autojit.tensor(images), autojit.tensor(rois), 0.7, 3, 2)
    want, want_argmax = roi_pool_reference(images, rois, 0.7, 3, 2)
    assert argmax.dtype == autojit.int32
    np.testing.assert_array_equal(argmax.numpy(), want_argmax)
    np.testing.assert_array_equal(output.numpy(), want)
    assert (argmax[0] == -1).all() and (output[0] == 0).all()


def test_roi_pool_gradients_and_its_backward_op():
    rng = np.random.default_rng(6)
    images = autojit.tensor(rng.standard_normal((2, 2, 7, 7)), requires_grad=True)
    rois = autojit.tensor(_boxes(rng, 5, 7, 2))

    def f(x):
        return ops.roi_pool(x, rois, 1.0, 2, 2)[0]

    assert autojit.autograd.gradcheck(f, (images,))
    assert autojit.autograd.gradgradcheck(f, (images,))
    output, argmax = ops.roi_pool(images, rois, 1.0, 2, 2)
    grad = autojit.tensor(rng.standard_normal(tuple(output.shape)))
    expected, = autojit.autograd.grad(output, images, grad)
    given = ops._roi_pool_backward(grad, rois, argmax, 1.0, 2, 2, 2, 2, 7, 7)
    np.testing.assert_allclose(given.numpy(), expected.numpy())
    flat = np.zeros(2 * 2 * 49)  # each bin's gradient at its argmax, by hand
    for k, (b, *_corners) in enumerate(rois.numpy()):
        for c in range(2):
            for index, value in zip(argmax[k, c].numpy().ravel(), grad[k, c].numpy().ravel()):
                if index >= 0:
                    flat[(int(b) * 2 + c) * 49 + index] += value
    np.testing.assert_allclose(given.numpy().ravel(), flat)


@pytest.mark.parametrize("ratio", [0, 2])
def test_ps_roi_align_matches_the_kernels_loops(ratio):
    rng = np.random.default_rng(7 + ratio)
    images = rng.standard_normal((2, 2 * 6, 8, 9))  # 2 output channels of 2 x 3 bins
    rois = _boxes(rng, 5, 8, 2)
    rois[0, 1:] = (2, 2, 6, 7)
    for dtype, tolerance in ((np.float64, 1e-12), (np.float32, 2e-5)):
        output, mapping = ops.ps_roi_align(autojit.tensor(images.astype(dtype)),
                                           autojit.tensor(rois.astype(dtype)), 0.9, 2, 3, ratio)
        want = ps_roi_align_reference(images, rois.astype(dtype).astype(np.float64), 0.9, 2, 3,
                                      ratio)
        np.testing.assert_allclose(output.numpy(), want, rtol=tolerance, atol=tolerance)
        assert mapping.dtype == autojit.int32
        np.testing.assert_array_equal(mapping.numpy(), np.broadcast_to(
            np.arange(12, dtype=np.int32).reshape(1, 2, 2, 3), (5, 2, 2, 3)))
    with pytest.raises(RuntimeError, match="input channels must be a multiple of pooling"):
        ops.ps_roi_align(autojit.zeros(1, 5, 4, 4), autojit.zeros(1, 5), 1.0, 2, 2, 0)


def test_ps_roi_pool_matches_the_kernels_loops():
    rng = np.random.default_rng(9)
    images = rng.standard_normal((2, 3 * 4, 9, 10))
    rois = _boxes(rng, 6, 9, 2)
    rois[0, 1:] = (20, 20, 30, 30)  # outside: empty bins give 0
    output, mapping = ops.ps_roi_pool(autojit.tensor(images), autojit.tensor(rois), 0.8, 2, 2)
    np.testing.assert_allclose(output.numpy(), ps_roi_pool_reference(images, rois, 0.8, 2, 2),
                               rtol=1e-12, atol=1e-12)
    float32 = ops.ps_roi_pool(autojit.tensor(images.astype(np.float32)),
                              autojit.tensor(rois.astype(np.float32)), 0.8, 2, 2)[0]
    assert float32.dtype == autojit.float32
    np.testing.assert_allclose(float32.numpy(), output.numpy(), rtol=1e-5, atol=1e-6)
    assert tuple(mapping.shape) == (6, 3, 2, 2) and (output[0] == 0).all()


@pytest.mark.parametrize("name", ["ps_roi_align", "ps_roi_pool"])
def test_position_sensitive_gradients_and_backward_ops(name):
    rng = np.random.default_rng(10)
    images = autojit.tensor(rng.standard_normal((2, 4, 4, 4)), requires_grad=True)
    rois = autojit.tensor(_boxes(rng, 3, 4, 2))
    extra = (0,) if name == "ps_roi_align" else ()

    def f(x):
        return getattr(ops, name)(x, rois, 1.0, 2, 2, *extra)[0]

    assert autojit.autograd.gradcheck(f, (images,))
    assert autojit.autograd.gradgradcheck(f, (images,))
    output, mapping = getattr(ops, name)(images, rois, 1.0, 2, 2, *extra)
    grad = autojit.tensor(rng.standard_normal(tuple(output.shape)))
    expected, = autojit.autograd.grad(output, images, grad)
    backward = getattr(ops, f"_{name}_backward")
    if name == "ps_roi_align":
        given = backward(grad, rois, mapping, 1.0, 2, 2, 0, 2, 4, 4, 4)
    else:
        given = backward(grad, rois, mapping, 1.0, 2, 2, 2, 4, 4, 4)
    np.testing.assert_allclose(given.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


# ---- deform_conv2d ------------------------------------------------------------------------------

def _deform_bilinear(image, h, w):
    height, width = image.shape
    if h <= -1 or height <= h or w <= -1 or width <= w:
        return 0.0
    h_low, w_low = math.floor(h), math.floor(w)
    lh, lw = h - h_low, w - w_low
    total = 0.0
    for row, row_share in ((h_low, 1 - lh), (h_low + 1, lh)):
        for column, column_share in ((w_low, 1 - lw), (w_low + 1, lw)):
            if 0 <= row < height and 0 <= column < width:
                total += row_share * column_share * image[row, column]
    return total


def deform_conv2d_reference(x, weight, offset, mask, bias, stride, pad, dilation, groups,
                            offset_groups):
    batch, channels, height, width = x.shape
    out_channels, group_channels, kh, kw = weight.shape
    out_h, out_w = offset.shape[2:]
    columns = np.zeros((batch, channels, kh, kw, out_h, out_w))
    per_group = channels // offset_groups
    for b in range(batch):
        for c in range(channels):
            g = c // per_group
            for i in range(kh):
                for j in range(kw):
                    tap = (g * kh + i) * kw + j
                    for oy in range(out_h):
                        for ox in range(out_w):
                            y = oy * stride[0] - pad[0] + i * dilation[0] + offset[b, 2 * tap,
                                                                                    oy, ox]
                            x_ = ox * stride[1] - pad[1] + j * dilation[1] + offset[
                                b, 2 * tap + 1, oy, ox]
                            value = _deform_bilinear(x[b, c], y, x_)
                            if mask is not None:
                                value *= mask[b, tap, oy, ox]
                            columns[b, c, i, j, oy, ox] = value
    out = np.zeros((batch, out_channels, out_h, out_w))
    per_out = out_channels // groups
    for o in range(out_channels):
        g = o // per_out
        block = columns[:, g * group_channels:(g + 1) * group_channels]
        out[:, o] = np.einsum("bcijyx,cij->byx", block, weight[o]) + bias[o]
    return out


def _deform_case(rng, groups=2, offset_groups=2, scale=2.0):
    x = rng.standard_normal((2, 4, 7, 6))
    weight = rng.standard_normal((6, 4 // groups, 3, 2))
    stride, pad, dilation = (2, 1), (1, 0), (1, 2)
    out_h = (7 + 2 - (1 * 2 + 1)) // 2 + 1
    out_w = (6 + 0 - (2 * 1 + 1)) // 1 + 1
    offset = rng.uniform(-scale, scale, (2, 2 * offset_groups * 6, out_h, out_w))
    mask = rng.uniform(0, 1, (2, offset_groups * 6, out_h, out_w))
    bias = rng.standard_normal(6)
    return x, weight, offset, mask, bias, stride, pad, dilation


def _deform_call(x, weight, offset, mask, bias, stride, pad, dilation, groups, offset_groups,
                 use_mask=True):
    return ops.deform_conv2d(x, weight, offset, mask, bias, *stride, *pad, *dilation, groups,
                             offset_groups, use_mask)


def test_deform_conv2d_without_offsets_is_torchs_conv2d():
    import torch

    rng = np.random.default_rng(11)
    x, weight, offset, mask, bias, stride, pad, dilation = _deform_case(rng)
    got = _deform_call(autojit.tensor(x), autojit.tensor(weight),
                       autojit.zeros(tuple(offset.shape), dtype=autojit.float64),
                       autojit.zeros(0, dtype=autojit.float64), autojit.tensor(bias), stride,
                       pad, dilation, 2, 2, use_mask=False)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(weight), torch.tensor(bias),
                                      stride, pad, dilation, 2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("offset_groups", [1, 2])
def test_deform_conv2d_matches_the_kernels_loops(offset_groups):
    rng = np.random.default_rng(12 + offset_groups)
    x, weight, offset, mask, bias, stride, pad, dilation = _deform_case(
        rng, offset_groups=offset_groups, scale=4.0)
    got = _deform_call(*(autojit.tensor(a) for a in (x, weight, offset, mask, bias)), stride,
                       pad, dilation, 2, offset_groups)
    want = deform_conv2d_reference(x, weight, offset, mask, bias, stride, pad, dilation, 2,
                                   offset_groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-11, atol=1e-11)
    float32 = _deform_call(*(autojit.tensor(a.astype(np.float32)) for a in (
        x, weight, offset, mask, bias)), stride, pad, dilation, 2, offset_groups)
    assert float32.dtype == autojit.float32
    np.testing.assert_allclose(float32.numpy(), want, rtol=1e-4, atol=1e-4)


def test_deform_conv2d_gradients_of_all_five_and_its_backward_op():
    rng = np.random.default_rng(14)
    x, weight, offset, mask, bias, stride, pad, dilation = _deform_case(rng)
    x, offset, mask = x[:1, :, :5, :4], offset[:1, :, :3, :2], mask[:1, :, :3, :2]
    leaves = [autojit.tensor(a, requires_grad=True) for a in (x, weight, offset, mask, bias)]

    def f(*values):
        return _deform_call(*values, stride, pad, dilation, 2, 2)

    assert autojit.autograd.gradcheck(f, leaves)
    # second order in the offsets (the sampling weights are products of two of them)
    assert autojit.autograd.gradgradcheck(lambda b: f(leaves[0], leaves[1], b, *leaves[3:]),
                                          (leaves[2],))
    output = f(*leaves)
    grad = autojit.tensor(rng.standard_normal(tuple(output.shape)))
    expected = autojit.autograd.grad(output, leaves, grad)
    given = ops._deform_conv2d_backward(grad, *leaves, *stride, *pad, *dilation, 2, 2, True)
    for a, b in zip(given, expected):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_the_operators_autojit_does_not_implement_say_so():
    assert ops._cuda_version() == -1
    with pytest.raises(NotImplementedError, match="torchvision::qnms has no "
                                                  "implementation in autojit"):
        ops.qnms(autojit.zeros(1, 4), autojit.zeros(1), 0.5)


# ---- the drop-in's load of torchvision's library -------------------------------------------------

# A stand-in for torchvision: its extension loading and fake registration, as torchvision 0.28
# writes them (extension.py, _meta_registrations.py), and a use of two operators.
_FAKE_TORCHVISION = '''
import os, torch
lib_path = os.path.join(os.path.dirname(__file__), "_C.so")
try:
    torch.ops.load_library(lib_path)
    HAS_OPS = True
except (ImportError, OSError):
    HAS_OPS = False

@torch.library.register_fake("torchvision::nms")
def meta_nms(dets, scores, iou_threshold):
    return dets.new_empty(torch.library.get_ctx().new_dynamic_size(), dtype=torch.long)

def nms(boxes, scores, threshold):
    return torch.ops.torchvision.nms(boxes, scores, threshold)
'''


def _run_drop_in(code: str, path: str) -> str:
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [path, os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "autojit.drop_in", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, env=environment, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_drop_in_defines_torchvisions_operators_when_it_loads_its_library(tmp_path):
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text(_FAKE_TORCHVISION)
    out = _run_drop_in('''
        import torch, torchvision
        print(torchvision.HAS_OPS, sorted(p.rsplit("/", 2)[-2] for p in torch.ops.loaded_libraries))
        boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30.0]])
        print(torchvision.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5).tolist())
    ''', str(tmp_path))
    assert out.split("\n")[:2] == ["True ['torchvision']", "[0, 2]"]


def test_operators_a_program_defined_first_are_left_to_it(tmp_path):
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text(_FAKE_TORCHVISION)
    out = _run_drop_in('''
        import torch
        stand_in = torch.library.Library("torchvision", "DEF")
        stand_in.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        stand_in.impl("nms", lambda dets, scores, threshold: torch.tensor([7]), "CPU")
        import torchvision
        boxes = torch.tensor([[0, 0, 10, 10.0]])
        print(torchvision.nms(boxes, torch.tensor([0.9]), 0.5).tolist(),
              tuple(torch.ops.torchvision.roi_align(torch.ones(1, 1, 4, 4), torch.tensor(
                  [[0, 0, 0, 3, 3.0]]), 1.0, 2, 2, 2, False).shape))
    ''', str(tmp_path))
    assert out.split("\n")[0] == "[7] (1, 1, 2, 2)"


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                    reason="torchvision is not installed")
def test_torchvision_imports_and_runs_its_operators_through_the_drop_in():
    out = _run_drop_in('''
        import torch, torchvision
        assert torchvision.extension._has_ops()
        boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30.0]])
        scores = torch.tensor([0.9, 0.8, 0.7])
        print(torchvision.ops.nms(boxes, scores, 0.5).tolist())
        print(torchvision.ops.batched_nms(boxes, scores, torch.tensor([0, 1, 0]), 0.5).tolist())
        x = torch.ones(1, 2, 8, 8, requires_grad=True)
        y = torchvision.ops.roi_align(x, [torch.tensor([[0.0, 0, 4, 4]])], (2, 2), 1.0, 2, True)
        y.sum().backward()
        print(tuple(y.shape), float(y.sum()), float(x.grad.sum()))
        model = torchvision.models.resnet18(num_classes=3)
        print(tuple(model(torch.randn(2, 3, 32, 32)).shape))
    ''', "")
    assert out.split("\n")[:4] == ["[0, 2]", "[0, 1, 2]", "(1, 2, 2, 2) 8.0 8.0", "(2, 3)"]
