"""The layout of an elementwise op's result over operands laid out differently, as torch's
TensorIterator chooses it.

NumPy's ufuncs and torch's elementwise kernels both lay a result out after their operands
(`x.t() * 2` is transposed), and agree while the operands agree. Where two operands order a
pair of dims differently, NumPy takes row-major order for that pair and torch takes the order
of the first operand whose strides tell the two dims apart: `a.t() + b` is transposed in
torch and row-major in NumPy, and of a `(3, 2, 5)` tensor permuted from `(5, 3, 2)` minus its
mean over dim -2, NumPy mixes the two orders where torch keeps the tensor's, so that torch's
`view(-1, 5)` of the result works (BoTorch's `batched_multinomial` does it) and NumPy's layout
refused it. Strides are observable (view, reshape aliasing, stride()), so an elementwise
result of several operands is re-laid out as torch's when NumPy's order differs
(`torch_ordered`, which ops/registry.define_op wraps the impls of such ops in), and traces
take the same decision on their stand-ins (ir/eager_layout.py).

torch's rule (TensorIterator's `reorder_dimensions`): the dims are sorted, innermost first, by
an insertion sort whose comparison asks each operand in turn and skips one broadcast in either
dim (a zero stride); the first operand with unequal strides decides; with equal strides the
smaller dim goes inside, else the next operand is asked; where none decides, the order is kept.
The result is then dense in that order. Only the order of the dims longer than one is compared
with NumPy's: a dim of one element holds no data whatever its stride. Where every operand is
row-major over the dims it does not broadcast (a recurrent cell's gate gradient, a slice of
rows of a wider array) and one of them decides every pair, the sort would keep row-major order
and NumPy's result is already laid out so: `_row_major_everywhere` says so without sorting.
Nor is there any sorting where the first operand has every dim of the result and distinct
positive strides (`_first_order`): it decides every pair, so torch's order is its own. A fresh
result in that order is kept (a GRU's gate slice plus a row-major tensor, a transposed head
times a broadcast one), and with a row-major second operand of the same shape, where NumPy
would take row-major order, both are seen permuted into the first's order so that NumPy lays
the result out in torch's (`_computed_in`) instead of it being copied after.
"""

from __future__ import annotations

import numpy as np

_ARRAY = np.ndarray


