"""Masks: masked_scatter and masked_select (masked_fill is in indexing/__init__.py), and
nonzero_static, read from here (static_nonzero.py's).

`nonzero_static` is a primitive: the positions of the first `size` nonzero entries, padded
with `fill_value`, so its shape is known before the data is (torch.nonzero_static). It makes
masked_scatter a composite with a shape known while tracing, which compiles: the k-th True
position of the flattened mask receives source's k-th element through index_put, the unused
source elements go to one padding slot past the end (cut off afterwards), so index_put's VJP
gives torch's gradients (zero where written for x; for source, the gradient at its position,
or zero where unused). masked_select's result size depends on the data: it is a graph break
while tracing, as nonzero is.
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.dtypes import scalar_type_name
from ...tensor.state import state
from ...tensor.tensor import Tensor
from ..inplace import write_out
from ..layout import cat, expand, reshape, slice_dims
from ..limited_rules import COMPLEX32, refuse_limited
from ..shape_rules import broadcast_shapes
from . import _zeros, index_put, index_tensor, nonzero
from .static_nonzero import NONZERO_STATIC, _nonzero_static, nonzero_static  # noqa: F401

# ---- masked_scatter and masked_select ---------------------------------------------------------

def _check_mask(name: str, mask) -> None:
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        dtype = scalar_type_name(mask.dtype) if isinstance(mask, Tensor) else \
            type(mask).__name__
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{dtype}")


def _broadcast(name: str, x: Tensor, mask: Tensor) -> tuple:
    try:
        return broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    except ValueError as error:
        raise RuntimeError(str(error)) from None


def masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """x with the elements of `source`, in order, written where `mask` is True (mask and x
    broadcast together); source needs at least as many elements as mask has True entries."""
    refuse_limited("masked_scatter", x)
    _check_mask("masked_scatter_", mask)
    if source.dtype is not x.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{scalar_type_name(x.dtype)} and {scalar_type_name(source.dtype)}")
    shape = _broadcast("masked_scatter", x, mask)
    total = 1
    for extent in shape:
        total *= extent
    count = source.numel()
    # The position in x of source's k-th element: the k-th True of the mask, or the padding
    # slot at `total` for the elements no True position takes.
    positions = _nonzero_static(reshape(expand(mask, shape), -1), count, total,
                                "Number of elements of source < number of ones in mask")
    padded = cat([reshape(expand(x, shape), -1), _zeros((1,), x)])
    written = index_put(padded, reshape(source, -1), reshape(positions, 1, count), (0,))
    return reshape(slice_dims(written, [(0, total, 1)]), shape)


def masked_select(x: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """The elements of x where `mask` is True (x and mask broadcast together), as a 1-D tensor
    in C order. Its size depends on the data: while a compiled function is traced, nonzero
    takes the call's count, checked on every run (a split of the graph); make_graph breaks."""
    refuse_limited("masked_select", x, taken=COMPLEX32)
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast("masked_select", x, mask)
    if state.tracer is not None and not state.tracer.evaluates:
        from ...tensor.graph_break import graph_break

        graph_break("masked_select() (its result's size depends on the mask's values)",
                    needs_data=False)
    flat_mask = reshape(expand(mask, shape), -1)
    positions = reshape(nonzero(flat_mask), 1, -1)
    result = index_tensor(reshape(expand(x, shape), -1), positions, (0,))
    if out is None:
        return result
    return write_out(out, result, "masked_select", RuntimeError(
        "masked_select(): self and result must have the same scalar type"), inputs=(x, mask))
