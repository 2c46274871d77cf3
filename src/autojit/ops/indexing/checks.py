"""Index checks: torch's error for an index out of range, eagerly and in compiled code.

Every op that reads or writes at positions an index tensor gives (gather, scatter_add,
index_select and embedding, x[index] and x[index] = value, the class targets of nll_loss and
cross_entropy) passes the index through `check_index` first, and reads the index it returns.

`check_index` is a primitive: elementwise, its value the index itself, so every op that reads
the index runs after it and dead-code elimination keeps it.

- Eagerly its NumPy impl checks the index's minimum and maximum against the range, and only
  when they fail finds the first offending entry for the message. On a GPU the eager op is a
  one-step kernel like any elementwise op's; cuda/eager.py raises the error its check reports
  by running the impl on the host.
- A compiled kernel evaluates it as one unsigned comparison per entry (`(i - low) >=
  (size - low)`) and reports a failure through its error code; the plan then runs the graph
  through the reference interpreter, where the NumPy impl raises eager's exact error (its
  message names the first offending entry, which the kernel does not keep), before any side
  effect is written back.

The forms are torch's messages, which depend on the op (and for index_select, on the dim).
Codegen reads only the attributes `wrap` (negative indices count from the end) and `ignore`
(one value always allowed: nll_loss's ignore_index). See docs/notes/errors-in-kernels.md.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..registry import NOT_DIFFERENTIABLE, Elementwise, OpError, bind, define_op
from ..shape_rules import broadcast_shapes

# form -> (exception type, message); {value} is the first offending index, {dim} and {size}
# the dimension and its extent.
FORMS = {
    "index": (IndexError, "index {value} is out of bounds for dimension {dim} with size {size}"),
    "gather": (RuntimeError,
               "index {value} is out of bounds for dimension {dim} with size {size}"),
    "select": (IndexError, "index out of range in self"),
    # index_select along dim 1 of a tensor of two or more dims takes another path in torch.
    "select_inner": (RuntimeError,
                     "INDICES element is out of DATA bounds, id={value} axis_dim={size}"),
    "target": (IndexError, "Target {value} is out of bounds."),
    # multi_margin_loss's class targets, and multilabel_margin_loss's (-1 ends a sample's list).
    "margin_target": (RuntimeError, "target out of range"),
    "multilabel_target": (RuntimeError, "argument #2 'target' is out of range"),
    # The checks of random ops' tensor arguments (ops/random/__init__.py): the index is 1 where an
    # element is invalid, checked against a size of 1.
    "probability": (RuntimeError, "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    "std": (RuntimeError, "normal expects all elements of std >= 0.0"),
    # index_copy and take/put name themselves (ops/indexing/update.py).
    "index_copy": (IndexError,
                   "index_copy_(): index {value} is out of bounds for dimension {dim} with size "
                   "{size}"),
    "take": (IndexError, "out of range: tried to access index {value} on a tensor of {size} "
                         "elements."),
    # segment_reduce's checks of its segments (ops/aten_entry_points.py), as the random ops':
    # the index is 1 where a segment (or a row of lengths) is invalid, checked against 1.
    "segment_negative": (RuntimeError, "lengths contains negative value!"),
    "segment_sum": (RuntimeError, "segment_reduce(): Expected all rows of lengths along axis "
                                  "to sum to data.size(lengths.dim()-1) when !unsafe."),
    "segment_length": (RuntimeError, "Expected segment_length >= 0 to be true, but got false.  "
                                     "(Could this error message be improved?  If so, please "
                                     "report an enhancement request to PyTorch.)"),
}


def _out_of_range(index: np.ndarray, size, wrap: bool, ignore) -> np.ndarray:
    """Where `index` falls outside [-size, size) (wrap) or [0, size), `ignore` aside."""
    low = -size if wrap else 0
    bad = (index < low) | (index >= size)
    if ignore is not None:
        bad &= index != ignore
    return bad


def index_error(index: np.ndarray, size, form: str, dim: int, wrap: bool, ignore):
    """torch's error for the first offending entry of `index`, or None when all are in range.

    `size` is an int, or (for x[i_1, ..., i_k]) an array of per-row extents broadcasting
    against the stacked rows `index` (k, ...): then entries are taken position by position,
    and within a position row by row, as torch reports them, and {dim} is the row.
    """
    bad = _out_of_range(index, size, wrap, ignore)
    if not bad.any():
        return None
    if isinstance(size, np.ndarray):
        rows = index.shape[0]
        first = int(np.argmax(np.moveaxis(bad, 0, -1).reshape(-1)))
        position, row = divmod(first, rows)
        value = np.moveaxis(index, 0, -1).reshape(-1, rows)[position, row]
        size = int(np.broadcast_to(size, index.shape)[(row,) + (0,) * (index.ndim - 1)])
        dim = dim + row
    else:
        value = index.reshape(-1)[int(np.argmax(bad.reshape(-1)))]
    error, message = FORMS[form]
    return error(message.format(value=int(value), dim=dim, size=int(size)))


def _impl(index, size, form, dim, wrap, ignore):
    # The minimum and maximum first: the common, passing case costs two reads of the index.
    if index.size and isinstance(size, int):  # an ignored value may lie outside the range
        low = -size if wrap else 0
        if low <= int(index.min()) and int(index.max()) < size:
            return index
    error = index_error(index, size, form, dim, wrap, ignore)
    if error is not None:
        raise OpError(error)
    return index


def _shape(shape, size_shape, **attrs):
    if broadcast_shapes(shape, size_shape) != tuple(shape):
        raise ValueError(f"the sizes {list(size_shape)} do not broadcast to the index "
                         f"{list(shape)}")
    return tuple(shape)


# A view: eagerly the result is the index's own array, so it shares the index's version
# counter, and an op that saves it (index's VJP) notices when the index is written in place.
CHECK_INDEX = define_op(
    name="check_index", arity=2, shape=_shape,
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_impl, vjp=NOT_DIFFERENTIABLE,
    saves=(), lowering=Elementwise("check_index({0}, {1})"), view=True)


def check_index(index: Tensor, size, form: str, *, dim: int = 0, wrap: bool = False,
                ignore: int | None = None) -> Tensor:
    """`index`, once every entry is in range for a dimension of `size` entries: [0, size),
    or [-size, size) with `wrap`, `ignore` always allowed; otherwise torch's error of `form`
    (FORMS) for the first entry that is not. `size` may be a list of extents, one per row of
    a stacked advanced index (k, ...): row r is then checked against size[r] and named as
    dimension dim + r.

    Read the result, not `index`: while tracing it is the check_index node's value, so the
    check runs before the op that uses it.
    """
    if isinstance(size, (list, tuple)):
        if len(size) == 1:
            size = size[0]
        else:
            from ...tensor.creation import tensor

            extents = [int(extent) for extent in size]  # symbolic extents specialize here
            size = tensor(extents, dtype=dtypes.int64,
                          device=index.device if index.is_cuda else None).reshape(
                len(extents), *[1] * (index.ndim - 1))
    return bind(CHECK_INDEX, (index, size),
                {"form": form, "dim": dim, "wrap": wrap, "ignore": ignore})
