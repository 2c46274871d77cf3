"""In-place ops (add_, mul_, copy_, setitem, ...) and out= arguments: an out-of-place op, then
a write-back.

An in-place op computes its result with the ordinary primitive, writes it into the target's
storage, bumps the version counter the target shares with its views and detached aliases, and
makes the primitive's node the target's new grad_fn. If the primitive saved the target itself
for backward, it is given a snapshot of the old value instead, so that the gradient of the
in-place op stays correct (torch clones the original for the same reason).
See docs/notes/saved-tensors.md.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import dtypes
from ..tensor.creation import arange
from ..tensor.meta import MetaArray
from ..tensor.state import PLAIN, state
from ..tensor.tensor import Tensor
from . import api
from .batching import batched, level_size, physical_of, with_batch
from .registry import bind
from .view_creation import check_view_write, view_write_error

# torch's message for a write into a broadcast view, whose elements share memory.
OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor refers "
                 "to a single memory location. Please clone() the tensor before performing the "
                 "operation.")
# A write into view_as_real (real, imag) of a complex32 tensor, or into view_as_complex of a
# float16 one: autojit's are read-only copies (registry.retyped_copy), not views.
RETYPED_COPY_ERROR = ("autojit: this float16 view of a complex32 tensor (view_as_real, real, "
                      "imag), or complex32 view of a float16 one (view_as_complex), is a "
                      "read-only copy: complex32 is stored as complex64 (docs/notes/"
                      "complex32.md). Write to the tensor itself, or to a clone of this one.")
# torch's message for an out= sharing memory with an input of an op that refuses that.
INPUT_OVERLAP_ERROR = ("unsupported operation: some elements of the input tensor and the "
                       "written-to tensor refer to a single memory location. Please clone() "
                       "the tensor before performing the operation.")
_TORCH_NAMES = dtypes.SCALAR_TYPE_NAMES
# The in-place ops that give every element one value: torch lets them write a tensor whose
# elements share memory (an expanded one), where any other write refuses (OVERLAP_ERROR).
_FILLS = frozenset({"fill_", "zero_"})
# Called with the target before an in-place write changes its storage, or None: set by
# autograd.graph.allow_mutation_on_saved_tensors (autograd/graph_api.py) while it is active.
BEFORE_WRITE = None
# Forward AD through views (autograd/forward_views.py, which sets them): REFRESH_TANGENTS
# brings a target's tangents up to date before it is snapshot (a view's is the view of its
# base's), WRITE_TANGENTS puts the result's tangents where the target's lie in its base's.
REFRESH_TANGENTS = None
WRITE_TANGENTS = None
# While a torch.func grad transform runs its function (state.grad_levels), called with the
# target and the op's name before an in-place op: it refuses a write into a tensor captured
# from outside the transform, as torch does (set by autograd/transform_levels.py).
CHECK_CAPTURED = None


INFERENCE_ERROR = ("Inplace update to inference tensor outside InferenceMode is not allowed."
                   "You can make a clone to get a normal tensor before doing inplace update.")


def check_inplace(target: Tensor, op_name: str) -> None:
    """The errors torch raises before an in-place write."""
    if target._is_inference and not state.inference:
        raise RuntimeError(INFERENCE_ERROR)
    if not state.grad_enabled:
        return
    if target.grad_fn is None and target._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = target._base
    if base is not None and base._requires_grad and base.grad_fn is None:
        if target._creation_meta is not None:
            # torch checks the view's creation meta first (handle_view_on_rebase)
            raise RuntimeError(view_write_error(target))
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                           "an in-place operation.")


def _snapshot(target: Tensor) -> Tensor:
    """A stand-in for `target` as it is now: same autograd identity, copied storage."""
    if target._batched:
        snapshot = batched(_snapshot(target._value.physical), target._value.level)
        snapshot.grad_fn, snapshot._output_nr = target.grad_fn, target._output_nr
        snapshot._requires_grad = target._requires_grad
        snapshot._grad_accumulator = target._grad_accumulator
        snapshot._tangents = target._tangents
        return snapshot
    snapshot = Tensor._make(target._payload.copy() if target._payload is not None else None,
                            target._dtype)
    snapshot._value = target._value
    if state.tracer is not None:
        # While tracing, the copy stands for the target's current graph value (the tracer's
        # value_of reads `_value`): not a captured tensor's data now, which would become a
        # constant, nor the value a view had when made, before its base was written since.
        snapshot._value = state.tracer.value_of(target)
    snapshot.grad_fn = target.grad_fn
    snapshot._output_nr = target._output_nr
    snapshot._requires_grad = target._requires_grad
    snapshot._grad_accumulator = target._grad_accumulator
    snapshot._tangents = target._tangents
    return snapshot


def apply_inplace(target: Tensor, op_name: str, compute) -> Tensor:
    """Run `compute(source)` out of place and write the result into `target`.

    `compute` receives the tensor to read the old value from (the target itself, or a snapshot
    when the result will be recorded for autograd) and returns the new value.
    """
    plain = state.dispatch == PLAIN
    if plain:
        # Grad mode off and nothing else active (tensor/state.py): no history to keep, no
        # snapshot to take, no tangents to move, and of check_inplace's errors only this one.
        if target._is_inference:
            raise RuntimeError(INFERENCE_ERROR)
        recording = False
        source = target
    else:
        if state.grad_levels:
            CHECK_CAPTURED(target, op_name)
        check_inplace(target, op_name)
        recording = state.grad_enabled and not target._is_inference
        counter = target._counter
        if recording and target._view_source is not None and counter is not None and \
                target._view_version != counter.value and Tensor._refresh_view is not None:
            # a view whose base (or a sibling view) was written since its grad_fn was made:
            # the snapshot below must carry its current history, not the stale one
            Tensor._refresh_view(target)
        if state.forward_levels:
            REFRESH_TANGENTS(target)
        source = _snapshot(target) if recording or state.forward_levels else target
        if recording and target._view_source is not None and target.grad_fn is not None and \
                target.grad_fn._tensor_hooks and Tensor._refresh_view is not None:
            # The write reads the view through its base, as torch's CopySlices does: the
            # hooks on the view's own node see no gradient of it.
            Tensor._refresh_view(target, snapshot=source)
    result = compute(source)
    if not isinstance(result, Tensor):
        raise TypeError(f"{op_name}: expected a Tensor result")
    if result._dtype is not target._dtype:
        if result.dtype.category > target.dtype.category:
            raise RuntimeError(f"result type {_TORCH_NAMES[result.dtype.name]} can't be cast "
                               f"to the desired output type {_TORCH_NAMES[target.dtype.name]}")
        result = result.to(target.dtype)
    data, result_data = target._payload, result._payload
    if (data.shape != result_data.shape if data is not None and result_data is not None
            else tuple(result.shape) != tuple(target.shape)):
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match "
                           f"the broadcast shape {list(result.shape)}")
    if target._creation_meta is not None:
        check_view_write(target, result)
    if result._batched or target._batched:
        return _write_batched(target, result, op_name, recording)
    if plain:
        write_storage(target, result, op_name in _FILLS)
        return target
    base = target._base
    written_base = None
    if recording and base is not None and (result._requires_grad or base._requires_grad):
        # The base's values change too: its autograd history becomes the old base with the
        # result scattered in (torch's CopySlices), so gradients reach what was written.
        written_base = scatter_through(base, view_steps(target), result)
    write_storage(target, result, op_name in _FILLS)
    _take_history(target, result, recording)
    if written_base is not None and written_base.grad_fn is not None:
        _keep_retained(base, written_base.grad_fn, written_base._output_nr)
        base.grad_fn = written_base.grad_fn
        base._output_nr = written_base._output_nr
        base._requires_grad = True
    return target


def _write_batched(target: Tensor, result: Tensor, op_name: str, recording: bool) -> Tensor:
    """An in-place write inside vmap: the batch of results is written into the target's
    physical tensor (an in-place op there, recorded as any other), and the target takes the
    result's history at the batched level."""
    level = max(x._value.level for x in (target, result) if x._batched)
    physical, target_batched = physical_of(target, level)
    result_physical, result_batched = physical_of(result, level)
    if not target_batched:
        raise RuntimeError(
            f"vmap: {op_name}(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to "
            "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try "
            f"to use out-of-place operators instead of {op_name}. If said operator is being "
            "called inside the PyTorch framework, please file a bug report instead.")
    if not result_batched:
        result_physical = with_batch(result_physical, level_size(level))
    apply_inplace(physical, op_name, lambda _old: result_physical)
    _take_history(target, result, recording)
    return target


