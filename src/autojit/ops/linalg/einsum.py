"""einsum: Einstein summation, written from the layout ops, sum, mul and matmul.

The equation is parsed as torch parses it (same errors), in either form: a string
("bij,bjk->bik", implicit output when there is no "->", "..." for broadcast dims) or operands
each followed by its list of subscripts (integers below 52, Ellipsis). Then:

1. each operand's repeated subscripts become a diagonal (a reshape and a strided slice, so a
   view with slice's gradient), and its subscripts that no other operand and not the output
   name are summed at once;
2. operands are contracted pairwise, left to right: subscripts both share and that are needed
   later are batch dims, those needed no more are contracted, and the pair becomes one
   `matmul` of (batch, left, contracted) by (batch, contracted, right), or a broadcast `mul`
   when nothing is contracted; size-1 dims broadcast as torch's einsum allows;
3. the result is summed over what the output does not name and permuted into its order.

So a compiled einsum runs through the same products as matmul ("bij,bjk->bik" is one matmul
node), fuses its sums and products into the kernels around them, and is differentiable to any
order through those ops. No primitive of its own.
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.dtypes import SCALAR_TYPE_NAMES
from ...tensor.tensor import Tensor
from ..autocast import LOWER, autocast_op
from ..layout import permute, reshape, slice_dims
from ..limited_rules import refuse_limited
from ..reduction import sum_
from ..registry import bind
from . import MATMUL

_ELLIPSIS = "..."
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# ---- parsing ------------------------------------------------------------------------------------

def _from_sublists(args) -> tuple:
    """(equation, operands) from einsum(op0, sublist0, op1, sublist1, ..., [output])."""
    operands, parts = [], []

    def subscripts(sublist) -> str:
        text = []
        for item in sublist:
            if item is Ellipsis:
                text.append(_ELLIPSIS)
            elif isinstance(item, int) and 0 <= item < len(_LETTERS):
                text.append(_LETTERS[item])
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid "
                                 "range [0, 52)")
        return "".join(text)

    for position in range(0, len(args) - 1, 2):
        operands.append(args[position])
        parts.append(subscripts(args[position + 1]))
    equation = ",".join(parts)
    if len(args) % 2:
        equation += "->" + subscripts(args[-1])
    return equation, operands


def _arguments(args) -> tuple:
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _from_sublists(args)
    for position, operand in enumerate(operands):
        if not isinstance(operand, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 1, but got "
                            f"{type(operand).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    return equation, operands


def _parse_inputs(left: str, count: int) -> list:
    """Each operand's subscripts: letters and _ELLIPSIS, spaces dropped (torch's checks)."""
    labels: list = [[]]
    found_ellipsis = False
    index = 0
    while index < len(left):
        char = left[index]
        if char == " ":
            pass
        elif char == ".":
            operand = len(labels) - 1
            if found_ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {operand} for which an "
                                   "ellipsis was already found")
            if not (index + 2 < len(left) and left[index + 1] == "." and left[index + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {operand} that is not part "
                                   "of any ellipsis")
            index += 2
            labels[-1].append(_ELLIPSIS)
            found_ellipsis = True
        elif char == ",":
            labels.append([])
            if len(labels) > count:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            found_ellipsis = False
        elif char in _LETTERS:
            labels[-1].append(char)
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {index} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
        index += 1
    if len(labels) != count:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels


def _parse_output(right: str, offset: int, counts: dict) -> list:
    """The output's subscripts (letters and _ELLIPSIS), with torch's checks."""
    labels: list = []
    index = 0
    while index < len(right):
        char = right[index]
        if char == " ":
            pass
        elif char == ".":
            if _ELLIPSIS in labels:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if not (index + 2 < len(right) and right[index + 1] == "."
                    and right[index + 2] == "."):
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            index += 2
            labels.append(_ELLIPSIS)
        elif char in _LETTERS:
            if counts.get(char, 0) == 0 or char in labels:
                problem = (" appears more than once in the output" if char in labels else
                           " does not appear in the equation for any input operand")
                raise RuntimeError(f"einsum(): output subscript {char}{problem}")
            labels.append(char)
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + index} in "
                               "the equation string, subscripts must be in [a-zA-Z]")
        index += 1
    return labels


# ---- operands with one dim per distinct subscript -----------------------------------------------

def _diagonal(x: Tensor, first: int, second: int) -> Tensor:
    """The diagonal of dims `first` and `second` (equal sizes) as x's last dim: those two dims
    moved last, merged, and every (n + 1)-th element taken (a strided slice)."""
    order = [d for d in range(x.ndim) if d not in (first, second)] + [first, second]
    moved = permute(x, order)
    size = x.shape[first]
    merged = reshape(moved, *moved.shape[:-2], size * size)
    slices = [(0, extent, 1) for extent in merged.shape]
    slices[-1] = (0, size * size, size + 1)
    return slice_dims(merged, slices)


def _canonical(operands, input_labels, ellipsis_dims: int):
    """Each operand with one dim per distinct label (diagonals taken), its labels, and the
    size of every label (torch's broadcasting checks): ellipsis dims are labelled (_ELLIPSIS,
    j), right-aligned over the widest ellipsis."""
    sizes: dict = {}
    prepared = []
    for position, (operand, labels) in enumerate(zip(operands, input_labels, strict=True)):
        dims: list = []
        for label in labels:
            if label != _ELLIPSIS:
                dims.append(label)
                continue
            covered = operand.ndim - (len(labels) - 1)
            dims.extend((_ELLIPSIS, j) for j in range(ellipsis_dims - covered, ellipsis_dims))
        x, seen = operand, []
        for axis, label in enumerate(dims):
            extent = operand.shape[axis]
            if label in seen:
                first = seen.index(label)
                if x.shape[first] != extent:
                    raise RuntimeError(f"einsum(): subscript {label} is repeated for operand "
                                       f"{position} but the sizes don't match, {extent} != "
                                       f"{x.shape[first]}")
                # The diagonal comes last; it moves to the end of the dims visited so far, so
                # that x's dims stay `seen` followed by those not visited yet.
                x = _diagonal(x, first, len(seen))
                seen = [s for s in seen if s != label] + [label]
                at = len(seen) - 1
                x = permute(x, [*range(at), x.ndim - 1, *range(at, x.ndim - 1)])
                continue
            if extent != 1:
                known = sizes.get(label, 1)
                if known != 1 and known != extent:
                    if isinstance(label, tuple):
                        raise RuntimeError(
                            f"einsum(): dimension {axis} covered by ellipsis in operand "
                            f"{position}has size {extent} which does not broadcast with "
                            f"previously seen ellipsis with size {known} for the respective "
                            "dimension")
                    raise RuntimeError(f"einsum(): subscript {label} has size {extent} for "
                                       f"operand {position} which does not broadcast with "
                                       f"previously seen size {known}")
                sizes[label] = extent
            else:
                sizes.setdefault(label, 1)
            seen.append(label)
        prepared.append((x, seen))
    return prepared, sizes


def _sum_labels(x: Tensor, labels: list, drop, keep_dtype: bool) -> tuple:
    """x summed over the labels in `drop`, and the labels left."""
    axes = [axis for axis, label in enumerate(labels) if label in drop]
    if not axes:
        return x, labels
    x = sum_(x, axes, dtype=x.dtype if keep_dtype else None)
    return x, [label for label in labels if label not in drop]


# ---- contraction --------------------------------------------------------------------------------

def _arranged(x: Tensor, labels: list, groups: list) -> Tensor:
    """x permuted so that its labels come in the order of `groups` (lists of labels)."""
    order = [labels.index(label) for group in groups for label in group]
    return permute(x, order)


def _merged(x: Tensor, leading: int, groups: list) -> Tensor:
    """x's dims after the first `leading` merged group by group (one dim per group)."""
    shape = list(x.shape[:leading])
    at = leading
    for group in groups:
        extent = 1
        for axis in range(at, at + len(group)):
            extent *= x.shape[axis]
        shape.append(extent)
        at += len(group)
    return x if tuple(shape) == tuple(x.shape) else reshape(x, tuple(shape))


