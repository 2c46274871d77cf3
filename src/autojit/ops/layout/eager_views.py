"""Eager view ops without the general dispatch: x[key], reshape, view, unsqueeze, squeeze and
flatten on CPU tensors that need no autograd node, and stack and cat of such tensors.

These are the data path's ops (a Dataset's `x[i]`, the collate's stack, the reshapes between
a batch and a model), run once per sample where a training step runs once per batch. Through
`registry.bind` each pays for a dtype rule, an operand loop, the impl's call and a view
check, and `x[i]` is two primitives (a slice, then a reshape dropping the indexed dim), about
9 us against torch's 0.7. When the dispatch state is not SPECIAL, no VJP chain is being
recorded, x's data is a NumPy array and no node is to be recorded (grad mode is off or x does
not require grad), which each op checks inline, its NumPy view is made directly and wrapped
as `registry.view_tensor` wraps one (`view_of`): the source's version counter, its base, and
`_view_source`, the (source, op, attrs) that in-place writes through the view and the
regeneration of its grad_fn after a write to its base replay (ops/inplace.py view_steps,
autograd/graph.py refresh_view). The ops and attrs recorded are those the general path
binds, so both paths give the same tensors; where that is two primitives (basic indexing,
whose fast path is in indexing/subscript.py's getitem), the intermediate view is made only when
something walks the chain (`LazySource`). Anything else (an index out of range, a shape that
does not fit, an empty result, a tensor that needs a node) returns None and the caller takes
the general path, which raises torch's errors. docs/notes/eager-dispatch.md ("The data
path") has the figures.

The pieces of split, chunk and narrow (`slice_piece`) are made the same way, and recorded
too: a recurrent cell's loop slices its gate tensors a few times a step, with gradients
(docs/notes/eager-dispatch.md, "Eager loops of small ops").
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.memory_format import FORMAT_RANKS as _FORMAT_RANKS
from ...tensor.memory_format import contiguous_format, suggested_format
from ...tensor.state import SPECIAL, state
from ...tensor.tensor import Tensor, VersionCounter, plain_tensor
from .. import registry
from ..registry import row_major
from ..view_creation import meta_of_new_view

_ndarray = np.ndarray
_new = object.__new__


def view_of(data: np.ndarray, x: Tensor, source) -> Tensor:
    """A tensor over `data` (a non-empty view of x's data) that is a view of x: x's dtype,
    version counter and base; `source` is its `_view_source`, (x, op, attrs) or a
    LazySource."""
    counter = x._counter
    if counter is None:
        counter = x._counter = _new(VersionCounter)
        counter.value = 0
    out = _new(Tensor)
    out._payload = data
    out._dtype = x._dtype
    out._requires_grad = False
    out._grad = None
    out.grad_fn = None
    out._output_nr = 0
    out._counter = counter
    fields = out.__dict__
    base = x._base
    fields["_base"] = x if base is None else base
    fields["_view_source"] = source
    fields["_view_version"] = counter.value
    if x._is_conj:
        fields["_is_conj"] = True  # torch's views keep the conjugate bit
    if x._is_neg:
        fields["_is_neg"] = True  # and the negative bit
    if not state.grad_enabled or x._creation_meta is not None:
        fields["_creation_meta"] = meta_of_new_view(x)
    return out


class LazySource:
    """The `_view_source` of a view that the general path makes with more than one primitive:
    unpacked, it is (the view before the last step, last op, last attrs), the earlier views
    made on first use from the source's data as it was (an in-place layout change of the
    source, `x.t_()`, replaces its data later). `steps(shape, key)` gives the (op, attrs)
    pairs of the general path, applied to a source of `shape`."""

    __slots__ = ("source", "data", "version", "steps", "key", "made")

    def __iter__(self):
        made = self.made
        if made is None:
            made = self.made = self._make()
        return iter(made)

    def _make(self) -> tuple:
        source, data = self.source, self.data
        steps = self.steps(data.shape, self.key)
        for op, attrs in steps[:-1]:
            data = op.impl(data, **attrs)
            middle = view_of(data, source, (source, op, attrs))
            # It stands for a view made when this one was: the version it was valid for.
            middle.__dict__["_view_version"] = self.version
            source = middle
        op, attrs = steps[-1]
        return source, op, attrs


def direct_real_data(x: Tensor):
    """x's NumPy data where a direct eager path may make a result of x's real dtype at once
    (flip, zero pad): nothing traces, no VJP chain is recorded, no node would be recorded (grad
    mode off or x not requiring grad), and the dtype is real, not bfloat16 and not one of
    torch's limited support (flip refuses uint64); else None, for the general path (which
    also raises torch's errors)."""
    data = x._payload
    if data.__class__ is not _ndarray or registry.STEP is not None:
        return None
    mode = state.dispatch
    if mode == SPECIAL or (mode and x._requires_grad):
        return None
    like = x._dtype
    if like.category == dtypes.COMPLEX or like is dtypes.bfloat16 or like.limited:
        return None
    return data


