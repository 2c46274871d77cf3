"""Batching for vmap: the batched tensor, the dispatch of a primitive on batched operands, and
the rules shared by whole families of primitives.

Inside `vmap` (autograd/vmap.py) a mapped argument becomes a BatchedTensor: it shows the shape
of one example, and holds all of them in `physical`, a tensor whose first dim is the batch (at
the vmap level `level`; nested vmaps nest BatchedTensors). `bind` hands a primitive with a
batched operand to `dispatch`, which picks the innermost level among the operands, and calls
the op's registry rule `batch(inputs, batched, attrs, size)`: the physical inputs (the batch
first where `batched[i]`), the batch size, and the result, batched along its first dim.
Everything a rule computes is ordinary autojit ops on the physical tensors, so a vmapped
function is one batched computation, traced as one graph when compiled.

A primitive without a rule runs as its composite where it stands for one (a Decomposition:
each of the composite's primitives by its own rule), else once per index of the batch, with a
warning naming it.
Autograd records the batched ops at the logical level too (the BatchedTensors have their own
grad_fn), so `grad` inside `vmap` differentiates each example: per-sample gradients.
"""

from __future__ import annotations

import os
import sys

from ..tensor import once, torch_function
from ..tensor import random as tensor_random
from ..tensor.creation import arange
from ..tensor.once import warn_once
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import api, registry
from .registry import Decomposition, Elementwise, Reduction, bind

VMAP_ITEM_ERROR = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations. If "
    "error is occurring somewhere inside PyTorch internals, please file a bug report.")
VMAP_CONTROL_FLOW_ERROR = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
    "We don't support that yet, please shout over at "
    "https://github.com/pytorch/functorch/issues/257 .")
# The ops whose result's shape depends on the values (they read the values on the host, with
# these labels), and the aten names torch's vmap error gives them.
_DYNAMIC_SHAPE_OPS = {"nonzero()": "aten::nonzero", "unique()": "aten::_unique2",
                      "unique_consecutive()": "aten::unique_consecutive"}


class BatchValue:
    """What a BatchedTensor shows in place of an ir.Value: the shape of one example."""

    __slots__ = ("shape", "dtype", "physical", "level")

    def __init__(self, physical: Tensor, level: int):
        self.shape = tuple(physical.shape)[1:]
        self.dtype = physical._dtype
        self.physical, self.level = physical, level


class BatchedTensor(Tensor):
    """One example's view of a batch held along the first dim of `physical` (see the module's
    docstring); its autograd history is its own, at this level."""

    _batched = True
    __torch_function__ = torch_function.disabled_torch_function_impl  # internal: no dispatch

    def __repr__(self):
        if Tensor._transform_repr is not None:  # inside vmap: torch's level and batch dim
            text = Tensor._transform_repr(self)
            if text is not None:
                return text
        return (f"BatchedTensor(lvl={self._value.level}, bdim=0, "
                f"value=\n{self._value.physical!r})")

    @property
    def device(self):
        return self._value.physical.device

    def _concrete(self, what: str):
        if what in _DYNAMIC_SHAPE_OPS:
            raise RuntimeError(
                "vmap: We do not support batching operators that can output dynamic shape. "
                f"Attempted to vmap over {_DYNAMIC_SHAPE_OPS[what]}. Please file an issue at "
                "https://github.com/pytorch/pytorch/issues if you need this feature.")
        if what.startswith("bool") or what.startswith("float") or what.startswith("int"):
            raise RuntimeError(VMAP_CONTROL_FLOW_ERROR)
        raise RuntimeError(VMAP_ITEM_ERROR)

    def detach(self) -> Tensor:
        return batched(self._value.physical.detach(), self._value.level)

    @property
    def data(self) -> Tensor:
        return batched(self._value.physical.data, self._value.level)

    def _bump_version(self) -> None:
        self._value.physical._bump_version()


def batched(physical: Tensor, level: int) -> BatchedTensor:
    """A BatchedTensor over `physical` (batch first) at vmap level `level`."""
    self = object.__new__(BatchedTensor)
    self._init(None, physical._dtype, BatchValue(physical, level),
               physical._version_counter)
    return self


