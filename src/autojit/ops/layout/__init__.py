"""Layout primitives: reshape, expand, permute, slice (and its adjoint embed_slice), flip, cat.

This package holds the layout family: the primitives (primitives.py), the composites written from
them (composites.py, joining.py, splitting.py, diagonal.py, triangular.py, dtype_views.py), how
a kernel reads them without copying (folds.py), and the eager views without the dispatch
(eager_views.py). It sits on the registry (ops/registry.py), below the other op families.

These move or select elements without arithmetic, so each is linear and its JVP is the op itself
on the tangent (`linear_jvp`; cat's joins the inputs' tangents). Eagerly they return NumPy views
where NumPy can (the result then shares the input's version counter, as torch views do).
Composites built from them (view, flatten, squeeze, unsqueeze, transpose, stack, split, chunk,
select) are in composites.py, re-exported here. The stride rules of the lowerings are in
folds.py; eager_views.py makes the views of reshape and its forms, and cat and stack,
without the general dispatch where no autograd node is needed, and the pieces of split, chunk
and narrow, with their nodes, where nothing traces or records specially.
"""

from .composites import (  # noqa: F401 - read from here by their importers
    chunk,
    chunk_sections,
    expand_as,
    flatten,
    full_transpose,
    matrix_transpose,
    moveaxis,
    movedim,
    repeat,
    reshape_as,
    select,
    split,
    split_pieces,
    squeeze,
    stack,
    swapaxes,
    swapdims,
    t,
    tile,
    tile_method,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
    view,
    view_as,
)
from .primitives import (  # noqa: F401 - read from here by their importers
    CAT,
    EMBED_SLICE,
    EXPAND,
    FLIP,
    PERMUTE,
    RESHAPE,
    SLICE,
    _narrow,
    _pieces,
    broadcast_to,
    cat,
    contiguous_strides,
    embed_slice,
    expand,
    expand_rule,
    flip,
    infer_shape,
    linear_jvp,
    narrow,
    permute,
    reshape,
    slice_dims,
    slice_length,
)
