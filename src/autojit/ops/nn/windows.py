"""Window reads and constant padding, the layout composites that convolution and pooling share.

`windows` reads, for each offset inside a kernel, one strided slice of the (padded) input: the
element at that offset for every output position at once (in row-major offset order).
nn.functional's convolutions stack the slices into the im2col matrix (nn/functional/conv.py),
pooling reduces over them (ops/nn/pooling.py, nn/functional/pooling.py). `constant_pad` pads with
`embed_slice` (zeros, the adjoint of slicing) or `cat` with constant blocks for other values;
nn.functional.pad (nn/functional/padding.py) adds torch's other padding modes. All of it is
slice, embed_slice, cat and full, so it differentiates and traces through their rules.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...tensor.creation import full
from ...tensor.tensor import Tensor, plain_tensor
from ..layout import cat, embed_slice, slice_dims
from ..layout.eager_views import direct_real_data


def constant_pad(input: Tensor, pad, value=None) -> Tensor:  # noqa: A002
    """Pad the last len(pad) // 2 dims with `value` (0 when None): pad = (last_left,
    last_right, previous_left, ...). Negative amounts crop. nn/functional/padding.py's `pad` is
    the public form, with the other modes."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    if pad.__class__ is tuple and (value is None or value.__class__ in (int, float) and
                                   value == 0):
        found = _eager_zero_pad(input, pad)
        if found is not None:
            return found
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    shape = tuple(input.shape)
    ndim = len(shape)
    if min(pad, default=0) >= 0:
        # Nothing cropped (the common case, taken without the general loop's checks): the
        # input placed at each dim's left amount.
        grown, placed = list(shape), [(0, n, 1) for n in shape]
        for index in range(len(pad) // 2):
            dim, left = ndim - 1 - index, pad[2 * index]
            grown[dim] = shape[dim] + left + pad[2 * index + 1]
            placed[dim] = (left, left + shape[dim], 1)
        return _padded(input, grown, placed, value)
    amounts = [(0, 0)] * ndim
    for index in range(len(pad) // 2):
        amounts[ndim - 1 - index] = (pad[2 * index], pad[2 * index + 1])
    crop, grown, placed = [], [], []
    for dim, (extent, (left, right)) in enumerate(zip(shape, amounts, strict=True)):
        start, stop = max(-left, 0), extent - max(-right, 0)
        if stop - start + max(left, 0) + max(right, 0) < 0 or stop < start:
            raise RuntimeError(f"The input size {extent}, plus negative padding {left} and "
                               f"{right} resulted in a negative output size, which is invalid. "
                               f"Check dimension {dim} of your input.")
        crop.append((start, stop, 1))
        inner = stop - start
        grown.append(inner + max(left, 0) + max(right, 0))
        placed.append((max(left, 0), max(left, 0) + inner, 1))
    return _padded(slice_dims(input, crop), grown, placed, value)


def _eager_zero_pad(x: Tensor, pad: tuple) -> Tensor | None:
    """Zero padding by non-negative int amounts made at once, as EMBED_SLICE's impl makes it,
    where no node is recorded (grad mode off or x not requiring grad), nothing traces and no
    VJP chain is recorded, and x's data is a NumPy array of a real dtype other than bfloat16
    (a random crop's padding in a data pipeline: the general path's checks and bind cost
    twice the copy); None for the general path, which raises torch's errors."""
    data = direct_real_data(x)
    if data is None:
        return None
    shape = data.shape
    ndim = len(shape)
    pairs = len(pad) // 2
    if len(pad) % 2 or pairs > ndim:
        return None
    grown, key = list(shape), [_ALL] * ndim
    for index in range(pairs):
        left, right = pad[2 * index], pad[2 * index + 1]
        if left.__class__ is not int or right.__class__ is not int or left < 0 or right < 0:
            return None
        dim = ndim - 1 - index
        extent = shape[dim]
        grown[dim] = extent + left + right
        key[dim] = slice(left, left + extent)
    if not any(pad):
        return x  # as _padded returns it
    out = np.zeros(grown, dtype=data.dtype)
    out[tuple(key)] = data
    return plain_tensor(out, x._dtype)


_ALL = slice(None)


def _padded(x: Tensor, grown: list, placed: list, value) -> Tensor:
    """x placed at `placed` in a tensor of shape `grown` filled with `value` (0 when None)."""
    if tuple(grown) == tuple(x.shape):
        return x
    fill = 0 if value is None else value
    if fill == 0:
        return embed_slice(x, tuple(grown), placed)
    # A non-zero fill: constant blocks concatenated on each padded dim in turn.
    for dim, (start, stop, _) in enumerate(placed):
        before, after = start, grown[dim] - stop
        if not before and not after:
            continue
        pieces = []
        for extent in (before, None, after):
            if extent is None:
                pieces.append(x)
            elif extent:
                block_shape = list(x.shape)
                block_shape[dim] = extent
                pieces.append(full(tuple(block_shape), fill, dtype=x.dtype, device=x.device))
        x = cat(pieces, dim)
    return x


def pad_spatial(x: Tensor, amounts, value=None) -> Tensor:
    """x padded on its trailing spatial dims by (left, right) per dim, in dim order."""
    flat = []
    for left, right in reversed(amounts):
        flat.extend((left, right))
    if not any(flat):
        return x
    return constant_pad(x, flat, value)


def windows(x: Tensor, kernel, stride, dilation, out_sizes) -> list:
    """One (N, C, *out_sizes) slice of x per kernel offset, offsets in row-major order."""
    leading = [(0, n, 1) for n in x.shape[:2]]
    pieces = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        slices = list(leading)
        for o, s, d, out in zip(offset, stride, dilation, out_sizes, strict=True):
            slices.append((o * d, o * d + s * (out - 1) + 1, s))
        pieces.append(slice_dims(x, slices))
    return pieces
