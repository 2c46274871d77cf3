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
- `ps_roi_align` and `ps_roi_pool`: the position-sensitive forms (bin (ph, pw) of output channel
  c reads input channel (c * PH + ph) * PW + pw), with their channel mappings: ps_roi_align on
  roi_align's sampling (boxes shifted by half a pixel, never widened), ps_roi_pool as the mean
  over each bin of rounded coordinates, summed from an integral image in float64; both in
  autojit ops, differentiable in the input, with their backward ops;
- `deform_conv2d`: each kernel tap read at its offset position by bilinear sampling with zeros
  outside the image (torchvision's rule), times the mask where one is used, then the grouped
  product with the weight and the bias; in autojit ops, so that the input, weight, offsets,
  mask and bias all get gradients, to any order; `_deform_conv2d_backward` gives the five;
- `_cuda_version`: -1, as a build without CUDA answers.

On CUDA tensors the operators written in autojit ops run on the device; nms and roi_pool run
on host copies of their inputs, with a HostFallbackWarning once each, and give CUDA tensors
back (tests/test_cuda_torchvision_ops.py).

The quantized `qnms` and `qroi_align` and `box_iou_rotated` are defined (so that torchvision
registers their fakes) and raise NotImplementedError naming themselves when called.
docs/drop-in.md lists them.
"""

from __future__ import annotations

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
    "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
    "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
    "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, "
    "Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
    "SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
    "bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
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
)
# Defined, but not implemented here: calling one raises NotImplementedError.
_MISSING = (
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
               "ps_roi_align": (ps_roi_align, "CompositeImplicitAutograd"),
               "_ps_roi_align_backward": (ps_roi_align_backward, "CompositeImplicitAutograd"),
               "ps_roi_pool": (ps_roi_pool, "CompositeImplicitAutograd"),
               "_ps_roi_pool_backward": (ps_roi_pool_backward, "CompositeImplicitAutograd"),
               "deform_conv2d": (deform_conv2d, "CompositeImplicitAutograd"),
               "_deform_conv2d_backward": (deform_conv2d_backward, "CompositeImplicitAutograd"),
               "_cuda_version": (lambda: -1, "CompositeExplicitAutograd")}
    for schema in _SCHEMAS + _MISSING:
        name = schema.partition("(")[0]
        if f"torchvision::{name}.default" in library._OPERATORS:
            continue
        lib.define(schema)
        function, key = kernels.get(name) or (_not_implemented(name), "CompositeImplicitAutograd")
        lib.impl(name, function, key)
        if key == "CPU":  # on NumPy: CUDA tensors go through host copies (_host)
            lib.impl(name, function, "CUDA")
        if name == "roi_pool":
            pool = library._find("torchvision::roi_pool")
            pool.setup_context, pool.backward = _roi_pool_setup, _roi_pool_gradients
    _library = lib


def _not_implemented(name: str):
    def kernel(*args, **kwargs):
        raise NotImplementedError(
            f"torchvision::{name} has no implementation in autojit yet (the drop-in implements "
            "torchvision's nms, roi_align, roi_pool, ps_roi_align, ps_roi_pool and deform_conv2d; "
            "docs/drop-in.md)")

    kernel.__name__ = name
    return kernel


def _torch():
    import autojit

    return autojit


def _host(tensor, name: str) -> np.ndarray:
    """A tensor's values as a NumPy array, for an operator written on NumPy; a CUDA tensor's
    copied to the host, with a HostFallbackWarning once per operator, as autojit's own ops
    without a CUDA kernel do."""
    tensor = tensor.detach()
    if tensor.is_cuda:
        from ..cuda.eager import HostFallbackWarning
        from ..tensor.once import warn_once

        warn_once(("torchvision host", name), f"torchvision::{name} on cuda tensors runs on the "
                  "host: the inputs are copied to the host and the result back",
                  HostFallbackWarning, stacklevel=4)
        tensor = tensor.cpu()
    return tensor.numpy()


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
    return torch.tensor(nms_indices(_host(dets, "nms"), _host(scores, "nms"), iou_threshold),
                        dtype=torch.int64, device=dets.device)


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
        # the overlap in the boxes' dtype, compared with the threshold as a double
        suppressed[rest[overlap.astype(np.float64) > iou_threshold]] = True
    return np.asarray(kept, np.int64)


# ---- roi_align --------------------------------------------------------------------------------

def roi_align(input, rois, spatial_scale: float, pooled_height: int,  # noqa: A002
              pooled_width: int, sampling_ratio: int, aligned: bool):
    """(K, C, pooled_height, pooled_width): each box's bins, each the mean of its samples."""
    _check_rois("roi_align", input, rois)
    return _align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                  aligned, False)


