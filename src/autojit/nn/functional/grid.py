"""Spatial transformer sampling for autojit.nn.functional, as composites: affine_grid (the
sampling grid of a batch of affine maps) and grid_sample (reading an input at the grid's
points, bilinear (trilinear for volumes), nearest or bicubic, with zeros, border or reflection
padding).

grid_sample turns the grid's normalized coordinates into pixel positions with torch's rules,
pads them (border clamps; reflection folds them back into range, then clamps), and reads the
corners around each point by advanced indexing of the (N, H, W, C) input, so the gradient
with respect to the input is indexing's scatter-add and the one with respect to the grid flows
through the interpolation weights, to any order. 4-D (N, C, H, W) and 5-D (N, C, D, H, W)
inputs are sampled; bicubic reads 4 x 4 taps, each padded on its own, as torch's does.
"""

from __future__ import annotations

import itertools
import warnings

from ...ops import elementwise as ew
from ...ops.autocast import FP32, PROMOTE, autocast_op
from ...ops.layout import stack
from ...tensor import dtypes
from ...tensor.creation import arange, linspace, ones
from ...tensor.tensor import Tensor
from .conv import _check_tensor

_CUBIC_A = -0.75  # torch's cubic convolution coefficient
_DEFAULT_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                    "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                    "old behavior is desired. See the documentation of grid_sample for details.")


def _base_line(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    line = linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    if not align_corners and steps > 1:
        line = line * ((steps - 1) / steps)
    return line if steps > 1 else line * 0


def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    """The (N, H, W, 2) (or (N, D, H, W, 3)) sampling grid of the affine maps theta
    (N, 2, 3) (or (N, 3, 4)) for an output of `size` (N, C, H, W) (or (N, C, D, H, W))."""
    _check_tensor("affine_grid", "theta", theta)
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {list(size)}.")
    spatial = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape) != (size[0], spatial, spatial + 1):
        kind = "2D" if spatial == 2 else "3D"
        shape = "Nx2x3" if spatial == 2 else "Nx3x4"
        raise ValueError(f"Expected a batch of {kind} affine matrices of shape {shape} for size "
                         f"{list(size)}. Got {list(theta.shape)}.")
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    extents = size[2:]
    # Coordinates run x (the last dim) first, as torch's base grid does.
    lines = [_base_line(n, align_corners, theta) for n in reversed(extents)]
    columns = []
    for axis, line in enumerate(lines):
        shape = [1] * spatial
        shape[spatial - 1 - axis] = extents[spatial - 1 - axis]
        columns.append(line.reshape(*shape).expand(*extents))
    columns.append(ones(extents, dtype=theta.dtype, device=theta.device))
    count = 1
    for n in extents:
        count *= n
    base = stack(columns, -1).reshape(1, count, spatial + 1)
    grid = base.expand(size[0], count, spatial + 1) @ theta.transpose(1, 2)
    return grid.reshape(size[0], *extents, spatial)


def _unnormalize(coordinate: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coordinate + 1) * ((size - 1) / 2)
    return ((coordinate + 1) * size - 1) / 2


def _reflect(coordinate: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """torch's reflect_coordinates: fold into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return coordinate * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = ew.abs(coordinate - low)
    flips = (distance / span).floor()
    extra = distance - flips * span
    even = (flips - 2 * (flips / 2).floor()) == 0
    return ew.where(even, extra + low, span - extra + low)


def _bounded(coordinate: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A pixel position after padding: border clamps, reflection folds back into range."""
    if padding_mode == "border":
        return coordinate.clamp(0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coordinate = _reflect(coordinate, 0, 2 * (size - 1))
        else:
            coordinate = _reflect(coordinate, -1, 2 * size - 1)
        return coordinate.clamp(0, size - 1)
    return coordinate


def _cubic_weights(t: Tensor) -> tuple:
    """torch's cubic convolution weights (A = -0.75) of the four taps around fraction t."""
    a = _CUBIC_A

    def near(v):  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


@autocast_op(cpu=FP32, cuda=PROMOTE)
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """Sample (N, C, H, W) at the normalized points grid (N, Ho, Wo, 2), x then y, in [-1, 1]
    (or (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3), x, y then z)."""
    _check_tensor("grid_sample", "input", input)
    _check_tensor("grid_sample", "grid", grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    spatial = input.ndim - 2
    sizes_text = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes_text}")
    if grid.shape[-1] != spatial:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {spatial} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if grid.ndim != input.ndim or spatial not in (2, 3):
        kind = "4D" if input.ndim == 4 else "5D"
        raise RuntimeError(f"grid_sampler(): expected {kind} input and grid with same number of "
                           f"dimensions, but got {sizes_text}")
    if mode == "bicubic" and spatial != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    batch, sizes = input.shape[0], tuple(input.shape[2:])
    # The grid's last dim runs x (the input's last dim) first.
    positions = [_unnormalize(grid[..., spatial - 1 - d], sizes[d], align_corners)
                 for d in range(spatial)]
    values = input.movedim(1, -1)  # (N, *sizes, C): indexing gathers whole channel vectors
    samples = arange(batch, device=input.device).reshape(batch, *(1,) * spatial)

    def read(points) -> Tensor:
        """Input at integer positions (one per spatial dim), zero outside the input;
        (N, *out, C)."""
        inside = None
        for point, size in zip(points, sizes, strict=True):
            within = (point >= 0) & (point <= size - 1)
            inside = within if inside is None else inside & within
        picked = values[(samples, *(point.clamp(0, size - 1).to(dtypes.int64)
                                    for point, size in zip(points, sizes, strict=True)))]
        return picked * inside.to(input.dtype).unsqueeze(-1)

    if mode == "bicubic":
        # The sampling point is not padded; each of the 4 x 4 taps is (torch's
        # get_value_bounded), and fractions outside the input weight zeros or padded taps.
        y, x = positions
        top, left = y.detach().floor(), x.detach().floor()
        column_weights = _cubic_weights((x - left).unsqueeze(-1))
        row_weights = _cubic_weights((y - top).unsqueeze(-1))
        result = None
        for i, row_weight in enumerate(row_weights):
            row = _bounded(top + (i - 1), sizes[0], padding_mode, align_corners)
            line = None
            for j, column_weight in enumerate(column_weights):
                column = _bounded(left + (j - 1), sizes[1], padding_mode, align_corners)
                term = read((row, column)) * column_weight
                line = term if line is None else line + term
            result = line * row_weight if result is None else result + line * row_weight
        return result.movedim(-1, 1)
    positions = [_bounded(p, size, padding_mode, align_corners)
                 for p, size in zip(positions, sizes, strict=True)]
    if mode == "nearest":
        result = read([p.detach().round() for p in positions])
    else:
        lows = [p.detach().floor() for p in positions]
        fractions = [(p - low).unsqueeze(-1) for p, low in zip(positions, lows, strict=True)]
        result = None
        for corner in itertools.product((0, 1), repeat=spatial):
            weight = None
            for bit, fraction in zip(corner, fractions, strict=True):
                factor = fraction if bit else 1 - fraction
                weight = factor if weight is None else weight * factor
            term = read([low + bit for low, bit in zip(lows, corner, strict=True)]) * weight
            result = term if result is None else result + term
    return result.movedim(-1, 1)