def physical_of(tensor: Tensor, level: int):
    """(the physical tensor at `level`, whether it is batched there)."""
    if tensor.__class__ is BatchedTensor and tensor._value.level == level:
        return tensor._value.physical, True
    return tensor, False


def level_size(level: int) -> int:
    for found, size in state.vmap_levels:
        if found == level:
            return size
    raise RuntimeError("vmap: a batched tensor escaped the vmap that made it; return it from "
                       "the mapped function instead of storing it")


# ---- dispatch ---------------------------------------------------------------------------------



def dispatch(op, inputs: tuple, attrs: dict) -> Tensor:
    """Run `op` on operands of which some are batched: its rule, or one run per index."""
    level = max(x._value.level for x in inputs if x.__class__ is BatchedTensor)
    size = level_size(level)
    physical, flags = [], []
    for x in inputs:
        if x.__class__ is BatchedTensor:
            value, flag = physical_of(x, level)
        else:
            value, flag = x, False
        physical.append(value)
        flags.append(flag)
    rule = rule_of(op)
    if rule is None and op.lowering.__class__ is Decomposition:
        return _composite(op, inputs, attrs)
    if rule is None:
        result = _loop(op, physical, flags, attrs, size)
    else:
        result = rule(op, tuple(physical), tuple(flags), attrs, size)
    return batched(result, level)


def _composite(op, inputs: tuple, attrs: dict) -> Tensor:
    """An op that stands for a composite (a normalization, a loss, linear), without a rule of
    its own: the composite's primitives on the batched operands, each by its rule. Their
    physical ops are recorded for autograd as any rule's are; at this level bind records the
    op itself, and pushes its tangents (forward mode is off inside)."""
    previous = state.forward_levels
    state.forward_levels = ()
    try:
        return op.lowering.function(*inputs, **attrs)
    finally:
        state.forward_levels = previous