def _take_history(target: Tensor, result: Tensor, recording: bool) -> None:
    """The target of an in-place write now holds the result: its autograd history and its
    forward-AD tangents."""
    if state.forward_levels:
        WRITE_TANGENTS(target, result)
    if recording and result.grad_fn is not None:
        _keep_retained(target, result.grad_fn, result._output_nr)
        target.grad_fn = result.grad_fn
        target._output_nr = result._output_nr
        target._requires_grad = True


def _keep_retained(tensor: Tensor, node, output_nr: int) -> None:
    """retain_grad() follows a tensor to the grad_fn an in-place write gives it, as in torch:
    its .grad is the gradient of its new value (its hooks stay with the old one)."""
    old = tensor.grad_fn
    if not tensor._retains_grad or old is None or not old._retained:
        return
    entry = old._retained.pop(tensor._output_nr, None)
    if entry is None:
        return
    retained = node.__dict__.get("_retained")
    if retained is None:
        retained = node._retained = {}
    retained[output_nr] = entry


def view_steps(view: Tensor) -> list:
    """The (op, attrs) of the view ops that make `view` from its base, base first."""
    steps = []
    while view._view_source is not None:
        view, op, attrs = view._view_source
        steps.append((op, attrs))
    steps.reverse()
    return steps


def scatter_through(base: Tensor, steps: list, values: Tensor) -> Tensor:
    """`base` with `values` written where the view `steps` (view ops applied in order) address
    it, out of place: the flat positions the view reads are found by applying the same steps
    to the positions of base, which works for every view op and for symbolic sizes."""
    for position, (op, _) in enumerate(steps):
        retype = api.retyping_view(op)
        if retype is not None:
            # A view of other elements (a complex tensor's parts, real and imaginary, as a
            # real tensor's pairs): the write is scattered into the view of the part the steps
            # before it address, then that part into the base.
            part = base
            for before, before_attrs in steps[:position]:
                part = bind(before, (part,), before_attrs)
            written = scatter_through(retype[0](part), steps[position + 1:], values)
            return scatter_through(base, steps[:position], retype[1](written))
    if values.dtype is not base.dtype:
        values = values.to(base.dtype)
    if not steps:
        return values
    shape = tuple(base.shape)
    positions = api.reshape(arange(base.numel(), dtype=dtypes.int64,
                                   device=base.device if base.is_cuda else None), shape)
    for op, attrs in steps:
        positions = bind(op, (positions,), attrs)
    written = api.index_put(api.reshape(base, -1), api.reshape(values, -1),
                            api.unsqueeze(api.reshape(positions, -1), 0), (0,))
    return api.reshape(written, shape)


