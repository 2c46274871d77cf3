"""How a kernel reads a layout primitive's output without materializing it: the stride rules
of the Layout lowerings of layout/__init__.py (reshape, permute, broadcast, slice).

Each rule takes the source's shape and element strides (as a kernel would read it) and gives
the strides of the op's output over the same memory, or None where strides cannot say it; a
slice's `start` rule gives the element its output begins at. Codegen reads them through the
op's `Layout` descriptor (ops/lowering.py), never by the op's name.
"""

from __future__ import annotations


def contiguous_strides(shape: tuple) -> tuple:
    """Element strides of a C-contiguous array of `shape`."""
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(running)
        running *= extent
    return tuple(reversed(strides))


def fold_reshape(shape, strides, output_shape, attrs):
    """The strides of the reshaped view where its source's memory allows one without a copy,
    as NumPy's reshape finds them: each run of the output's dims whose extents multiply to a
    run of the source's must lie over source dims that are contiguous with each other (a
    slice of rows, or of whole matrices, reshapes; a transpose does not)."""
    if tuple(strides) == contiguous_strides(shape):
        return contiguous_strides(output_shape)
    if 0 in shape or 0 in output_shape:
        return contiguous_strides(output_shape)
    old = [(extent, stride) for extent, stride in zip(shape, strides) if extent != 1]
    new = list(output_shape)
    result = [0] * len(new)
    old_at = new_at = 0
    while old_at < len(old) and new_at < len(new):
        old_end, new_end = old_at + 1, new_at + 1
        old_size, new_size = old[old_at][0], new[new_at]
        while old_size != new_size:
            if new_size < old_size:
                new_size *= new[new_end]
                new_end += 1
            else:
                old_size *= old[old_end][0]
                old_end += 1
        if any(old[axis][1] != old[axis + 1][0] * old[axis + 1][1]
               for axis in range(old_at, old_end - 1)):
            return None
        result[new_end - 1] = old[old_end - 1][1]
        for axis in range(new_end - 1, new_at, -1):
            result[axis - 1] = result[axis] * new[axis]
        old_at, new_at = old_end, new_end
    return tuple(result)


def fold_permute(shape, strides, output_shape, attrs):
    return tuple(strides[d] for d in attrs["dims"])


def fold_expand(shape, strides, output_shape, attrs):
    offset = len(output_shape) - len(shape)
    return (0,) * offset + tuple(
        0 if extent == 1 and output_shape[offset + axis] != 1 else stride
        for axis, (extent, stride) in enumerate(zip(shape, strides)))


def fold_slice(shape, strides, output_shape, attrs):
    steps = [step for _, _, step in attrs["slices"]]
    if not all(isinstance(step, int) for step in steps):
        return None
    return tuple(stride * step for stride, step in zip(strides, steps))


def slice_start(shape, strides, attrs):
    starts = [start for start, _, _ in attrs["slices"]]
    if not all(isinstance(start, int) for start in starts):
        return None
    return sum(start * stride for start, stride, extent in zip(starts, strides, shape)
               if extent)
