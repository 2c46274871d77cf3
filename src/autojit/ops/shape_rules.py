"""Shape rules several families share, and the shape questions bind asks of any op.

broadcast_shapes (the elementwise ops' shape rule, and any op's that broadcasts its operands),
the reduction dims as torch reads them (normalize_dims, reduced_shape), and, for the registry's
dispatch and the IR verifier, an op's output shape from its inputs' (`infer`) and the error
that names the op and its input shapes when an impl fails (`shape_error`). registry.py
re-exports broadcast_shapes, input_shapes, infer and shape_error.
"""

from __future__ import annotations

from ..tensor.tensor import Tensor, normalize_dim


def input_shapes(inputs) -> list[tuple]:
    return [tuple(x.shape) if isinstance(x, Tensor) else () for x in inputs]


def infer(op, inputs: tuple, attrs: dict):
    """Output shape and dtype without running the op (used by tracing and the verifier)."""
    try:
        shape = op.shape(*input_shapes(inputs), **attrs)
    except ValueError as error:
        raise RuntimeError(f"{op.name}: {error}") from None
    return tuple(shape), op.dtype(inputs, attrs)[1]


def shape_error(op, inputs: tuple, attrs: dict, error: Exception) -> Exception:
    """Turn a NumPy failure into an error naming the op and the input shapes."""
    if any(isinstance(x, Tensor) and x._payload is None for x in inputs):
        return RuntimeError(
            f"{op.name}: an input is a symbolic tensor left over from a trace that ended (a "
            "compiled function's trace stopped at a graph break, or a tensor made while "
            "tracing was kept in a list or attribute); such tensors have no data outside "
            "their trace")
    shapes = ", ".join(str(list(s)) for s in input_shapes(inputs))
    try:
        op.shape(*input_shapes(inputs), **attrs)
    except ValueError as rule_error:
        return RuntimeError(f"{op.name}: {rule_error} (input shapes {shapes})")
    return RuntimeError(f"{op.name} failed on input shapes {shapes}: {error}")


def broadcast_shapes(*shapes) -> tuple:
    """NumPy/torch broadcasting, with torch's message when two extents disagree."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for position, shape in enumerate(shapes):
        offset = ndim - len(shape)
        for axis, extent in enumerate(shape):
            current = result[offset + axis]
            if current == 1:
                result[offset + axis] = extent
            elif extent != 1 and extent != current:
                dim = offset + axis
                other = next(i for i, s in enumerate(shapes[:position])
                             if 0 <= dim - ndim + len(s) and s[dim - ndim + len(s)] == current)
                names = "abcdefgh"
                raise ValueError(
                    f"The size of tensor {names[other]} ({current}) must match the size of "
                    f"tensor {names[position]} ({extent}) at non-singleton dimension {dim}")
    return tuple(result)


def broadcast_with_attrs(*shapes, **attrs) -> tuple:
    """broadcast_shapes for an elementwise op with attributes (a threshold, a slope), which a
    shape rule is handed and broadcasting ignores."""
    return broadcast_shapes(*shapes)


def normalize_dims(dim, ndim: int) -> tuple:
    """dim as given by a user (None, int, tuple or list) as a sorted tuple of axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        # torch reads an empty dim list as "all dims", like None.
        return tuple(range(ndim))
    if ndim == 0:
        # A 0-d tensor accepts dim 0 or -1 (and lists of them) and has nothing to reduce.
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            normalize_dim(int(d), 0)
        return ()
    if isinstance(dim, (tuple, list)):
        axes = [normalize_dim(int(d), ndim) for d in dim]
        for position, axis in enumerate(axes):
            if axis in axes[:position]:  # torch names the first axis given twice
                raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
        return tuple(sorted(axes))
    return (normalize_dim(int(dim), ndim),)


def reduced_shape(shape, dim, keepdim) -> tuple:
    """`shape` with the axes `dim` removed, or kept as 1 with `keepdim`."""
    if keepdim:
        return tuple(1 if axis in dim else extent for axis, extent in enumerate(shape))
    return tuple(extent for axis, extent in enumerate(shape) if axis not in dim)