def ps_roi_align(input, rois, spatial_scale: float, pooled_height: int,  # noqa: A002
                 pooled_width: int, sampling_ratio: int):
    """Position-sensitive roi_align: bin (ph, pw) of output channel c reads input channel
    (c * PH + ph) * PW + pw; boxes shifted by half a pixel, never widened, as torchvision's.
    Returns (output, channel_mapping)."""
    torch = _torch()
    _check_rois("ps_roi_align", input, rois)
    channels_out = _channels_out(input, pooled_height, pooled_width)
    output = _align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                    True, True)
    return output, _channel_mapping(torch, rois.shape[0], channels_out, pooled_height,
                                     pooled_width, input.device)


def _channels_out(input, pooled_height: int, pooled_width: int) -> int:  # noqa: A002
    bins = pooled_height * pooled_width
    if input.shape[1] % bins:
        raise RuntimeError("input channels must be a multiple of pooling height * pooling "
                           "width")
    return input.shape[1] // bins


def _channel_mapping(torch, count: int, channels_out: int, pooled_height: int,
                     pooled_width: int, device):
    mapping = torch.arange(channels_out * pooled_height * pooled_width, dtype=torch.int32,
                           device=device)
    return mapping.reshape(1, channels_out, pooled_height, pooled_width).expand(
        count, -1, -1, -1).contiguous()


def _align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,  # noqa: A002
           aligned, sensitive):
    """roi_align's sampling and averaging; `sensitive`: ps_roi_align's (each bin its own
    input channels, boxes always aligned and never widened, an empty grid divided by 0)."""
    torch = _torch()
    batch, channels, height, width = input.shape
    count = rois.shape[0]
    channels_out = channels // (pooled_height * pooled_width) if sensitive else channels
    if count == 0:
        return input.new_zeros((0, channels_out, pooled_height, pooled_width))
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
        grid_height = grid_width = torch.full((count,), sampling_ratio, dtype=torch.int64,
                                              device=input.device)
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
    # (K, PH, GH, PW, GW, C) values at each corner: rows vary in dims 1-2, columns in 3-4.
    laid_out = input.permute(0, 2, 3, 1)  # (N, H, W, C): a gather gives channels last
    where = [index.reshape(count, 1, 1, 1, 1)]
    if sensitive:  # channel (c * PH + ph) * PW + pw of bin (ph, pw)
        where.append(torch.arange(channels, device=input.device).reshape(
            channels_out, pooled_height, 1, pooled_width, 1).permute(1, 2, 3, 4, 0)[None])
        where[0] = where[0][..., None]
    total = 0
    for row, row_share in zip(rows, row_weight):
        for column, column_share in zip(columns, column_weight):
            corner = [row[:, :, :, None, None], column[:, None, None, :, :]]
            if sensitive:
                corner = [part[..., None] for part in corner]
            values = laid_out[(where[0], *corner, *where[1:])]
            share = row_share[:, :, :, None, None] * column_share[:, None, None, :, :]
            total = total + values * share[..., None].to(input.dtype)
    samples = grid_height * grid_width
    if not sensitive:
        samples = torch.clamp(samples, min=1)
    pooled = total.sum(dim=(2, 4)) / samples.to(input.dtype).reshape(count, 1, 1, 1)
    return pooled.permute(0, 3, 1, 2).contiguous()


