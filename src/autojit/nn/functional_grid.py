"""Spatial transformer sampling for autojit.nn.functional, as composites: affine_grid (the
sampling grid of a batch of affine maps) and grid_sample (reading an input at the grid's
points, bilinear or nearest, with zeros, border or reflection padding).

grid_sample turns the grid's normalized coordinates into pixel positions with torch's rules,
pads them (border clamps; reflection folds them back into range, then clamps), and reads the
corners around each point by advanced indexing of the (N, H, W, C) input, so the gradient
with respect to the input is indexing's scatter-add and the one with respect to the grid flows
through the bilinear weights. Only 4-D inputs (N, C, H, W) are sampled.
"""

from __future__ import annotations

import warnings

from ..ops import elementwise as ew
from ..ops.layout import stack
from ..tensor import dtypes
from ..tensor.creation import arange, linspace, ones
from ..tensor.tensor import Tensor
from .functional_conv import _check_tensor

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


def _padded(coordinate: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    coordinate = _unnormalize(coordinate, size, align_corners)
    if padding_mode == "border":
        return coordinate.clamp(0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coordinate = _reflect(coordinate, 0, 2 * (size - 1))
        else:
            coordinate = _reflect(coordinate, -1, 2 * size - 1)
        return coordinate.clamp(0, size - 1)
    return coordinate


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """Sample (N, C, H, W) at the normalized points grid (N, Ho, Wo, 2), x then y, in [-1, 1]."""
    _check_tensor("grid_sample", "input", input)
    _check_tensor("grid_sample", "grid", grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not implemented yet")
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if input.ndim == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) inputs are not implemented yet")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or \
            grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions and batch size, and grid of shape (N, H, W, 2), but got "
                           f"input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    batch, _, height, width = input.shape
    x = _padded(grid[..., 0], width, padding_mode, align_corners)
    y = _padded(grid[..., 1], height, padding_mode, align_corners)
    values = input.permute(0, 2, 3, 1)  # (N, H, W, C): indexing gathers whole channel vectors
    samples = arange(batch, device=input.device).reshape(batch, 1, 1)

    def read(row: Tensor, column: Tensor) -> Tensor:
        """Input at integer (row, column), zero outside the input; (N, Ho, Wo, C)."""
        inside = (row >= 0) & (row <= height - 1) & (column >= 0) & (column <= width - 1)
        picked = values[samples, row.clamp(0, height - 1).to(dtypes.int64),
                        column.clamp(0, width - 1).to(dtypes.int64)]
        return picked * inside.to(input.dtype).unsqueeze(-1)

    if mode == "nearest":
        result = read(y.detach().round(), x.detach().round())
    else:
        left, top = x.detach().floor(), y.detach().floor()
        east, south = (x - left).unsqueeze(-1), (y - top).unsqueeze(-1)
        west, north = 1 - east, 1 - south
        result = (read(top, left) * north * west + read(top, left + 1) * north * east
                  + read(top + 1, left) * south * west + read(top + 1, left + 1) * south * east)
    return result.permute(0, 3, 1, 2)
