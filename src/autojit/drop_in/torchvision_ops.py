"""torchvision's C++ operators (`torch.ops.torchvision.*`), written on autojit for the drop-in.

torchvision loads its compiled operators at import (`torch.ops.load_library(".../_C.so")`) and
then registers their fake kernels by name (`torch.library.register_fake("torchvision::nms")`),
which raises where the operators are missing: that library links libtorch, so it never loads
beside autojit, and without this module `import torchvision` (and timm, which imports it)
stopped there. The drop-in (drop_in/__init__.py) hands that one load to `register()`: the
operators are defined with torchvision's schemas and given these kernels, and torchvision
finds them as it finds its own:

- `nms`: the greedy non-maximum suppression of torchvision's CPU kernel (boxes by descending
  score, ties in their given order; a box suppresses later ones whose IoU with it is above
  the threshold), on NumPy: no gradient, as torchvision's;
- `roi_align`: bilinear sampling on a regular grid per bin (`sampling_ratio` points a side,
  or ceil(roi size / bins) where it is 0), torchvision's sample rules (a point past -1 or the
  far edge reads 0, one past the last row reads the last row), averaged per bin; written in
  autojit ops, so that it is differentiable to any order in `input` (not in `rois`, as
  torchvision's) and traced by autojit.compile. `_roi_align_backward` is its VJP;
- `roi_pool`: the max over each bin of rounded box coordinates, with the argmax torchvision
  returns (-1 for an empty bin, whose output is 0), on NumPy; its backward
  (`_roi_pool_backward`, linear in the gradient: double backward works) adds each bin's
  gradient at its argmax;
- `_cuda_version`: -1, as a build without CUDA answers.

`ps_roi_align`, `ps_roi_pool`, `deform_conv2d`, their backwards, the quantized `qnms` and
`qroi_align` and `box_iou_rotated` are defined (so that torchvision registers their fakes) and
raise NotImplementedError naming themselves when called. docs/drop-in.md lists them.
"""

from __future__ import annotations

import math

import numpy as np

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, "
    "int sampling_ratio, bool aligned) -> Tensor",
    "roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width) -> (Tensor, Tensor)",
    "_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, "
    "SymInt height, SymInt width) -> Tensor",
    "_cuda_version() -> int",
)
# Defined, but not implemented here: calling one raises NotImplementedError.
_MISSING = (
    "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, "
    "float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, "
    "SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width) -> (Tensor, Tensor)",
    "_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, "
    "float spatial_scale, SymInt pooled_height, SymInt pooled_width, SymInt batch_size, "
    "SymInt channels, SymInt height, SymInt width) -> Tensor",
    "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
    "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
    "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, "
    "Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
    "SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
    "bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qroi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "box_iou_rotated(Tensor boxes1, Tensor boxes2) -> Tensor",
)

_library = None  # the torchvision Library, once register() made it


def register() -> None:
    """Define torchvision's operators with these kernels (once per process). An operator the
    program defined itself before torchvision loaded (a stand-in of its own) is left as it is."""
    global _library
    if _library is not None:
        return
    from .. import library

    lib = library.Library("torchvision", "FRAGMENT")
    kernels = {"nms": (nms, "CPU"), "roi_align": (roi_align, "CompositeImplicitAutograd"),
               "_roi_align_backward": (roi_align_backward, "CompositeImplicitAutograd"),
               "roi_pool": (roi_pool, "CPU"),
               "_roi_pool_backward": (roi_pool_backward, "CompositeImplicitAutograd"),
               "_cuda_version": (lambda: -1, "CompositeExplicitAutograd")}
    for schema in _SCHEMAS + _MISSING:
        name = schema.partition("(")[0]
        if f"torchvision::{name}.default" in library._OPERATORS:
            continue
        lib.define(schema)
        function, key = kernels.get(name) or (_not_implemented(name), "CompositeImplicitAutograd")
        lib.impl(name, function, key)
        if name == "roi_pool":
            pool = library._find("torchvision::roi_pool")
            pool.setup_context, pool.backward = _roi_pool_setup, _roi_pool_gradients
    _library = lib