def check_no_overlap(out, inputs, data=None) -> None:
    """torch's assert_no_internal_overlap and assert_no_overlap, which the ops writing out=
    in another order than they read their inputs make (gather, take, index_select,
    masked_select, cat, kthvalue): out may not be a broadcast view, nor share memory with an
    input (torch's elementwise ops take an out that is exactly an input). Eager only: a traced
    tensor has no memory yet. `data`: the memory out will address, where not its own."""
    data = getattr(out, "_payload", None) if data is None else data
    if data.__class__ is not np.ndarray:
        return
    if not data.flags.writeable:
        raise RuntimeError(OVERLAP_ERROR)
    for x in inputs:
        if x is out or isinstance(x, Tensor) and x._payload.__class__ is np.ndarray and \
                np.may_share_memory(data, x._payload):
            raise RuntimeError(INPUT_OVERLAP_ERROR)


def write_storage(target: Tensor, result: Tensor, fill: bool = False) -> None:
    """Copy result's values into target's storage (views see it) and bump the version.
    `fill`: every element gets one value (fill_, zero_), which torch writes even where elements
    share memory."""
    if BEFORE_WRITE is not None:
        BEFORE_WRITE(target)
    if target._payload is not None and result._payload is not None:  # else tracing: ir/trace.py
        destination = target._payload
        if not destination.flags.writeable:
            base = target._base
            if base is not None and (base._dtype is dtypes.complex32) != \
                    (target._dtype is dtypes.complex32):
                raise RuntimeError(RETYPED_COPY_ERROR)
            destination = _writable_alias(destination, fill)
            if destination is None:
                raise RuntimeError(OVERLAP_ERROR)
        if destination.__class__ is not MetaArray:  # a meta tensor holds no values
            np.copyto(destination, result._payload, casting="unsafe")
    else:
        # While tracing, the tracer (ir/trace.py) records that target now holds result.
        tracer = state.tracer
        if tracer is None:
            raise RuntimeError("an in-place write to a symbolic tensor outside of tracing; the "
                               "trace it belongs to has finished")
        tracer.write(target, result)
    target._bump_version()