def reshape_view(x: Tensor, shape, op, checked: bool = False, unit_dims: bool = False,
                 squeezed: int | None = None):
    """x reshaped to `shape` (ints, one may be -1) as the general path's RESHAPE `op` gives
    it: a view where NumPy's reshape is one, else a tensor of its own; None where the general
    path must run (or raise). `checked`: the caller made `shape` from x's own (ints that fit).
    `unit_dims`: `shape` is x's with size-1 dims inserted or removed (squeeze, unsqueeze),
    which NumPy's reshape always makes a view of any layout, so that is not asked.
    `squeezed`: `shape` is x's without its size-1 dims (-1) or without size-1 dim `squeezed`,
    which NumPy's squeeze makes as reshape does, at half the cost."""
    data = x._payload
    if data.__class__ is not _ndarray or registry.STEP is not None:
        return None
    mode = state.dispatch
    if mode == SPECIAL or (mode and x._requires_grad):
        return None
    if not checked:
        for extent in shape:
            if extent.__class__ is not int:
                return None
    if squeezed is not None:
        result = data.squeeze() if squeezed < 0 else data.squeeze(squeezed)
    else:
        try:
            result = data.reshape(shape)
        except (ValueError, TypeError):
            return None
    if not result.size:
        return None
    if not unit_dims and not data.flags.c_contiguous and not np.may_share_memory(result, data):
        return plain_tensor(result, x._dtype)
    # view_of's body, inlined: the frame was a tenth of a squeeze's cost.
    counter = x._counter
    if counter is None:
        counter = x._counter = _new(VersionCounter)
        counter.value = 0
    out = _new(Tensor)
    out._payload = result
    out._dtype = x._dtype
    out._requires_grad = False
    out._grad = None
    out.grad_fn = None
    out._output_nr = 0
    out._counter = counter
    fields = out.__dict__
    base = x._base
    fields["_base"] = x if base is None else base
    fields["_view_source"] = (x, op, {"shape": shape if checked else result.shape})
    fields["_view_version"] = counter.value
    if x._is_conj:
        fields["_is_conj"] = True
    if x._is_neg:
        fields["_is_neg"] = True
    if not state.grad_enabled or x._creation_meta is not None:
        fields["_creation_meta"] = meta_of_new_view(x)
    return out