def _user_stacklevel() -> int:
    """The stacklevel of a warning that points at the first frame outside autojit."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _loop(op, physical: list, flags: list, attrs: dict, size: int) -> Tensor:
    if ("vmap loop", op.name) not in once.given:
        warn_once(("vmap loop", op.name), f"vmap: there is no batching rule for {op.name}, so "
                  "it runs once per index of the batch (slower than one batched op)",
                  UserWarning, stacklevel=_user_stacklevel())
    results = [bind(op, tuple(x.select(0, index) if flag else x
                              for x, flag in zip(physical, flags)), attrs)
               for index in range(size)]
    return api.stack(results)


# ---- helpers for rules ------------------------------------------------------------------------

def logical_rank(x, flag: bool) -> int:
    if not isinstance(x, Tensor):
        return 0
    return x.dim() - 1 if flag else x.dim()


def pad_batched(x: Tensor, rank: int) -> Tensor:
    """A batched physical tensor with 1s inserted after the batch dim up to `rank` logical
    dims, so that it broadcasts against unbatched operands of that rank."""
    missing = rank - (x.dim() - 1)
    if missing <= 0:
        return x
    shape = tuple(x.shape)
    return x.reshape((shape[0],) + (1,) * missing + shape[1:])


def with_batch(x: Tensor, size: int) -> Tensor:
    """An unbatched tensor broadcast to a batch of `size` (a view)."""
    return api.expand(x.unsqueeze(0), (size, *x.shape))


def all_batched(inputs: tuple, flags: tuple, size: int) -> tuple:
    """Every tensor operand batched, the unbatched ones broadcast along the batch."""
    return tuple(with_batch(x, size) if isinstance(x, Tensor) and not flag else x
                 for x, flag in zip(inputs, flags))


def shift(dims):
    """Logical dims as the physical ones, past the batch dim."""
    if isinstance(dims, int):
        return dims + 1
    return tuple(dim + 1 for dim in dims)


# ---- rules shared by families of primitives ----------------------------------------------------
# Each is `rule(op, inputs, batched, attrs, size)`; a registry entry names one as its `batch`.

def broadcasting_rule(op, inputs, flags, attrs, size):
    """Elementwise ops (and any op that broadcasts its operands and is applied per element):
    the batched operands are padded to the widest logical rank, then the op runs once."""
    rank = max(logical_rank(x, flag) for x, flag in zip(inputs, flags))
    aligned = tuple(pad_batched(x, rank) if flag else x for x, flag in zip(inputs, flags))
    return bind(op, aligned, attrs)


def reduction_rule(op, inputs, flags, attrs, size):
    """Reductions over `dim`: the same reduction over the shifted dims."""
    return bind(op, inputs, {**attrs, "dim": shift(attrs["dim"])})


def dim_rule(*names: str):
    """The rule of ops whose attrs name dims (cumsum's `dim`, flip's `dims`, diagonal's `dim1`
    and `dim2`): every operand batched, the named dims shifted past the batch dim."""
    def rule(op, inputs, flags, attrs, size):
        shifted = dict(attrs)
        for name in names:
            shifted[name] = shift(attrs[name])
        operands = all_batched(inputs, flags, size)
        if len(operands) == 1 and operands[0].dim() == 1 and any(
                isinstance(attrs[name], int) for name in names):
            # A 0-d example (dim 0 names its one element): scanned as a one-element vector.
            return bind(op, (operands[0].unsqueeze(-1),), shifted).reshape((size,))
        return bind(op, operands, shifted)

    return rule


def index_reduction_rule(op, inputs, flags, attrs, size):
    """argmax and argmin: over every dim of an example they index its flattened values, so
    the batch is flattened behind its first dim; otherwise as any reduction."""
    (x,) = inputs
    rank = x.dim() - 1
    if rank != 1 and len(attrs["dim"]) == rank:
        out = bind(op, (x.reshape((size, -1)),), {**attrs, "dim": (1,), "keepdim": False})
        return out.reshape((size,) + (1,) * rank) if attrs["keepdim"] else out
    return reduction_rule(op, inputs, flags, attrs, size)


def leading_batch_rule(op, inputs, flags, attrs, size):
    """Ops that already take any number of leading batch dims (the matrix routines of linalg,
    on their last two dims): every operand batched, the op runs once."""
    return bind(op, all_batched(inputs, flags, size), attrs)


def shape_rule(*names: str):
    """Ops whose attrs hold a whole shape (reshape's `shape`, embed_diagonal's `full_shape`):
    the batch size in front of it; with `dim_names`, dims shifted too."""
    def rule(op, inputs, flags, attrs, size):
        changed = dict(attrs)
        for name in names:
            value = attrs[name]
            changed[name] = shift(value) if name.startswith("dim") else (size, *value)
        return bind(op, inputs, changed)

    return rule


def slices_rule(*shape_names: str):
    """slice and embed_slice: a whole-range slice of the batch dim in front."""
    def rule(op, inputs, flags, attrs, size):
        changed = {**attrs, "slices": ((0, size, 1), *attrs["slices"])}
        for name in shape_names:
            changed[name] = (size, *attrs[name])
        return bind(op, inputs, changed)

    return rule


def expand_rule(op, inputs, flags, attrs, size):
    """expand: the batched operand padded to the target's rank, then expanded behind the batch."""
    target = tuple(attrs["shape"])
    return bind(op, (pad_batched(inputs[0], len(target)),), {"shape": (size, *target)})


def permute_rule(op, inputs, flags, attrs, size):
    return bind(op, inputs, {"dims": (0, *shift(attrs["dims"]))})