def _samples(torch, start, bin_size, grid, bins: int, most: int, size: int):
    """One axis of roi_align's sampling: ((low index, high index), (low weight, high weight)),
    each (K, bins, most), the weights 0 for points outside [-1, size] (NaN too) and past a
    box's grid."""
    step = torch.arange(bins, dtype=start.dtype, device=start.device).reshape(1, bins, 1)
    point = torch.arange(most, dtype=start.dtype, device=start.device).reshape(1, 1, most)
    samples = grid.clamp(min=1).to(start.dtype).reshape(-1, 1, 1)
    coordinate = start.reshape(-1, 1, 1) + step * bin_size.reshape(-1, 1, 1) \
        + (point + 0.5) * bin_size.reshape(-1, 1, 1) / samples
    inside = (coordinate >= -1.0) & (coordinate <= size) & \
        (point.long() < grid.reshape(-1, 1, 1))
    coordinate = torch.where(inside, coordinate, torch.zeros_like(coordinate)).clamp(min=0.0)
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


def _vjp_at_zero(function, grad, shape, *arguments):
    """The gradient of `function(input, *arguments)`'s input for an output gradient `grad`:
    the function is linear in its input, so its VJP at zero is the gradient everywhere."""
    torch = _torch()
    with torch.enable_grad():
        origin = grad.new_zeros(shape).requires_grad_()
        output = function(origin, *arguments)
        output = output[0] if isinstance(output, tuple) else output
        return torch.autograd.grad(output, origin, grad, create_graph=grad.requires_grad)[0]


def roi_align_backward(grad, rois, spatial_scale: float, pooled_height: int, pooled_width: int,
                       batch_size: int, channels: int, height: int, width: int,
                       sampling_ratio: int, aligned: bool):
    """The gradient of roi_align's input."""
    return _vjp_at_zero(roi_align, grad, (batch_size, channels, height, width),
                        rois.to(grad.dtype), spatial_scale, pooled_height, pooled_width,
                        sampling_ratio, aligned)


def ps_roi_align_backward(grad, rois, channel_mapping, spatial_scale: float,
                          pooled_height: int, pooled_width: int, sampling_ratio: int,
                          batch_size: int, channels: int, height: int, width: int):
    """The gradient of ps_roi_align's input."""
    return _vjp_at_zero(ps_roi_align, grad, (batch_size, channels, height, width),
                        rois.to(grad.dtype), spatial_scale, pooled_height, pooled_width,
                        sampling_ratio)


# ---- ps_roi_pool ------------------------------------------------------------------------------

def ps_roi_pool(input, rois, spatial_scale: float, pooled_height: int,  # noqa: A002
                pooled_width: int):
    """Position-sensitive average pooling: bin (ph, pw) of output channel c is the mean of input
    channel (c * PH + ph) * PW + pw over the bin of rounded box coordinates (0 where empty).
    Returns (output, channel_mapping). The sums come from an integral image in float64 (a
    gather of four corners per bin), so the op is differentiable as written."""
    torch = _torch()
    _check_rois("ps_roi_pool", input, rois)
    channels_out = _channels_out(input, pooled_height, pooled_width)
    _, channels, height, width = input.shape
    count = rois.shape[0]
    mapping = _channel_mapping(torch, count, channels_out, pooled_height, pooled_width,
                               input.device)
    if count == 0:
        return input.new_zeros((0, channels_out, pooled_height, pooled_width)), mapping
    bounds = rois.detach().cpu().numpy()  # the bins' bounds are Python's to compute
    device = input.device
    kind = input.dtype.numpy.type
    rows = _pool_bins(bounds[:, 2], bounds[:, 4], spatial_scale, pooled_height, height, kind)
    columns = _pool_bins(bounds[:, 1], bounds[:, 3], spatial_scale, pooled_width, width, kind)
    wide = torch.nn.functional.pad(input.to(torch.float64), (1, 0, 1, 0))
    integral = wide.cumsum(2).cumsum(3)  # integral[..., h, w]: the sum above and left of it
    image = torch.tensor(bounds[:, 0].astype(np.int64), device=device).reshape(count, 1, 1, 1)
    channel = torch.arange(channels, device=device).reshape(1, channels_out, pooled_height,
                                                            pooled_width)
    h0, h1 = (torch.tensor(part[:, None, :, None], device=device) for part in rows)
    w0, w1 = (torch.tensor(part[:, None, None, :], device=device) for part in columns)
    total = integral[image, channel, h1, w1] - integral[image, channel, h0, w1] \
        - integral[image, channel, h1, w0] + integral[image, channel, h0, w0]
    area = torch.tensor(((rows[1] - rows[0])[:, :, None] * (columns[1] - columns[0])[:, None, :])
                        .astype(np.float64)[:, None], device=device)
    output = torch.where(area > 0, total / area.clamp(min=1), torch.zeros_like(total))
    return output.to(input.dtype), mapping


