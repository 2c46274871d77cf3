"""torch's other names and small shape questions: ravel, adjoint, narrow_copy, argwhere,
broadcast_tensors, broadcast_shapes, unravel_index, is_nonzero, is_same_size and isreal,
written from the layout and elementwise ops; and the NumPy-style keywords torch's argument
parser accepts (`axis=` for `dim=`, `keepdims=` for `keepdim=`) on the ops it binds
natively.

The plain aliases (greater for gt, concat for cat, ...) are assignments in functional.py, after
its `out=` wrappers, so that each alias is the same function as its op; this module holds what
needs a body of its own. numpy_keywords wraps the top-level functions (functional.py) and the
Tensor methods (tensor_names.py) of the ops named in NUMPY_KEYWORD_FUNCTIONS and
NUMPY_KEYWORD_METHODS, the lists of torch 2.13's forms that accept the keywords (torch's Python
functions, such as split, norm and unique, do not).
"""

from __future__ import annotations

import functools
import numbers

from ..tensor import dtypes
from ..tensor.symbolic import SymFloat, SymInt
from ..tensor.tensor import Size, Tensor, normalize_dim
from . import layout
from .complex_numbers import conj
from .elementwise import fill_like
from .indexing import nonzero
from .shape_rules import broadcast_shapes as _broadcast

# ---- axis= and keepdims= -----------------------------------------------------------------------

# The ops whose torch methods accept axis= (and keepdims= where they have keepdim=).
NUMPY_KEYWORD_METHODS = frozenset((
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "chunk",
    "count_nonzero", "cross", "cummax", "cummin", "cumprod", "cumsum", "diff", "gather",
    "index_add", "index_copy", "index_fill", "index_reduce", "index_select", "kthvalue",
    "log_softmax", "logcumsumexp", "logsumexp", "max", "mean", "median", "min", "mode",
    "nanmean", "nanmedian", "nanquantile", "nansum", "narrow", "narrow_copy", "prod",
    "quantile", "renorm", "repeat_interleave", "scatter", "scatter_add", "scatter_reduce",
    "select", "select_scatter", "slice_scatter", "softmax", "sort", "squeeze", "std", "sum",
    "take_along_dim", "tensor_split", "topk", "unbind", "unsqueeze", "var",
))
# The top-level functions that do: the methods' ops and those torch has no method of.
NUMPY_KEYWORD_FUNCTIONS = NUMPY_KEYWORD_METHODS | frozenset((
    "cat", "concat", "concatenate", "cosine_similarity", "cumulative_trapezoid", "stack",
    "std_mean", "trapezoid", "unflatten", "var_mean",
))


def _translate(kwargs: dict, name: str) -> dict:
    """kwargs with axis= as dim= and keepdims= as keepdim=; giving both spellings of one
    argument is torch's TypeError."""
    kwargs = dict(kwargs)
    for numpy_name, torch_name in (("axis", "dim"), ("keepdims", "keepdim")):
        if numpy_name in kwargs:
            if torch_name in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument '{numpy_name}'")
            kwargs[torch_name] = kwargs.pop(numpy_name)
    return kwargs


def numpy_keywords(function, name: str | None = None):
    """`function` accepting axis= for dim= and keepdims= for keepdim=, as torch's do."""
    name = name or function.__name__
    # A wrapper that only matters with keywords (out_argument.with_out's, whose out= is one)
    # is skipped by a plain call: one Python frame fewer on the data path's cat and stack.
    # Each names itself beside what it wraps: functools.wraps copies the attribute onto any
    # wrapper of it, which must not be skipped.
    wrapper_of = getattr(function, "keywords_only_wrapper_of", None)
    plain = wrapper_of[1] if wrapper_of is not None and wrapper_of[0] is function else function
    view_of = getattr(function, "new_view_of", None)
    viewed = view_of[1] if view_of is not None and view_of[0] is function else None
    if viewed is not None:  # new_view's body here: the same, in one frame
        @functools.wraps(function)
        def view_wrapper(x, *args, **kwargs):
            if not kwargs:
                out = viewed(x, *args)
            else:
                if "axis" in kwargs or "keepdims" in kwargs:
                    kwargs = _translate(kwargs, name)
                out = viewed(x, *args, **kwargs)
            return layout.reshape(x, tuple(x.shape)) if out is x else out

        return view_wrapper

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if not kwargs:  # a plain call: passing an empty dict on costs more than the check
            return plain(*args)
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = _translate(kwargs, name)
        return function(*args, **kwargs)

    return wrapper


# ---- reshapes and views -------------------------------------------------------------------------

def ravel(input: Tensor) -> Tensor:  # noqa: A002 - torch's names
    """x flattened to one dim, in row-major order: a view where the layout allows, else a
    copy."""
    return layout.reshape(input, -1)


