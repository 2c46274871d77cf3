"""Resampling for autojit.nn.functional, as composites of reshape and permute: pixel_shuffle,
pixel_unshuffle (rearranging channels into spatial blocks and back) and channel_shuffle. The
layers of nn/resampling.py call these; nn/functional/__init__.py re-exports them.
"""

from __future__ import annotations

from ...tensor.tensor import Tensor
from .conv import _check_tensor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r), r = upscale_factor."""
    _check_tensor("pixel_shuffle", "input", input)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got "
                           f"{upscale_factor}")
    r = upscale_factor
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{channels} is not divisible by {r * r}")
    lead = len(batch)
    x = input.reshape(*batch, channels // (r * r), r, r, height, width)
    order = [*range(lead), lead, lead + 3, lead + 1, lead + 4, lead + 2]
    return x.permute(*order).reshape(*batch, channels // (r * r), height * r, width * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W), r = downscale_factor: pixel_shuffle's inverse."""
    _check_tensor("pixel_unshuffle", "input", input)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got "
                           f"{downscale_factor}")
    r = downscale_factor
    *batch, channels, height, width = input.shape
    for name, size in (("height", height), ("width", width)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({-2 if name == 'height' else -1})"
                               f"={size} is not divisible by {r}")
    lead = len(batch)
    x = input.reshape(*batch, channels, height // r, r, width // r, r)
    order = [*range(lead), lead, lead + 2, lead + 4, lead + 1, lead + 3]
    return x.permute(*order).reshape(*batch, channels * r * r, height // r, width // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """Interleave the channels of (N, C, *) from `groups` groups: (g, C / g) -> (C / g, g)."""
    _check_tensor("channel_shuffle", "input", input)
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    batch, channels, *rest = input.shape
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} "
                           f"channels and {groups} groups.")
    x = input.reshape(batch, groups, channels // groups, *rest)
    return x.transpose(1, 2).reshape(batch, channels, *rest)