def _not_implemented(name: str):
    def kernel(*args, **kwargs):
        raise NotImplementedError(
            f"torchvision::{name} has no implementation in autojit yet (the drop-in implements "
            "torchvision's nms, roi_align and roi_pool; docs/drop-in.md)")

    kernel.__name__ = name
    return kernel


def _torch():
    import autojit

    return autojit


def _check_rois(name: str, input, rois) -> None:  # noqa: A002 - torchvision's names
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise RuntimeError(f"{name}: rois must have shape as Tensor[K, 5], got "
                           f"{list(rois.shape)}")
    if input.dtype != rois.dtype:
        raise RuntimeError(f"{name}: Expected tensor for input to have the same type as tensor "
                           f"for rois; but type {input.dtype} does not equal {rois.dtype}")


# ---- nms ------------------------------------------------------------------------------------

def nms(dets, scores, iou_threshold: float):
    """The indices (int64) of the boxes kept, by descending score."""
    torch = _torch()
    if dets.ndim != 2 or dets.shape[1] != 4:
        raise RuntimeError(f"boxes should be a 2d tensor of shape [N, 4], got "
                           f"{list(dets.shape)}")
    if scores.ndim != 1 or scores.shape[0] != dets.shape[0]:
        raise RuntimeError(f"scores should be a 1d tensor of the boxes' length {dets.shape[0]}, "
                           f"got {list(scores.shape)}")
    if dets.dtype != scores.dtype:
        raise RuntimeError(f"dets should have the same type as scores, got {dets.dtype} and "
                           f"{scores.dtype}")
    return torch.tensor(nms_indices(dets.detach().numpy(), scores.detach().numpy(),
                                    iou_threshold), dtype=torch.int64, device=dets.device)


def nms_indices(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """torchvision's CPU nms on arrays: greedy over the boxes in descending score order."""
    count = boxes.shape[0]
    if count == 0:
        return np.zeros(0, np.int64)
    x1, y1, x2, y2 = (boxes[:, i] for i in range(4))
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-scores, kind="stable")
    suppressed = np.zeros(count, bool)
    kept = []
    threshold = boxes.dtype.type(iou_threshold)
    for position, i in enumerate(order):
        if suppressed[i]:
            continue
        kept.append(i)
        rest = order[position + 1:]
        rest = rest[~suppressed[rest]]
        if rest.size == 0:
            continue
        width = np.maximum(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0)
        height = np.maximum(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0)
        inter = width * height
        overlap = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[overlap > threshold]] = True
    return np.asarray(kept, np.int64)


# ---- roi_align --------------------------------------------------------------------------------