def adjoint(input: Tensor) -> Tensor:  # noqa: A002
    """The conjugate transpose of each matrix (the last two dims swapped, a view, conjugated
    as conj() does): for real tensors, the transpose."""
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return conj(layout.transpose(input, -2, -1))


def conjugate_transpose(self: Tensor) -> Tensor:
    """Tensor.H: the conjugate transpose of a matrix (2-D tensors only); for real tensors, the
    transpose."""
    if self.ndim != 2:
        hint = (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else "")
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return conj(layout.transpose(self, 0, 1))


def matrix_adjoint(self: Tensor) -> Tensor:
    """Tensor.mH: the conjugate transpose of each matrix; for real tensors, mT."""
    if self.ndim < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return conj(layout.transpose(self, -2, -1))


def narrow_copy(input: Tensor, dim: int, start, length: int) -> Tensor:  # noqa: A002
    """A copy of `narrow(x, dim, start, length)`, in storage of its own. torch's kernel of
    its own checks a dim past the end and a negative length in its own words."""
    if isinstance(input, Tensor) and input.ndim and isinstance(dim, int) and dim >= input.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    if isinstance(input, Tensor) and input.ndim and isinstance(start, int) and length < 0:
        size = input.shape[normalize_dim(dim, input.ndim)]
        raise RuntimeError(f"start ({start + size if start < 0 else start}) + length ({length}) "
                           f"exceeds dimension size ({size}).")
    return layout.narrow(input, dim, start, length).clone()


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """The indices of the non-zero entries, one row per entry: `nonzero(x)`. Its size depends
    on the data (a graph break while tracing, as nonzero)."""
    return nonzero(input)


# ---- broadcasting -------------------------------------------------------------------------------

def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    try:
        shape = _broadcast(*(tuple(t.shape) for t in tensors))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return tuple(t if tuple(t.shape) == shape else layout.expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of the given shapes (tuples, or ints for 1-D ones) broadcast to,
    without making tensors."""
    shapes = tuple((shape,) if isinstance(shape, (int, SymInt)) else shape
                   for shape in shapes if shape is not None)
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max((len(shape) for shape in shapes), default=0)
    for position, shape in enumerate(shapes):
        for index in range(-1, -1 - len(shape), -1):
            extent = shape[index]
            if extent == common[index]:
                continue
            if common[index] == 1:
                if extent < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[index] = extent
            if extent != 1 and extent != common[index]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {extent} at {index}! "
                    f"Mismatching argument at index {position} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    return Size(common)


def unravel_index(indices, shape) -> tuple:
    """The coordinates, one tensor per dim of `shape`, of the flat (row-major) positions
    `indices` (negative ones count from the end)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices)}")
    if indices.dtype.category != dtypes.INTEGER:
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"autojit.{indices.dtype.name}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(extent < 0 for extent in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    from .elementwise import floor_divide, remainder

    coordinates = []
    rest = indices.to(dtypes.int64)
    for extent in reversed(shape):
        coordinates.append(remainder(rest, extent))
        rest = floor_divide(rest, extent)
    return tuple(reversed(coordinates))


# ---- questions ---------------------------------------------------------------------------------

def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether the one element of x is not zero (False, 0 and 0.0 are zero)."""
    numel = input.numel()
    if numel == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if numel > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """Whether two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise: whether each element is real, a bool tensor: a complex tensor's elements
    whose imaginary part is 0, every element of a real tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"isreal(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype.is_complex:
        return input.imag == 0
    return fill_like(input, True).to(dtypes.bool_)


def contains(self: Tensor, element) -> bool:
    """`element in x`: whether any entry of x equals element (a number or a tensor, compared
    with broadcasting)."""
    if isinstance(element, (Tensor, numbers.Number, SymInt, SymFloat)):
        return bool((self == element).any().item())
    raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                       f"a {type(element)}.")


# The public forms of the view ops that return x itself when they change nothing: torch's
# give a new tensor (a view) even then, so that a program may give it attributes, detach it
# in place or compare identities as torch lets it. The layout functions (layout/__init__.py) keep
# returning x, for the ops built on them.
NEW_VIEWS = ("permute", "squeeze", "expand", "expand_as", "broadcast_to", "transpose",
             "swapaxes", "swapdims", "t", "movedim", "moveaxis", "narrow")


def new_view(function):
    """`function` returning a view of x where it would return x itself."""
    def op(x, *args, **kwargs):
        out = function(x, *args, **kwargs)
        return layout.reshape(x, tuple(x.shape)) if out is x else out

    op.__name__ = op.__qualname__ = function.__name__
    op.__doc__ = function.__doc__
    op.__wrapped__ = function
    op.new_view_of = (op, function)
    return op