def joined(tensors: tuple, dim, new_dim: bool, op):
    """stack (`new_dim`) or cat of `tensors` along `dim` as the general path's CAT `op`
    computes it, for CPU tensors of one dtype that need no autograd node; None where the
    general path must run (or raise). NumPy checks the shapes: it refuses what torch refuses,
    and for tensors of one dtype agrees with torch's skipping of cat's 1-D empty tensors where
    it accepts them. The result is CAT's: a tensor of its own, laid out by CAT's impl (no
    rounding: bfloat16 values are already rounded)."""
    if not tensors or dim.__class__ is not int or registry.STEP is not None:
        return None
    mode = state.dispatch
    if mode == SPECIAL:
        return None
    tensor_class, ndarray = Tensor, _ndarray
    dtype = tensors[0]._dtype
    arrays = []
    append = arrays.append
    for tensor in tensors:
        if tensor.__class__ is not tensor_class or tensor._dtype is not dtype or (
                mode and tensor._requires_grad):
            return None
        data = tensor._payload
        if data.__class__ is not ndarray:
            return None
        append(data)
    ndim = arrays[0].ndim + new_dim
    if not -ndim <= dim < ndim:
        return None
    if dim < 0:
        dim += ndim
    try:
        if ndim not in _FORMAT_RANKS:
            # CAT's impl makes a result of a rank with no channels-last format row-major,
            # whatever its inputs' layout: so do NumPy's fastest joins.
            if new_dim and dim == 0:
                result = np.array(arrays)  # always row-major
            elif ndim == 1:
                result = np.concatenate(arrays)  # a new 1-D array: row-major
            else:
                result = np.stack(arrays, dim) if new_dim else np.concatenate(arrays, dim)
                if not result.flags.c_contiguous or 1 in result.shape:
                    result = row_major(result)
        elif new_dim and dim == 0 and suggested_format(arrays[0][None]) is contiguous_format:
            # CAT's impl lays the result out row-major once its first input suggests the
            # contiguous format, which NumPy's array of the arrays is: a DataLoader's batch of
            # 64 images took 35 us through the reshapes and the join, 7 us so.
            result = np.array(arrays)
        else:
            if new_dim:  # the general path's unsqueeze: RESHAPE's impl, a NumPy reshape
                arrays = [array.reshape(array.shape[:dim] + (1,) + array.shape[dim:])
                          for array in arrays]
            result = op.impl(*arrays, dim=dim, sizes=tuple([a.shape[dim] for a in arrays]))
    except (ValueError, IndexError):  # shapes that do not join (a 0-d one has no dim)
        return None
    out = _new(Tensor)  # plain_tensor's body, inlined
    out._payload = result
    out._dtype = dtype
    out._requires_grad = False
    out._grad = None
    out.grad_fn = None
    out._output_nr = 0
    out._counter = None
    return out


# ---- the pieces of split, chunk and narrow ------------------------------------------------------

def sliced_data(x: Tensor):
    """x's NumPy data where `slice_piece` may make x's slices directly, recorded or not:
    nothing traces, no VJP chain is recorded, no mode changes how an op runs or records
    (state.dispatch not SPECIAL), and x's dtype is not one of torch's limited support; else
    None, for bind."""
    data = x._payload
    if data.__class__ is not _ndarray or registry.STEP is not None or \
            state.dispatch == SPECIAL or x._dtype.limited:
        return None
    return data


def slice_piece(x: Tensor, data: np.ndarray, attrs: dict, op) -> Tensor | None:
    """x at attrs["slices"] (in range; the slice op's attrs), as bind(op, (x,), attrs) makes
    it (a view of x with that `_view_source`, and the op's autograd node where grad mode
    records and x requires grad), without the dispatch's dtype rule, operand loop and view
    test: a chunk of an LSTM's gates is four of these a step. None for an empty piece (not a
    view: bind makes it)."""
    # The op's impl makes the view, as bind's would: a test or tool that wraps op.impl sees
    # it run (the VJP chains call op.impl at each step for the same reason).
    view = op.impl(data, attrs["slices"])
    if not view.size:
        return None
    out = view_of(view, x, (x, op, attrs))
    if state.dispatch and x._requires_grad and x._dtype.category >= dtypes.FLOATING:
        registry.RECORD(op, (x,), attrs, out, False)
    return out