def roi_align(input, rois, spatial_scale: float, pooled_height: int,  # noqa: A002
              pooled_width: int, sampling_ratio: int, aligned: bool):
    """(K, C, pooled_height, pooled_width): each box's bins, each the mean of its samples."""
    torch = _torch()
    _check_rois("roi_align", input, rois)
    batch, channels, height, width = input.shape
    count = rois.shape[0]
    if count == 0:
        return input.new_zeros((0, channels, pooled_height, pooled_width))
    rois = rois.detach()  # torchvision gives the boxes no gradient
    offset = 0.5 if aligned else 0.0
    index = rois[:, 0].long()
    x1, y1 = rois[:, 1] * spatial_scale - offset, rois[:, 2] * spatial_scale - offset
    roi_width = rois[:, 3] * spatial_scale - offset - x1
    roi_height = rois[:, 4] * spatial_scale - offset - y1
    if not aligned:  # boxes at least one pixel a side
        roi_width, roi_height = roi_width.clamp(min=1.0), roi_height.clamp(min=1.0)
    bin_height, bin_width = roi_height / pooled_height, roi_width / pooled_width
    if sampling_ratio > 0:
        grid_height = grid_width = torch.full((count,), sampling_ratio, dtype=torch.int64)
        most_rows = most_columns = sampling_ratio
    else:
        grid_height = torch.ceil(roi_height / pooled_height).long()
        grid_width = torch.ceil(roi_width / pooled_width).long()
        most_rows = max(int(grid_height.max()), 1)
        most_columns = max(int(grid_width.max()), 1)
    # Sample coordinates: rows (K, PH, GH), columns (K, PW, GW); samples past a box's own grid
    # (boxes of fewer samples than the largest) get weight 0.
    rows, row_weight = _samples(torch, y1, bin_height, grid_height, pooled_height, most_rows,
                                height)
    columns, column_weight = _samples(torch, x1, bin_width, grid_width, pooled_width,
                                      most_columns, width)
    # (K, PH, GH, PW, GW) corner indices and weights: rows varying in dims 1-2, columns in 3-4.
    laid_out = input.permute(0, 2, 3, 1)  # (N, H, W, C): a gather gives channels last
    images = index.reshape(count, 1, 1, 1, 1)
    total = 0
    for row, row_share in zip(rows, row_weight):
        for column, column_share in zip(columns, column_weight):
            values = laid_out[images, row[:, :, :, None, None], column[:, None, None, :, :]]
            share = row_share[:, :, :, None, None] * column_share[:, None, None, :, :]
            total = total + values * share[..., None].to(input.dtype)
    samples = torch.clamp(grid_height * grid_width, min=1).to(input.dtype)
    pooled = total.sum(dim=(2, 4)) / samples.reshape(count, 1, 1, 1)
    return pooled.permute(0, 3, 1, 2).contiguous()


def _samples(torch, start, bin_size, grid, bins: int, most: int, size: int):
    """One axis of roi_align's sampling: ((low index, high index), (low weight, high weight)),
    each (K, bins, most), the weights 0 for points outside [-1, size] and past a box's grid."""
    step = torch.arange(bins, dtype=start.dtype).reshape(1, bins, 1)
    point = torch.arange(most, dtype=start.dtype).reshape(1, 1, most)
    samples = grid.clamp(min=1).to(start.dtype).reshape(-1, 1, 1)
    coordinate = start.reshape(-1, 1, 1) + step * bin_size.reshape(-1, 1, 1) \
        + (point + 0.5) * bin_size.reshape(-1, 1, 1) / samples
    inside = (coordinate >= -1.0) & (coordinate <= size) & \
        (point.long() < grid.reshape(-1, 1, 1))
    coordinate = coordinate.clamp(min=0.0)
    low = coordinate.long()  # truncation, as torchvision's (int) of a value >= 0
    at_end = low >= size - 1
    last = torch.full_like(low, size - 1)
    low = torch.where(at_end, last, low)
    high = torch.where(at_end, last, low + 1)
    coordinate = torch.where(at_end, low.to(coordinate.dtype), coordinate)
    fraction = coordinate - low.to(coordinate.dtype)
    zero = torch.zeros_like(fraction)
    return (low, high), (torch.where(inside, 1.0 - fraction, zero),
                         torch.where(inside, fraction, zero))


def roi_align_backward(grad, rois, spatial_scale: float, pooled_height: int, pooled_width: int,
                       batch_size: int, channels: int, height: int, width: int,
                       sampling_ratio: int, aligned: bool):
    """The gradient of roi_align's input (roi_align is linear in it: its VJP at zero)."""
    torch = _torch()
    with torch.enable_grad():
        origin = grad.new_zeros((batch_size, channels, height, width)).requires_grad_()
        output = roi_align(origin, rois.to(grad.dtype), spatial_scale, pooled_height,
                           pooled_width, sampling_ratio, aligned)
        return torch.autograd.grad(output, origin, grad, create_graph=grad.requires_grad)[0]


# ---- roi_pool ---------------------------------------------------------------------------------

def roi_pool(input, rois, spatial_scale: float, pooled_height: int,  # noqa: A002
             pooled_width: int):
    """(output, argmax): each bin's maximum and its flat position in its image's channel."""
    torch = _torch()
    _check_rois("roi_pool", input, rois)
    output, argmax = roi_pool_arrays(input.detach().numpy(), rois.detach().numpy(),
                                     spatial_scale, pooled_height, pooled_width)
    return (torch.tensor(output, dtype=input.dtype, device=input.device),
            torch.tensor(argmax, dtype=torch.int32, device=input.device))