def _pool_bins(start, end, spatial_scale, bins: int, size: int, kind,
               inclusive: bool = False) -> tuple:
    """(first, past the last) index of each box's bins along one axis, (K, bins), as the
    pooling kernels compute them in the input's scalar type `kind`: box ends rounded (C's
    round), the box `inclusive` of its last index (roi_pool's) or not (ps_roi_pool's), at least
    one element, bins clipped to [0, size] (an empty bin has first == past)."""
    scale = kind(spatial_scale)
    first = _round(start.astype(kind) * scale).astype(np.int64)
    last = _round(end.astype(kind) * scale).astype(np.int64)
    extent = np.maximum(last - first + inclusive, 1).astype(kind) / kind(bins)
    step = np.arange(bins, dtype=kind)
    lower = np.floor(step[None, :] * extent[:, None]).astype(np.int64) + first[:, None]
    upper = np.ceil((step[None, :] + 1) * extent[:, None]).astype(np.int64) + first[:, None]
    lower, upper = np.clip(lower, 0, size), np.clip(upper, 0, size)
    return lower, np.maximum(upper, lower)


def ps_roi_pool_backward(grad, rois, channel_mapping, spatial_scale: float,
                         pooled_height: int, pooled_width: int, batch_size: int,
                         channels: int, height: int, width: int):
    """The gradient of ps_roi_pool's input."""
    return _vjp_at_zero(ps_roi_pool, grad, (batch_size, channels, height, width),
                        rois.to(grad.dtype), spatial_scale, pooled_height, pooled_width)


# ---- roi_pool ---------------------------------------------------------------------------------

