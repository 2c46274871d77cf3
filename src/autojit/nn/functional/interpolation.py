"""interpolate for autojit.nn.functional: resizing the spatial dims of (N, C, *) in the modes
nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area and lanczos, as composites.

Each spatial dim is resized in turn. The source positions and weights depend on the sizes
alone, so they are computed here in NumPy with torch's rules (a scale_factor given and not
recomputed sets the coordinate scale; otherwise input / output size; align_corners maps the
corner centres onto each other): nearest modes are one `index_select` per dim, linear modes
two (bicubic four, torch's cubic convolution with A = -0.75, edges clamped), blended by the
weights. Area mode is adaptive average pooling. The gradients are those of index_select (a
scatter-add), to any order; nn/resampling.py's Upsample layers call this.

With antialias=True (bilinear, bicubic and lanczos, which needs it; 4-D input) each output pixel
averages every input pixel under the filter stretched by the downsampling factor (torch's and
PIL's separable filters: the triangle, the cubic with A = -0.5, and Lanczos' windowed sinc of
3 lobes), its weights normalized to sum to one; the weights of a dim form an (out, in) matrix
that the dim is multiplied by.

upsample, upsample_nearest and upsample_bilinear are interpolate under torch's deprecated names,
with its warning.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...ops.indexing import index_select
from ...ops.registry import share_node
from ...tensor import dtypes
from ...tensor.creation import tensor
from ...tensor.tensor import Tensor
from .conv import _check_tensor
from .pooling_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
)

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area",
          "lanczos")
_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75  # torch's cubic convolution coefficient
_ANTIALIAS_CUBIC_A = -0.5  # the antialiasing cubic filter's, PIL's
_LANCZOS_LOBES = 3  # PIL's and torch's Lanczos window: sinc(x) sinc(x / 3) for |x| < 3
_AREA = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}


def _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, spatial):  # noqa: A002
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    sizes = tuple(input.shape[2:])
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != spatial:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(sizes)} and output size of {list(size)}. Please provide "
                                 f"input tensor in (N, C, d1, d2, ...,dK) format and output size "
                                 f"in (o1, o2, ...,oK) format.")
            out = tuple(int(s) for s in size)
        else:
            out = (int(size),) * spatial
        return out, (None,) * spatial
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != spatial:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(sizes)} and scale_factor of shape {list(scale_factor)}. "
                             f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"scale_factor in (s1, s2, ...,sK) format.")
        scales = tuple(float(s) for s in scale_factor)
    else:
        scales = (float(scale_factor),) * spatial
    out = tuple(int(math.floor(n * s)) for n, s in zip(sizes, scales, strict=True))
    if recompute_scale_factor:
        return out, (None,) * spatial
    return out, scales


def _coordinate_scale(n: int, o: int, scale, align_corners: bool) -> float:
    """torch's area_pixel_compute_scale: output position times this is the input position."""
    if align_corners:
        return (n - 1) / (o - 1) if o > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n / o


def _index(positions: np.ndarray, device) -> Tensor:
    return tensor(positions.astype(np.int64), dtype=dtypes.int64, device=device)