def _round(value):
    """C's round: halves away from zero."""
    return np.sign(value) * np.floor(np.abs(value) + 0.5)


def roi_pool_arrays(images: np.ndarray, rois: np.ndarray, spatial_scale: float,
                    pooled_height: int, pooled_width: int) -> tuple:
    """torchvision's CPU roi_pool on arrays, its arithmetic in the input's dtype."""
    kind = images.dtype.type
    count, (_, channels, height, width) = rois.shape[0], images.shape
    output = np.zeros((count, channels, pooled_height, pooled_width), images.dtype)
    argmax = np.full(output.shape, -1, np.int32)
    lowest = -np.finfo(np.float32).max  # torchvision's -FLT_MAX, for every dtype
    scale = kind(spatial_scale)
    for k in range(count):
        image = images[int(rois[k, 0])]
        start_w, start_h, end_w, end_h = (int(_round(rois[k, j] * scale)) for j in range(1, 5))
        bin_h = kind(max(end_h - start_h + 1, 1)) / kind(pooled_height)
        bin_w = kind(max(end_w - start_w + 1, 1)) / kind(pooled_width)
        for ph in range(pooled_height):
            h0 = min(max(int(math.floor(kind(ph) * bin_h)) + start_h, 0), height)
            h1 = min(max(int(math.ceil(kind(ph + 1) * bin_h)) + start_h, 0), height)
            for pw in range(pooled_width):
                w0 = min(max(int(math.floor(kind(pw) * bin_w)) + start_w, 0), width)
                w1 = min(max(int(math.ceil(kind(pw + 1) * bin_w)) + start_w, 0), width)
                if h1 <= h0 or w1 <= w0:
                    continue
                region = image[:, h0:h1, w0:w1].reshape(channels, -1)
                # the first strictly greater value from -FLT_MAX (NaN never is)
                where = np.argmax(np.where(np.isnan(region), -np.inf, region), axis=1)
                best = region[np.arange(channels), where]
                found = best > lowest
                span = w1 - w0
                position = (h0 + where // span) * width + w0 + where % span
                output[k, :, ph, pw] = np.where(found, best, lowest)
                argmax[k, :, ph, pw] = np.where(found, position, -1)
    return output, argmax


def _roi_pool_setup(ctx, inputs, output) -> None:
    input, rois, spatial_scale, pooled_height, pooled_width = inputs  # noqa: A001
    ctx.rois, ctx.argmax = rois.detach(), output[1]
    ctx.spatial_scale, ctx.pooled = spatial_scale, (pooled_height, pooled_width)
    ctx.input_shape = tuple(input.shape)


def _roi_pool_gradients(ctx, grad, _argmax_grad):
    return (roi_pool_backward(grad, ctx.rois, ctx.argmax, ctx.spatial_scale, *ctx.pooled,
                              *ctx.input_shape), None, None, None, None)


def roi_pool_backward(grad, rois, argmax, spatial_scale: float, pooled_height: int,
                      pooled_width: int, batch_size: int, channels: int, height: int,
                      width: int):
    """Each bin's gradient added at its argmax (none for an empty bin's -1)."""
    torch = _torch()
    count = rois.shape[0]
    plane = height * width
    images = rois[:, 0].long().reshape(count, 1, 1, 1)
    channel = torch.arange(channels).reshape(1, channels, 1, 1)
    found = argmax >= 0
    position = (images * channels + channel) * plane + torch.where(
        found, argmax.long(), torch.zeros_like(argmax, dtype=torch.int64))
    shares = torch.where(found, grad, torch.zeros_like(grad))
    flat = grad.new_zeros((batch_size * channels * plane,))
    flat = flat.index_add(0, position.reshape(-1), shares.reshape(-1))
    return flat.reshape(batch_size, channels, height, width)