def roi_pool(input, rois, spatial_scale: float, pooled_height: int,  # noqa: A002
             pooled_width: int):
    """(output, argmax): each bin's maximum and its flat position in its image's channel."""
    torch = _torch()
    _check_rois("roi_pool", input, rois)
    output, argmax = roi_pool_arrays(_host(input, "roi_pool"), _host(rois, "roi_pool"),
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
    rows = _pool_bins(rois[:, 2], rois[:, 4], spatial_scale, pooled_height, height, kind, True)
    columns = _pool_bins(rois[:, 1], rois[:, 3], spatial_scale, pooled_width, width, kind, True)
    for k in range(count):
        image = images[int(rois[k, 0])]
        for ph in range(pooled_height):
            h0, h1 = int(rows[0][k, ph]), int(rows[1][k, ph])
            for pw in range(pooled_width):
                w0, w1 = int(columns[0][k, pw]), int(columns[1][k, pw])
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
    channel = torch.arange(channels, device=grad.device).reshape(1, channels, 1, 1)
    found = argmax >= 0
    position = (images * channels + channel) * plane + torch.where(
        found, argmax.long(), torch.zeros_like(argmax, dtype=torch.int64))
    shares = torch.where(found, grad, torch.zeros_like(grad))
    flat = grad.new_zeros((batch_size * channels * plane,))
    flat = flat.index_add(0, position.reshape(-1), shares.reshape(-1))
    return flat.reshape(batch_size, channels, height, width)


# ---- deform_conv2d ----------------------------------------------------------------------------

def deform_conv2d(input, weight, offset, mask, bias, stride_h: int, stride_w: int,  # noqa: A002
                  pad_h: int, pad_w: int, dilation_h: int, dilation_w: int, groups: int,
                  offset_groups: int, use_mask: bool):
    """torchvision's deformable convolution (v2 with a mask): input (N, C, H, W), weight
    (O, C / groups, KH, KW), offset (N, 2 * offset_groups * KH * KW, OH, OW) as (dy, dx)
    pairs per tap, mask (N, offset_groups * KH * KW, OH, OW)."""
    torch = _torch()
    batch, channels, height, width = input.shape
    out_channels, group_channels, kernel_h, kernel_w = weight.shape
    out_h = (height + 2 * pad_h - (dilation_h * (kernel_h - 1) + 1)) // stride_h + 1
    out_w = (width + 2 * pad_w - (dilation_w * (kernel_w - 1) + 1)) // stride_w + 1
    taps = kernel_h * kernel_w
    if channels != group_channels * groups or channels % offset_groups:
        raise RuntimeError(f"deform_conv2d: the input's {channels} channels do not match the "
                           f"weight's {group_channels} per group x {groups} groups, or are not "
                           f"divisible by {offset_groups} offset groups")
    if tuple(offset.shape) != (batch, 2 * offset_groups * taps, out_h, out_w):
        raise RuntimeError(f"deform_conv2d: offset of shape {list(offset.shape)}, expected "
                           f"{[batch, 2 * offset_groups * taps, out_h, out_w]}")
    # Sample positions (N, G, KH, KW, OH, OW): the tap's place plus its offset.
    shifts = offset.reshape(batch, offset_groups, kernel_h, kernel_w, 2, out_h, out_w)
    device = input.device
    rows = (torch.arange(out_h, device=device) * stride_h - pad_h).reshape(1, out_h) \
        + (torch.arange(kernel_h, device=device) * dilation_h).reshape(kernel_h, 1)
    columns = (torch.arange(out_w, device=device) * stride_w - pad_w).reshape(1, out_w) \
        + (torch.arange(kernel_w, device=device) * dilation_w).reshape(kernel_w, 1)
    y = rows.to(input.dtype).reshape(1, 1, kernel_h, 1, out_h, 1) + shifts[:, :, :, :, 0]
    x = columns.to(input.dtype).reshape(1, 1, 1, kernel_w, 1, out_w) + shifts[:, :, :, :, 1]
    inside = (y > -1) & (y < height) & (x > -1) & (x < width)
    y0, x0 = torch.floor(y.detach()), torch.floor(x.detach())
    ly, lx = y - y0, x - x0
    y0, x0 = y0.long(), x0.long()
    laid_out = input.reshape(batch, offset_groups, channels // offset_groups, height,
                             width).permute(0, 1, 3, 4, 2)  # (N, G, H, W, C / G)
    image = torch.arange(batch, device=device).reshape(batch, 1, 1, 1, 1, 1)
    group = torch.arange(offset_groups, device=device).reshape(1, offset_groups, 1, 1, 1, 1)
    sampled = 0
    for row, row_share in ((y0, 1 - ly), (y0 + 1, ly)):
        for column, column_share in ((x0, 1 - lx), (x0 + 1, lx)):
            valid = inside & (row >= 0) & (row < height) & (column >= 0) & (column < width)
            values = laid_out[image, group, row.clamp(0, height - 1),
                              column.clamp(0, width - 1)]
            share = torch.where(valid, row_share * column_share, torch.zeros_like(ly))
            sampled = sampled + values * share[..., None]
    if use_mask:
        sampled = sampled * mask.reshape(batch, offset_groups, kernel_h, kernel_w, out_h,
                                         out_w)[..., None]
    # columns (N, groups, C / groups * KH * KW, OH * OW), then the grouped product
    sampled = sampled.permute(0, 1, 6, 2, 3, 4, 5).reshape(
        batch, groups, group_channels * taps, out_h * out_w)
    kernel = weight.reshape(groups, out_channels // groups, group_channels * taps)
    output = torch.matmul(kernel, sampled).reshape(batch, out_channels, out_h, out_w)
    if bias is not None and bias.numel():
        output = output + bias.reshape(1, out_channels, 1, 1)
    return output


def deform_conv2d_backward(grad, input, weight, offset, mask, bias, stride_h: int,  # noqa: A002
                           stride_w: int, pad_h: int, pad_w: int, dilation_h: int,
                           dilation_w: int, groups: int, offset_groups: int, use_mask: bool):
    """(grad_input, grad_weight, grad_offset, grad_mask, grad_bias) of deform_conv2d."""
    torch = _torch()
    with torch.enable_grad():
        leaves = [value.detach().requires_grad_() for value in (input, weight, offset, mask,
                                                                  bias)]
        output = deform_conv2d(*leaves, stride_h, stride_w, pad_h, pad_w, dilation_h,
                               dilation_w, groups, offset_groups, use_mask)
        found = torch.autograd.grad(output, leaves, grad, allow_unused=True,
                                    create_graph=grad.requires_grad)
    return tuple(torch.zeros_like(leaf) if value is None else value
                 for leaf, value in zip(leaves, found))