def matmul_rule(op, inputs, flags, attrs, size):
    """matmul: a batched vector becomes a one-row (left) or one-column (right) matrix, the
    batched operands are padded to a common number of batch dims, and one matmul broadcasts
    over the rest; the added dims are dropped again."""
    x, y = inputs
    x_batched, y_batched = flags
    if x_batched and not y_batched and y.dim() <= 2 and x.dim() >= 2:
        # A batch of left operands against one matrix or vector: one product of the batch
        # flattened into rows.
        out = bind(op, (x.reshape((-1, x.shape[-1])), y), attrs)
        tail = (y.shape[-1],) if y.dim() == 2 else ()
        return out.reshape((*x.shape[:-1], *tail))
    if y_batched and not x_batched and y.dim() == 2 and x.dim() <= 2:
        # One matrix or vector against a batch of vectors: (B, k) @ x^T, one product.
        return bind(op, (y, x.transpose(-1, -2) if x.dim() == 2 else x), attrs)
    if y_batched and not x_batched and y.dim() == 3 and x.dim() == 2:
        # One matrix against a batch of matrices: (x Y)^T = Y^T x^T, the batch of Y^T
        # flattened into rows, one product (for one-column Y the transposes are reshapes).
        columns, inner = y.shape[2], y.shape[1]
        rows = y.transpose(-1, -2).reshape((-1, inner))
        out = bind(op, (rows, x.transpose(-1, -2)), attrs)
        return out.reshape((size, columns, x.shape[0])).transpose(-1, -2)
    x_vector = x_batched and x.dim() == 2
    y_vector = y_batched and y.dim() == 2
    if x_vector:
        x = x.unsqueeze(-2)
    if y_vector:
        y = y.unsqueeze(-1)
    rank = max(logical_rank(x, x_batched), logical_rank(y, y_batched))
    if x_batched:
        x = pad_batched(x, rank)
    if y_batched:
        y = pad_batched(y, rank)
    out = bind(op, (x, y), attrs)
    shape = tuple(out.shape)
    if x_vector and y_vector:
        return out.reshape(shape[:-2])
    if x_vector:  # the row dim is last when y was an unbatched vector
        drop = len(shape) - 1 if not y_batched and y.dim() == 1 else len(shape) - 2
        return out.reshape(shape[:drop] + shape[drop + 1:])
    if y_vector:
        return out.reshape(shape[:-1])
    return out


def batch_dims_rule(op, inputs, flags, attrs, size):
    """Ops that solve one problem per index of their `batch_dims` leading dims (histc,
    nonzero_static): every operand batched, one more leading dim."""
    return bind(op, all_batched(inputs, flags, size),
                {**attrs, "batch_dims": attrs["batch_dims"] + 1})


def linear_solve_rule(op, inputs, flags, attrs, size):
    """Solvers of A X = B (X A = B with `left` false): one A for a batch of right-hand sides
    is one solve with the batch side by side (columns of B, or rows with left false);
    otherwise the batch dims broadcast, padded as the elementwise ops' are."""
    a, b = inputs
    if flags == (False, True) and a.dim() == 2:
        if attrs.get("left", True):
            columns = b.movedim(-2, 0)
            out = bind(op, (a, columns.reshape((a.shape[-1], -1))), attrs)
            return out.reshape(tuple(columns.shape)).movedim(0, -2)
        out = bind(op, (a, b.reshape((-1, a.shape[-1]))), attrs)
        return out.reshape(tuple(b.shape))
    return broadcasting_rule(op, inputs, flags, attrs, size)


SAME_RANDOMNESS_ERROR = ("Vmap does not currently support same randomness with a batched "
                         "tensor input. Please file an issue with functorch")


def keyed_sampler_rule(op, inputs, flags, attrs, size):
    """Samplers of data and a draw (poisson's key, multinomial's exponentials or uniforms:
    `op(data, draw)`). Under randomness="different" the draw is batched, one per example, and
    the samples of the whole batch come at once from all of them; under "same" it is not, and
    a batched input is torch's error (its vmap has no meaning for it)."""
    data, key = inputs
    data_batched, key_batched = flags
    if not key_batched:
        raise RuntimeError(SAME_RANDOMNESS_ERROR)
    return bind(op, (data if data_batched else with_batch(data, size), key), attrs)


# ---- advanced indexing: index and index_put ------------------------------------------------------
# An unbatched index on a batched x addresses the shifted dims; otherwise the batch dim is
# indexed too, by an arange of the batch broadcast against the index rows, so that one
# advanced index serves the whole batch. Where NumPy's placement of the index dims then
# differs from the one example's (its dims adjacent, after dim 0), they are moved into place.

def _adjacent(dims: tuple) -> bool:
    return list(dims) == list(range(dims[0], dims[0] + len(dims)))