def _resize_dim(x: Tensor, dim: int, o: int, scale, mode: str, align_corners: bool) -> Tensor:
    # The source positions are NumPy arrays: a symbolic extent (a dynamic trace) specializes.
    n = int(x.shape[dim])
    if o == n and (mode in ("linear", "bilinear", "trilinear") or
                   mode == "nearest" and x.ndim == 4):
        # torch's linear kernels, and its 2-D nearest one, copy a dim whose size is kept,
        # whatever the scale factor says (its 1-D and 3-D nearest kernels resample it).
        return x
    destination = np.arange(o, dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        step = np.float32(_coordinate_scale(n, o, scale, False))  # torch computes in float
        shift = np.float32(0.5 if mode == "nearest-exact" else 0.0)
        source = np.floor((destination.astype(np.float32) + shift) * step).astype(np.int64)
        return index_select(x, dim, _index(np.minimum(source, n - 1), x.device))
    step = _coordinate_scale(n, o, scale, align_corners)
    if mode == "bicubic":
        return _cubic_dim(x, dim, destination, step, align_corners)
    if align_corners:
        source = destination * step
    else:
        source = np.maximum(step * (destination + 0.5) - 0.5, 0.0)
    low = np.minimum(np.floor(source).astype(np.int64), n - 1)
    high = np.minimum(low + 1, n - 1)
    weight = (source - low).reshape((o,) + (1,) * (x.ndim - 1 - dim))
    weight = tensor(weight, dtype=x.dtype, device=x.device)
    below = index_select(x, dim, _index(low, x.device))
    above = index_select(x, dim, _index(high, x.device))
    return below * (1 - weight) + above * weight


def _cubic_dim(x: Tensor, dim: int, destination: np.ndarray, step: float,
               align_corners: bool) -> Tensor:
    """Cubic convolution along `dim`: four taps around each source position (clamped to the
    edge), weighted by torch's coefficients (A = -0.75)."""
    n, o = int(x.shape[dim]), destination.shape[0]
    source = destination * step if align_corners else step * (destination + 0.5) - 0.5
    first = np.floor(source)
    t = source - first

    def near(v):  # |v| <= 1
        return ((_CUBIC_A + 2) * v - (_CUBIC_A + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2
        return ((_CUBIC_A * v - 5 * _CUBIC_A) * v + 8 * _CUBIC_A) * v - 4 * _CUBIC_A

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    result = None
    for offset, weight in zip((-1, 0, 1, 2), weights, strict=True):
        positions = np.clip(first.astype(np.int64) + offset, 0, n - 1)
        term = index_select(x, dim, _index(positions, x.device)) * tensor(
            weight.reshape((o,) + (1,) * (x.ndim - 1 - dim)), dtype=x.dtype, device=x.device)
        result = term if result is None else result + term
    return result


def _triangle(v: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(v), 0.0)


def _antialias_cubic(v: np.ndarray) -> np.ndarray:
    a, v = _ANTIALIAS_CUBIC_A, np.abs(v)
    near = ((a + 2) * v - (a + 3)) * v * v + 1
    far = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return np.where(v < 1.0, near, np.where(v < 2.0, far, 0.0))


def _lanczos(v: np.ndarray) -> np.ndarray:
    return np.where(np.abs(v) < _LANCZOS_LOBES, np.sinc(v) * np.sinc(v / _LANCZOS_LOBES), 0.0)


_ANTIALIAS_FILTERS = {"bilinear": (2, _triangle), "bicubic": (4, _antialias_cubic),
                      "lanczos": (2 * _LANCZOS_LOBES, _lanczos)}


def _antialias_dim(x: Tensor, dim: int, o: int, scale, mode: str, align_corners: bool) -> Tensor:
    """Resize `dim` with torch's antialiasing weights (_compute_weights_aa): the filter's
    support grows with the downsampling factor and each row of weights sums to one."""
    n = int(x.shape[dim])
    step = _coordinate_scale(n, o, scale, align_corners)
    taps, kernel = _ANTIALIAS_FILTERS[mode]
    support = taps * 0.5 * step if step >= 1.0 else taps * 0.5
    stretch = 1.0 / step if step >= 1.0 else 1.0
    weights = np.zeros((o, n))
    for i in range(o):
        center = step * (i + 0.5)
        # torch truncates toward zero here (a C++ cast), which differs from floor below 0.
        low = max(int(center - support + 0.5), 0)
        high = min(int(center + support + 0.5), n)
        row = kernel((np.arange(low, high) - center + 0.5) * stretch)
        total = row.sum()
        weights[i, low:high] = row / total if total != 0.0 else row
    matrix = tensor(weights.T, dtype=x.dtype, device=x.device)
    return (x.movedim(dim, -1) @ matrix).movedim(-1, dim)


def antialiased(input: Tensor, sizes, scales, mode: str,  # noqa: A002 - torch's names
                align_corners: bool) -> Tensor:
    """(N, C, *) resized to the spatial `sizes` with the antialiasing filter of `mode`, each
    dim's coordinate scale 1 / its entry of `scales` where one is given (and align_corners is
    not), else its input size / its output size: interpolate's antialias=True, and aten's
    _upsample_bilinear2d_aa, whose scales may disagree with its sizes."""
    result = input
    for d, (size, scale) in enumerate(zip(sizes, scales, strict=True)):
        result = _antialias_dim(result, 2 + d, int(size), scale, mode, align_corners)
    return result


def _unsupported(input: Tensor, mode: str) -> NotImplementedError:  # noqa: A002
    return NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                               f"{input.ndim}D) for the modes: nearest | linear | bilinear | "
                               f"bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *) to `size`, or by `scale_factor`, in `mode`."""
    _check_tensor("interpolate", "input", input)
    if mode not in _MODES:
        raise _unsupported(input, mode)
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    spatial = input.ndim - 2
    if spatial not in (1, 2, 3):
        raise _unsupported(input, mode)
    out, scales = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, spatial)
    if antialias and (mode not in _ANTIALIAS_FILTERS or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if mode == "lanczos":
        if input.ndim != 4:
            raise _unsupported(input, mode)
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in _LINEAR_DIMS and _LINEAR_DIMS[mode] != spatial:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_DIMS[mode] + 2}D input")
    if mode == "area":
        return _AREA[spatial](input, out)
    if antialias:
        result = antialiased(input, out, scales, mode, bool(align_corners))
    else:
        result = input
        for d in range(spatial):
            result = _resize_dim(result, 2 + d, out[d], scales[d], mode, bool(align_corners))
        if result is input:  # every size kept: a new tensor all the same, as torch's
            result = input.clone()
    return _torch_node(result, input, mode, antialias, out, scales, align_corners)


# torch's upsampling ops (node name prefixes), by mode
_NODE_NAMES = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact",
               "linear": "UpsampleLinear", "bilinear": "UpsampleBilinear",
               "trilinear": "UpsampleTrilinear", "bicubic": "UpsampleBicubic"}
_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"),
                3: ("scales_d", "scales_h", "scales_w")}