def _contract(a: Tensor, a_labels: list, b: Tensor, b_labels: list, needed: set):
    """The pair's product with the shared labels not in `needed` summed: (result, labels)."""
    shared = [label for label in a_labels if label in b_labels]
    batch = [label for label in shared if label in needed]
    contracted = [label for label in shared if label not in needed]
    left = [label for label in a_labels if label not in b_labels]
    right = [label for label in b_labels if label not in a_labels]
    # A contracted dim of size 1 on one side broadcasts: sum the other side over it first.
    for label in contracted:
        a_extent, b_extent = a.shape[a_labels.index(label)], b.shape[b_labels.index(label)]
        if a_extent != b_extent:
            if a_extent == 1:
                b = sum_(b, b_labels.index(label), keepdim=True, dtype=b.dtype)
            else:
                a = sum_(a, a_labels.index(label), keepdim=True, dtype=a.dtype)
    if not contracted:
        a = _arranged(a, a_labels, [batch, left])
        b = _arranged(b, b_labels, [batch, right])
        a = reshape(a, *a.shape, *([1] * len(right)))
        b = reshape(b, *b.shape[:len(batch)], *([1] * len(left)), *b.shape[len(batch):])
        return a * b, batch + left + right
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[a.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[b.dtype.name]}")
    if a.dtype is dtypes.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    a = _arranged(a, a_labels, [batch, left, contracted])
    b = _arranged(b, b_labels, [batch, contracted, right])
    left_shape = tuple(a.shape[len(batch):len(batch) + len(left)])
    right_shape = tuple(b.shape[len(batch) + len(contracted):])
    product = bind(MATMUL, (_merged(a, len(batch), [left, contracted]),
                            _merged(b, len(batch), [contracted, right])), {})
    shape = tuple(product.shape[:len(batch)]) + left_shape + right_shape
    if tuple(product.shape) != shape:
        product = reshape(product, shape)
    return product, batch + left + right


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def einsum(*args) -> Tensor:
    """Einstein summation over the operands as the equation says ("ij,jk->ik", implicit
    output, "..." for broadcast dims, repeated subscripts for diagonals), or with a list of
    subscripts after each operand."""
    equation, operands = _arguments(args)
    if len(operands) > 1:  # torch contracts pairs of operands with bmm, which takes no uint64
        refuse_limited("bmm", *operands)
    arrow = equation.find("->")
    left = equation if arrow < 0 else equation[:arrow]
    input_labels = _parse_inputs(left, len(operands))
    counts: dict = {}
    ellipsis_dims = 0
    for position, (operand, labels) in enumerate(zip(operands, input_labels, strict=True)):
        named = [label for label in labels if label != _ELLIPSIS]
        for label in named:
            counts[label] = counts.get(label, 0) + 1
        has_ellipsis = len(named) != len(labels)
        if (len(named) > operand.ndim) if has_ellipsis else (len(named) != operand.ndim):
            relation = "is more than" if has_ellipsis else "does not match"
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(named)}) {relation} "
                f"the number of dimensions ({operand.ndim}) for operand {position}"
                f"{'' if has_ellipsis else ' and no ellipsis was given'}")
        if has_ellipsis:
            ellipsis_dims = max(ellipsis_dims, operand.ndim - len(named))
    ellipsis = [(_ELLIPSIS, j) for j in range(ellipsis_dims)]
    if arrow < 0:
        # Implicit output: the broadcast dims, then the subscripts used once, in ASCII order.
        output = ellipsis + sorted(label for label, count in counts.items() if count == 1)
    else:
        output = []
        for label in _parse_output(equation[arrow + 2:], arrow + 2, counts):
            output.extend(ellipsis if label == _ELLIPSIS else [label])
    prepared, _ = _canonical(operands, input_labels, ellipsis_dims)

    # Sum each operand over the labels nothing else names, then contract left to right.
    wanted = set(output)
    reduced = []
    for position, (x, labels) in enumerate(prepared):
        elsewhere = wanted.union(*(other for index, (_, other) in enumerate(prepared)
                                   if index != position))
        reduced.append(_sum_labels(x, labels, set(labels) - elsewhere, len(prepared) > 1))
    result, labels = reduced[0]
    for position in range(1, len(reduced)):
        needed = wanted.union(*(other for _, other in reduced[position + 1:]))
        result, labels = _contract(result, labels, *reduced[position], needed)
    result, labels = _sum_labels(result, labels, set(labels) - wanted, len(reduced) > 1)
    return permute(result, [labels.index(label) for label in output])