def _broadcast_strides(array: np.ndarray, shape: tuple) -> list:
    """array's element strides against the result's shape: zero where it is broadcast."""
    offset = len(shape) - array.ndim
    strides = [0] * offset
    itemsize = array.itemsize
    for axis, (extent, stride) in enumerate(zip(array.shape, array.strides)):
        strides.append(0 if extent == 1 and shape[offset + axis] != 1 else stride // itemsize)
    return strides


def torch_order(arrays, shape: tuple) -> list:
    """The dims of an elementwise result of `shape` over `arrays` (its operands, in order;
    numbers and 0-d arrays take no part), innermost first, as torch's TensorIterator orders
    them."""
    operands = [_broadcast_strides(array, shape) for array in arrays
                if array.__class__ is _ARRAY and array.ndim]
    ndim = len(shape)
    order = list(range(ndim - 1, -1, -1))

    def should_swap(outer: int, inner: int) -> int:
        for strides in operands:
            first, second = strides[outer], strides[inner]
            if first == 0 or second == 0:
                continue
            if first != second:
                return 1 if first > second else -1
            if shape[outer] > shape[inner]:
                return 1
        return 0

    for position in range(1, ndim):
        moving = position
        for before in range(position - 1, -1, -1):
            comparison = should_swap(order[before], order[moving])
            if comparison > 0:
                order[before], order[moving] = order[moving], order[before]
                moving = before
            elif comparison < 0:
                break
    return order


def _row_major_everywhere(arrays, shape: tuple) -> bool:
    """Whether torch orders the dims row-major for these operands without sorting (a gradient
    added to a slice of a gate's gradient, both strided rows): no dim of the result is one
    element, some operand has every dim with a positive stride (so that every pair of dims
    is decided), and in every operand the dims it does not broadcast have strictly
    decreasing strides (so that each one decides row-major order)."""
    if 1 in shape:
        return False
    decided = False
    for array in arrays:
        if array.__class__ is not _ARRAY or not array.ndim:
            continue
        last = None
        full = array.ndim == len(shape)
        for extent, stride in zip(array.shape, array.strides):
            if extent == 1 or stride == 0:
                full = False
                continue
            if stride < 0 or last is not None and stride >= last:
                return False
            last = stride
        decided = decided or full
    return decided


def relaid(result: np.ndarray, arrays) -> np.ndarray:
    """result itself when its dims longer than one are ordered as torch orders them for these
    operands, else a copy laid out densely in torch's order."""
    shape = result.shape
    if result.ndim < 2 or result.size == 0:
        return result
    # An operand orders only the dims it has, not broadcast: one of fewer than two dims orders
    # none, and NumPy follows a lone operand that orders them as torch does.
    if sum(1 for array in arrays if array.__class__ is _ARRAY and array.ndim > 1) < 2:
        return result
    if result.flags.c_contiguous and _row_major_everywhere(arrays, shape):
        return result
    order = torch_order(arrays, shape)
    itemsize = result.itemsize
    step = 1
    for axis in order:
        if shape[axis] != 1 and result.strides[axis] != step * itemsize:
            break
        step *= shape[axis]
    else:
        return result
    outermost_first = order[::-1]
    dense = np.empty(tuple(shape[axis] for axis in outermost_first), dtype=result.dtype)
    out = dense.transpose(np.argsort(outermost_first))
    np.copyto(out, result)
    return out


# How a first operand orders the dims longer than one (_first_order): row-major, or another
# order that its distinct strides decide.
_ROWS, _OTHER = "rows", "other"


def _first_order(first: np.ndarray) -> str | None:
    """How `first`, an operand with positive strides on its dims longer than one, orders them:
    _ROWS where its strides fall from dim to dim (a slice of rows, a GRU's gate), _OTHER where
    they are distinct but do not (a transposed head's view). As an operand with every dim of
    the result, it then decides every pair of dims, and torch lays the result out in that
    order. None for any other layout (a broadcast dim, equal strides)."""
    previous = None
    rows = True
    strides = first.strides
    for extent, stride in zip(first.shape, strides):
        if extent != 1:
            if stride <= 0:
                return None
            if previous is not None and stride >= previous:
                rows = False
            previous = stride
    if rows:
        return _ROWS
    longer = [stride for extent, stride in zip(first.shape, strides) if extent != 1]
    return _OTHER if len(set(longer)) == len(longer) else None


_INVERSES: dict = {}  # a permutation of dims: its inverse


def _computed_in(impl, first: np.ndarray, second: np.ndarray, attrs: dict):
    """impl's result over both operands seen in the first's order of dims (outermost first),
    where NumPy lays its result out row-major, seen back in theirs: the result laid out as
    torch's without computing it in NumPy's order and copying it."""
    strides = first.strides
    perm = tuple(sorted(range(first.ndim), key=lambda axis: -strides[axis]))
    result = impl(first.transpose(perm), second.transpose(perm), **attrs)
    if result.__class__ is not _ARRAY:
        return result
    inverse = _INVERSES.get(perm)
    if inverse is None:
        inverse = _INVERSES[perm] = tuple(perm.index(axis) for axis in range(len(perm)))
    back = result.transpose(inverse)
    return back if result.flags.c_contiguous else relaid(back, (first, second))


def _takes_attrs(impl) -> bool:
    """Whether an impl may be handed attrs as keywords: a Python function with parameters
    beyond two operands or with **kwargs (a ufunc is handed none)."""
    code = getattr(impl, "__code__", None)
    if code is None:
        return not isinstance(impl, np.ufunc)
    return code.co_argcount + code.co_kwonlyargcount != 2 or bool(code.co_flags & 0x0C)


def _ordered_pair(impl, first: np.ndarray, second, attrs: dict):
    """impl(first, second) laid out as torch's, for a first operand that is not row-major."""
    order = _first_order(first)
    if order is _OTHER and second.__class__ is _ARRAY and second.flags.c_contiguous and \
            second.shape == first.shape:
        # A transposed first operand and a row-major second: NumPy would take row-major
        # order where torch follows the first, and the result be copied.
        return _computed_in(impl, first, second, attrs)
    result = impl(first, second, **attrs)
    if result.__class__ is not _ARRAY:
        return result
    if result.shape == first.shape and result.base is None and result is not first:
        # The first operand has every dim of the result and decides every pair: a fresh
        # result laid out as it orders them is torch's (row-major, or as dense as the first
        # and in its order: rotary embeddings' products on heads).
        if order is _ROWS and result.flags.c_contiguous or result.strides == first.strides:
            return result
    return relaid(result, (first, second))


def torch_ordered(impl, arity: int):
    """impl (an elementwise op's NumPy reference, of `arity` operands, or any number for
    arity -1) with its result laid out as torch's. Two operands order the result alike in
    NumPy and torch unless the first orders dims that it does not have in row-major order: torch
    follows it, NumPy takes row-major order where the second disagrees; otherwise, as in
    every call of row-major operands, nothing more is looked at (the common case costs a few
    attribute reads)."""
    if arity == 2 and not _takes_attrs(impl):
        # No attrs: a signature without *args and **kwargs, whose packing cost about as much
        # as the rest of the wrapper on the common path (an add or a multiply of row-major
        # operands, eagerly and in the VJP chains' replays).
        def torch_ordered_pair(first, second):
            if first.__class__ is not _ARRAY or first.ndim < 2 or first.flags.c_contiguous:
                return impl(first, second)
            return _ordered_pair(impl, first, second, {})

        torch_ordered_pair.__wrapped__ = impl
        return torch_ordered_pair
    if arity == 2:
        def torch_ordered_impl(*arrays, **attrs):
            first, second = arrays
            if first.__class__ is not _ARRAY or first.ndim < 2 or first.flags.c_contiguous:
                return impl(*arrays, **attrs)
            return _ordered_pair(impl, first, second, attrs)
    else:
        def torch_ordered_impl(*arrays, **attrs):
            result = impl(*arrays, **attrs)
            if result.__class__ is not _ARRAY or result.ndim < 2:
                return result
            for array in arrays:
                if array.__class__ is _ARRAY and array.ndim > 1 and \
                        not array.flags.c_contiguous:
                    return relaid(result, arrays)
            return result

    torch_ordered_impl.__wrapped__ = impl
    return torch_ordered_impl