def _torch_node(result: Tensor, input: Tensor, mode: str, antialias: bool,  # noqa: A002
                out: tuple, scales: tuple, align_corners) -> Tensor:
    """The resized tensor with the one node torch's upsampling op gives it
    (UpsampleLinear1DBackward0, UpsampleBilinear2DAaBackward0, ...) and what that node
    shows: the output size, the scales given (None where the sizes set them), align_corners
    in the interpolating modes and the input's sizes."""
    prefix = _NODE_NAMES.get(mode)
    if prefix is None or result.grad_fn is None:
        return result
    spatial = len(out)
    name = f"{prefix}{spatial}DBackward0"
    if antialias:
        name = f"{prefix}{spatial}DAaBackward0"
    sizes = tuple(input.shape)

    def saved():  # (read when asked: no size is read while a function is traced)
        values = {"output_size": tuple(int(size) for size in out),
                  "self_sym_sizes": tuple(int(size) for size in sizes)}
        values.update(zip(_SCALE_NAMES[spatial], scales, strict=True))
        if mode not in ("nearest", "nearest-exact"):
            values["align_corners"] = bool(align_corners)
        return values

    return share_node((result,), (input,), name, saved)[0]


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
             align_corners=None) -> Tensor:
    """interpolate under its older name (deprecated in torch, which warns as here)."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """interpolate in mode nearest (deprecated in torch, which warns as here)."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """interpolate in mode bilinear with align_corners=True (deprecated in torch, which warns
    as here)."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