def _with_batch_row(indices: Tensor, size: int) -> Tensor:
    """Batched stacked rows (size, k, *shape) as k + 1 rows (k + 1, size, *shape), the first
    an arange of the batch: the index of (0, *shifted dims)."""
    rows = indices.transpose(0, 1)
    shape = tuple(rows.shape[1:])
    batch_row = arange(size, dtype=indices.dtype, device=indices.device if indices.is_cuda
                       else None).reshape((1, size) + (1,) * (len(shape) - 1))
    return api.cat([api.expand(batch_row, (1, *shape)), rows], 0)


def _move_dims(x: Tensor, start: int, count: int, to: int) -> Tensor:
    """x with its dims start .. start + count - 1 moved, in order, to start at `to`."""
    if start == to or count == 0:
        return x
    order = list(range(x.dim()))
    block = order[start:start + count]
    del order[start:start + count]
    order[to:to] = block
    return x.permute(tuple(order))


def _index_place(dims: tuple) -> int:
    """Where one example's indexed result has its index dims (NumPy's rule)."""
    return dims[0] if _adjacent(dims) else 0


def index_rule(op, inputs, flags, attrs, size):
    """index: x[indices] on `dims` (ops/indexing/__init__.py), the k index rows stacked."""
    x, indices = inputs
    x_batched, indices_batched = flags
    dims = attrs["dims"]
    if not indices_batched:
        out = bind(op, (x, indices), {"dims": shift(dims)})
        # Non-adjacent dims put the index dims first, before the batch dim.
        return out if _adjacent(dims) else out.movedim(indices.dim() - 1, 0)
    index_rank = indices.dim() - 2
    if not x_batched:
        # The batch of index rows is one more index dim.
        out = bind(op, (x, indices.transpose(0, 1)), attrs)
        return out.movedim(dims[0], 0) if _adjacent(dims) else out
    out = bind(op, (x, _with_batch_row(indices, size)), {"dims": (0, *shift(dims))})
    # The batch row makes dims non-adjacent (unless dims[0] is 0): index dims first.
    return _move_dims(out, 1, index_rank, 1 + _index_place(dims))


def index_put_rule(op, inputs, flags, attrs, size):
    """index_put: values written (or added) at x[indices] on `dims`; every operand batched,
    the batch dim indexed by the batch row, so that each example writes into its own."""
    x, values, indices = inputs
    x_batched, values_batched, indices_batched = flags
    dims = attrs["dims"]
    x = x if x_batched else with_batch(x, size)
    index_rank = indices.dim() - (2 if indices_batched else 1)
    target_rank = x.dim() - 1 - len(dims) + index_rank  # of one example's indexed result
    if isinstance(values, Tensor):
        # values broadcast against one example's indexed result: laid out as the batched
        # result is, its index dims first (behind the batch dim when it has one).
        if values_batched:
            values = _move_dims(pad_batched(values, target_rank),
                                1 + _index_place(dims), index_rank, 1)
        elif _index_place(dims):
            values = values.reshape((1,) * (target_rank - values.dim()) + tuple(values.shape))
            values = _move_dims(values, _index_place(dims), index_rank, 0)
    indices = indices if indices_batched else with_batch(indices, size)
    return bind(op, (x, values, _with_batch_row(indices, size)),
                {**attrs, "dims": (0, *shift(dims))})


def rule_of(op):
    """The op's batching rule: its registry entry's, else its lowering kind's, else None."""
    return op.batch if op.batch is not None else default_rule(op)


def default_rule(op):
    """The rule a primitive gets from its lowering's kind when it names none."""
    lowering = op.lowering
    if isinstance(lowering, Elementwise):
        return broadcasting_rule
    if isinstance(lowering, Reduction):
        return reduction_rule
    return None


# ---- random draws inside vmap -------------------------------------------------------------------

def _batched_draw(draw_tensor):
    """Under randomness="different", a random tensor is drawn for every index of every active
    level: one draw with the batch sizes in front, seen as batched."""
    levels = state.vmap_levels
    if not levels or state.vmap_randomness != "different":
        return None
    sizes = tuple(size for _, size in levels)
    result = draw_tensor(sizes)
    for level, _ in levels:
        result = batched(result, level)
    return result


tensor_random.BATCHED_DRAW = _batched_draw  # tensor/random.py draws through it inside vmap
registry.BATCH = dispatch  # bind runs ops on batched operands through it

__all__ = ["BatchedTensor", "batched", "dispatch"]
