"""Padding for autojit.nn.functional: `pad` in torch's four modes, written as composites.

Constant padding is conv.py's (zero padding is `embed_slice`, the adjoint of
slicing; other values concatenate constant blocks). Reflect, replicate and circular padding
map every output position along a padded dim to an input position. That index map is computed
here in NumPy, from the sizes alone, and cut into runs that layout ops can read: an ascending
run is a slice (the input's interior, and circular's wrapped borders), a constant run is a
one-element slice expanded (replicate's borders), and a descending run (reflect's borders) is
a small gather. The runs are concatenated along the dim, so the gradient of the interior flows
through slices and only the borders go through an index op. The layers of nn/padding.py and
the `padding_mode` of the convolutions call this.
"""

from __future__ import annotations

import numpy as np

from ...ops.autocast import FP32, autocast_op
from ...ops.indexing import index_tensor
from ...ops.layout import cat, slice_dims
from ...ops.nn.windows import constant_pad
from ...tensor import dtypes
from ...tensor.creation import tensor
from ...tensor.tensor import Tensor
from .conv import _check_tensor

_MODES = ("constant", "reflect", "replicate", "circular")
_DIM_NAMES = ("D", "H", "W")


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:  # noqa: A002
    """Pad the last len(pad) // 2 dims: pad = (last_left, last_right, previous_left, ...).

    mode: 'constant' (with `value`, any number of dims), 'reflect', 'replicate' or 'circular'
    (the last 1, 2 or 3 dims of a batched or unbatched input). Negative amounts crop.
    """
    _check_tensor("pad", "input", input)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return constant_pad(input, pad, value)
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    spatial = len(pad) // 2
    if spatial not in (1, 2, 3) or input.ndim not in (spatial + 1, spatial + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    first = input.ndim - spatial
    amounts = [(pad[2 * (spatial - 1 - i)], pad[2 * (spatial - 1 - i) + 1])
               for i in range(spatial)]
    sizes = tuple(input.shape[first:])
    if mode == "circular":
        _check_circular(input, sizes, amounts)
    else:
        _check_reflect_or_replicate(input, mode, spatial, sizes, amounts)
    # torch's reflection (1 and 2 dims) and replication kernels run in float32 under autocast
    # on the CPU; circular padding and 3-d reflection run as they are, one kernel each.
    in_float32 = mode == "replicate" or mode == "reflect" and spatial < 3
    return (_pad_dims_float32 if in_float32 else _pad_dims_as_is)(input, first, amounts, mode)


def _pad_dims(x: Tensor, first: int, amounts: list, mode: str) -> Tensor:
    for i, (left, right) in enumerate(amounts):
        x = _pad_dim(x, first + i, left, right, mode)
    return x


_pad_dims_float32 = autocast_op(cpu=FP32)(_pad_dims)
_pad_dims_as_is = autocast_op()(_pad_dims)


def _check_reflect_or_replicate(input, mode, spatial, sizes, amounts) -> None:  # noqa: A002
    if input.dtype is dtypes.bool_:
        kind = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kind}_pad{spatial}d" not implemented for \'Bool\'')
    if any(n == 0 for n in input.shape[1:]):
        raise RuntimeError(f"Expected {spatial + 1}D or {spatial + 2}D (batch mode) tensor with "
                           "possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(input.shape)}")
    if mode == "reflect":
        for i, (n, (left, right)) in enumerate(zip(sizes, amounts, strict=True)):
            if left >= n or right >= n:
                argument = 4 + 2 * (spatial - 1 - i)
                raise RuntimeError(f"Argument #{argument}: Padding size should be less than the "
                                   "corresponding input dimension, but got: padding "
                                   f"({left}, {right}) at dimension {input.ndim - spatial + i} "
                                   f"of input {list(input.shape)}")
    outputs = [n + left + right for n, (left, right) in zip(sizes, amounts, strict=True)]
    if any(o < 1 for o in outputs):
        names = _DIM_NAMES[3 - spatial:]
        given = ", ".join(f"{name}: {n}" for name, n in zip(names, sizes, strict=True))
        calculated = " ".join(f"{name}: {o}" for name, o in zip(names, outputs, strict=True))
        raise RuntimeError(f"input ({given}) is too small. Calculated output {calculated}")


def _check_circular(input, sizes, amounts) -> None:  # noqa: A002
    for n, (left, right) in zip(sizes, amounts, strict=True):
        cropped = n + min(left, 0) + min(right, 0)
        if left > n or right > n or (cropped < max(left, right, 0) and cropped > 0):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + left + right < 0 or (cropped <= 0 < max(left, right)):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")


def _source_positions(n: int, left: int, right: int, mode: str) -> np.ndarray:
    """The input position each output position reads along one dim."""
    if mode == "circular":
        # Negative amounts crop first; the wrap then reads the cropped extent (torch's order).
        start, stop = max(-left, 0), n - max(-right, 0)
        kept = stop - start
        offsets = np.arange(-max(left, 0), kept + max(right, 0))
        return start + np.mod(offsets, kept) if kept else offsets[:0]
    positions = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    return (n - 1) - np.abs((n - 1) - np.abs(positions))  # reflect, without the edge


def _pad_dim(x: Tensor, dim: int, left: int, right: int, mode: str) -> Tensor:
    n = x.shape[dim]
    if left == 0 and right == 0:
        return x
    positions = _source_positions(n, left, right, mode)
    pieces = [_read_run(x, dim, run) for run in _runs(positions)]
    if not pieces:
        return slice_dims(x, [(0, e, 1) if d != dim else (0, 0, 1)
                              for d, e in enumerate(x.shape)])
    return pieces[0] if len(pieces) == 1 else cat(pieces, dim)


def _runs(positions: np.ndarray) -> list:
    """Split an index map into maximal runs of one step: +1 (a slice), 0 (a repeated element)
    or anything else (read by a gather)."""
    runs, begin = [], 0
    while begin < len(positions):
        end = begin + 1
        if end < len(positions):
            step = int(positions[end] - positions[begin])
            while end < len(positions) and positions[end] - positions[end - 1] == step:
                end += 1
        runs.append(positions[begin:end])
        begin = end
    return runs


def _read_run(x: Tensor, dim: int, run: np.ndarray) -> Tensor:
    whole = [(0, e, 1) for e in x.shape]
    step = int(run[1] - run[0]) if len(run) > 1 else 1
    if step in (0, 1):
        whole[dim] = (int(run[0]), int(run[0]) + (1 if step == 0 else len(run)), 1)
        piece = slice_dims(x, whole)
        if step == 0 and len(run) > 1:
            shape = list(x.shape)
            shape[dim] = len(run)
            piece = piece.expand(*shape)
        return piece
    return index_tensor(x, tensor(run.reshape(1, -1), dtype=dtypes.int64, device=x.device),
                        (dim,))