# ---- out= arguments ----------------------------------------------------------------------------

_RESIZE_WARNING = ("An output with one or more elements was resized since it had shape {old}, "
                   "which does not match the required output shape {new}. This behavior is "
                   "deprecated, and in a future PyTorch release outputs will not be resized "
                   "unless they have zero elements. You can explicitly reuse an out tensor t by "
                   "resizing it, inplace, to zero elements with t.resize_(0).")


def write_out(out, result: Tensor, op_name: str, dtype_error: Exception | None = None,
              castable: bool = False, inputs: tuple = ()) -> Tensor:
    """`result` written into `out` (torch's out= argument) and `out` returned.

    out's dtype must be result's (dtype_error, or torch's common message, otherwise), or with
    `castable` hold it (a cat writing floats into an int tensor raises dtype_error); an out of
    another shape is resized, with torch's warning unless it was empty. As in torch, out= does
    not support autograd.
    """
    if not isinstance(out, Tensor):
        raise TypeError(f"{op_name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if inputs:
        check_no_overlap(out, inputs)
    if state.grad_enabled and (result._requires_grad or out._requires_grad):
        raise RuntimeError(f"{op_name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if result.dtype is not out.dtype:
        if not castable or result.dtype.category > out.dtype.category:
            raise dtype_error or RuntimeError(
                f"Expected out tensor to have dtype {dtypes.c_type_name(result.dtype)}, but got "
                f"{dtypes.c_type_name(out.dtype)} instead")
        result = result.to(out.dtype)
    if tuple(out.shape) != tuple(result.shape):
        if out._payload is None or result._payload is None:
            from ..tensor.graph_break import graph_break

            graph_break(f"{op_name}(out=...) resizing its output", needs_data=False)
        if out.numel():
            warnings.warn(_RESIZE_WARNING.format(old=list(out.shape), new=list(result.shape)),
                          UserWarning, stacklevel=3)
        within = _resized_in_storage(out, tuple(result.shape))
        if within is None:
            out._payload = result.clone()._payload  # new storage of the new shape
            out._bump_version()
            return out
        # torch resizes a view within its base's storage where it fits: out then addresses
        # the storage from its offset on, and may overlap an input it did not overlap before.
        if inputs:
            check_no_overlap(out, inputs, within)
        out._payload = within
    write_storage(out, result)
    return out


def _writable_alias(data: np.ndarray, fill: bool):
    """A writable array over the memory of `data`, a read-only view of an expanded tensor
    (NumPy's broadcast arrays are read-only): torch writes such a view where no two of its
    elements share memory (a row of a tensor expanded along the rows), and fills it anywhere.
    None where it may not be written: elements sharing memory, or memory that is read-only
    (a device array's expanded views are refused as before)."""
    if data.__class__ is not np.ndarray:
        return None
    if not fill and any(stride == 0 and extent > 1
                        for stride, extent in zip(data.strides, data.shape)):
        return None
    owner = data
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner is data or not owner.flags.writeable or not owner.flags.c_contiguous:
        return None
    offset = data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    try:
        return np.ndarray(data.shape, data.dtype, buffer=owner, offset=offset,
                          strides=data.strides)
    except (TypeError, ValueError):
        return None


def _resized_in_storage(out: Tensor, shape: tuple):
    """The contiguous array of `shape` from out's first element on in the host buffer of the
    base it views, where that buffer holds it (torch keeps such a view in its storage), or
    None."""
    data = out._payload
    if out._base is None or data.__class__ is not np.ndarray or data.size == 0 or \
            not data.flags.c_contiguous:
        return None
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous or root.dtype != data.dtype:
        return None
    offset, remainder = divmod(data.__array_interface__["data"][0]
                               - root.__array_interface__["data"][0], data.itemsize)
    count = int(np.prod(shape, dtype=np.int64))
    if remainder or offset < 0 or offset + count > root.size:
        return None
    return root.reshape(-1)[offset:offset + count].reshape(shape)
