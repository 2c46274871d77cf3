"""The op registry and `bind`, the single entry point through which every primitive runs.

A primitive is declared once with `define_op`, with everything it needs side by side: the shape
rule, the dtype rule, the NumPy reference impl, the VJP (written in autojit ops) with the inputs
it saves, and its lowering for codegen. `define_op` takes these as required keywords and
`check_registry` runs at import, so a primitive with a missing rule fails at import, not in use.

`bind(op, inputs, attrs)` runs the op eagerly (impl on NumPy arrays) or, while tracing, appends
an IR node (ir/trace.py), or the nodes of its primitives for an op with a Decomposition
(`decompose`); either way it then records the autograd Node (autograd/graph.py). The lowering
descriptors are defined in lowering.py and read from here as well.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

import numpy as np

from ..tensor import dtypes
from ..tensor.state import SPECIAL, state
from ..tensor.tensor import Tensor
from .complex_rules import complex_error
from .dtype_rules import (  # noqa: F401 - the dtype rules, read from here by most families
    _PROMOTE_CACHE,
    promoted_dtype,
    rule_bool,
    rule_compare,
    rule_first,
    rule_float,
    rule_index,
    rule_promote,
)
from .eager_results import (  # noqa: F401 - view_tensor and the complex32 results, too
    COMPLEX32_WARNING,
    _operand_arrays,
    complex32_result,
    retyped_copy,
    view_tensor,
)
from .iterator_layout import torch_ordered
from .limited_rules import LIMITED, limited_error, refused_dtype
from .lowering import (  # noqa: F401
    COMBINE_IDENTITY,
    EXTERN_ROLES,
    LOWERINGS,
    Background,
    Decomposition,
    Elementwise,
    Extern,
    Layout,
    Reduction,
    communicates,
    companions,
    host_index_operand,
)
from .shape_rules import broadcast_shapes, infer, input_shapes, shape_error  # noqa: F401

REGISTRY: dict[str, Op] = {}
# Primitives made while the program runs, one per custom operator called inside a compiled
# function (library_graph.py): graphs may hold them, the kernel cache on disk does not (their
# names are this process's), and the op table's checks of REGISTRY do not see them.
RUNTIME: dict[str, Op] = {}
NOT_DIFFERENTIABLE = None

# autograd/graph.py installs its `record` here when it is imported: bind records an op's
# autograd node through it, since the autograd layer sits above ops and is not imported here.
RECORD = None
# autograd/forward_ad.py installs its `propagate` here: while a dual level is active, bind
# pushes the inputs' tangents through the op with it.
FORWARD = None
# autograd/function.py installs `delayed_error(message, tensor)` here: the tensor as a new one
# whose backward raises `message` (torch's Error node), for a VJP whose result torch does not
# differentiate again.
DELAYED_ERROR = None
# autograd/multi_output.py installs `share_node(outputs, inputs, name)` here: the outputs of a
# composite that torch differentiates as one op (unbind, split, var_mean) get one grad_fn,
# named `name`, as torch's do (`share_node` below calls it).
SHARE_NODE = None
# ops/batching.py installs its `dispatch` here: inside vmap, bind runs an op on batched
# operands through it.
BATCH = None
# autograd/vjp_chain.py sets this while it records a VJP: run_eager reports each op it runs
# for bind's plain path as STEP(op, inputs, attrs, arrays given to the impl, result).
STEP = None


class OpError(Exception):
    """An error an impl raises for the user as it stands, with torch's type and message (an
    index out of range, say): `run_eager` raises `error` itself instead of turning it into a
    shape error naming the op."""

    def __init__(self, error: Exception):
        super().__init__(error)
        self.error = error



_FLOATING, _COMPLEX = dtypes.FLOATING, dtypes.COMPLEX


# ---- the op record ------------------------------------------------------------------------------

class Op:
    """One primitive. See `define_op` for the fields."""

    __slots__ = ("name", "shape", "dtype", "impl", "vjp", "jvp", "batch", "saves", "lowering",
                 "view", "grad_name", "node_class", "arity", "float32_scalars", "static_vjp",
                 "uncast", "complex", "traces_bfloat16", "limited", "kernel", "scans_limited",
                 "embeds_gradient", "saved_names")

    def __repr__(self):
        return f"<op {self.name}>"


def define_op(*, name: str, arity: int, shape: Callable, dtype: Callable, impl: Callable,
              vjp: Callable | None, saves: tuple, lowering, jvp: Callable | None = None,
              batch: Callable | None = None, grad_name: str | None = None,
              view: bool = False, float32_scalars: tuple = (),
              static_vjp: bool | None = None, uncast: tuple = (),
              complex: bool | str | tuple | None = None,  # noqa: A002
              traces_bfloat16: bool = False, limited: tuple | None = None,
              kernel: str | None = None, embeds_gradient: Op | None = None,
              saved_names: dict | None = None, runtime: bool = False) -> Op:
    """Declare a primitive; every keyword but jvp, batch, grad_name, view, float32_scalars,
    static_vjp, uncast, complex, traces_bfloat16, limited, kernel, embeds_gradient and
    saved_names is required.

    shape(*input_shapes, **attrs) -> output shape (scalars have shape ()); raises ValueError with
        a message naming the problem when the inputs do not fit.
    dtype(inputs, attrs) -> (compute dtype, output dtype); one of the rule_* functions above.
    impl(*arrays, **attrs) -> ndarray: the NumPy reference, the ground truth of every backend.
        A Reduction's or a Decomposition's result is made row-major (row_major_result).
    vjp(ctx, grad) -> one gradient (a Tensor or None) per input, in autojit ops; or
        NOT_DIFFERENTIABLE. Un-broadcasting and dtype casts of the results happen in the engine.
    jvp(inputs, tangents, out, attrs) -> the output's tangent (a Tensor, or None for zero), in
        autojit ops, from one tangent (a Tensor or None) per input; broadcasting to the
        output's shape and the cast to its dtype happen in autograd/forward_ad.py. Without one,
        forward mode transposes the VJP (exact, slower).
    batch(op, inputs, batched, attrs, size) -> the result for a batch (vmap): the inputs are the
        physical tensors, batched along their first dim where `batched[i]`, `size` the batch
        size; the result is batched along its first dim. Elementwise ops and reductions get
        theirs from their lowering (ops/batching.py); without one, vmap runs the op once per
        index of the batch.
    saves: what the vjp reads through ctx: input indices, "out", or (i, j) = input i (or "out"),
        only when input j needs a gradient. Only saved values are kept alive and version-checked.
    lowering: Elementwise, Reduction, Layout, Extern or Decomposition (lowering.py), for
        codegen.
    view: the eager result may alias the input's storage (it shares the version counter).
    float32_scalars: the input positions where, in a bfloat16 computation, a Python number is
        read in float32 instead of rounded to bfloat16 first, and so is a 0-d tensor of another
        dtype at position 1: torch's mul, div and floor_divide kernels read a scalar second
        operand at float32 precision, where its other ops convert it to bfloat16.
    static_vjp: the VJP runs the same primitives for any values of inputs of the same shapes,
        dtypes and attrs (it reads no tensor value in Python), so a backward pass that builds no
        graph may run it as the NumPy calls it made before (autograd/vjp_chain.py). None: true
        for an Elementwise, Reduction, Layout or Decomposition lowering, false for an Extern.
    uncast: the input positions eager dispatch hands to the impl in their own dtype, not cast
        to the compute dtype: where's condition, which the impl reads as nonzero or not in any
        dtype (casting a bool mask to float32 would cost a pass and a copy the size of the
        values).
    complex: whether the op takes complex tensors, its impl and VJP (and JVP) correct for them
        under torch's conventions (docs/notes/complex.md). True; or, where it does not, the
        error a complex operand raises: None (the default) raises torch's usual
        NotImplementedError naming the op, a string is the message of that
        NotImplementedError ("{type}" stands for the operand's ScalarType name,
        "ComplexFloat"), an (exception type, message) pair is raised as it says. None is
        True for a Layout lowering (a layout moves elements, whatever their type).
    traces_bfloat16: a compiled function traces the op on bfloat16 operands or results where
        autograd does not record it (no kernel fuses a bfloat16 value, and the plan's step
        running the node rounds through run_eager as eager does); other ops on bfloat16
        tensors break the graph, since a kernel or a decomposition would compute in float32
        without rounding each result.
    embeds_gradient: for an op whose result is a view of its input (slice), the op whose
        impl(grad, input_shape, **attrs) is the VJP's value: zeros of the input's shape with
        the gradient where this op's impl(zeros, **attrs) views them (embed_slice). A backward
        pass that builds no graph may then write a gradient into the input's gradient buffer
        there, instead of adding a zero-padded one (autograd/engine.py `_embed_into_buffer`).
    saved_names: what the node shows as torch's `grad_fn._saved_<name>`, by torch's schema
        names: name -> an input position or "out" (that saved value), or a function
        (ctx, saved, raw) -> the value, where saved(position) is the tensor saved there (None
        for none; with raw, torch's SavedTensor handle of it). Without it, inputs 0 and 1 are
        `self` and `other` (autograd/saved_access.py); the attrs are `_saved_<attr>` always.
    runtime: the op is made while the program runs (RUNTIME), not at import.
    """
    if name in REGISTRY or name in RUNTIME:
        raise ValueError(f"op {name!r} is defined twice")
    op = Op()
    if lowering.__class__ in (Reduction, Decomposition):
        impl = row_major_result(impl)
    elif arity != 1 and (lowering.__class__ is Elementwise or (
            lowering.__class__ is Extern and lowering.routine == "numpy_elementwise")):
        # Operands laid out differently: torch's layout of the result, not NumPy's
        # (iterator_layout.py).
        impl = torch_ordered(impl, arity)
    op.name, op.arity, op.shape, op.dtype, op.impl = name, arity, shape, dtype, impl
    op.vjp, op.saves, op.lowering, op.view = vjp, tuple(saves), lowering, view
    op.jvp, op.batch = jvp, batch
    op.float32_scalars = tuple(float32_scalars)
    op.uncast = tuple(uncast)
    op.static_vjp = (vjp is not None and not isinstance(lowering, Extern)
                     if static_vjp is None else static_vjp)
    op.complex = (lowering.__class__ is Layout) if complex is None else complex
    op.traces_bfloat16 = traces_bfloat16
    op.limited = frozenset(LIMITED if limited is None and lowering.__class__ is Layout
                           else limited or ())
    op.kernel = kernel or f"{name}_cpu"
    op.embeds_gradient = embeds_gradient
    op.saved_names = saved_names
    # Whether a dispatch with no compute dtype looks for limited dtypes among the inputs.
    op.scans_limited = not op.limited.issuperset(LIMITED)
    # The name of its autograd node's class (grad_fn.name()); autograd makes the class.
    op.grad_name = grad_name or "".join(part.title() for part in name.split("_")) + "Backward0"
    op.node_class = None
    (RUNTIME if runtime else REGISTRY)[name] = op
    return op


def row_major_result(impl):
    """impl with a row-major result, strides of size-1 dims included, as torch's reduction,
    softmax and layer_norm kernels allocate theirs whatever the input's layout and as compiled
    kernels write every result but those that follow their operands' (ir/eager_layout.py).
    NumPy's reductions follow the input's layout: the sum over the last dim of a transposed
    array was transposed, so its view(-1) raised where torch's does not."""
    def row_major_impl(*arrays, **attrs):
        result = impl(*arrays, **attrs)
        return row_major(result) if result.__class__ is np.ndarray else result

    return row_major_impl


def row_major(array: np.ndarray) -> np.ndarray:
    """array itself when it is row-major with torch's strides (a dim of size 1 too has the
    step of the dims inside it), else a row-major copy."""
    return array if _standard_strides(array) else np.array(array, order="C")


def _standard_strides(array: np.ndarray) -> bool:
    if not array.flags.c_contiguous:
        return False
    if 1 not in array.shape:
        return True
    step = array.itemsize
    for extent, stride in zip(reversed(array.shape), reversed(array.strides)):
        if stride != step and array.size:
            return False
        step *= max(extent, 1)
    return True


def check_registry() -> None:
    """Fail loudly when a primitive lacks a rule; runs when autojit.ops is imported."""
    for op in REGISTRY.values():
        problems = []
        for field in ("shape", "dtype", "impl"):
            if not callable(getattr(op, field)):
                problems.append(f"{field} is not callable")
        if op.vjp is not None and not callable(op.vjp):
            problems.append("vjp is neither callable nor NOT_DIFFERENTIABLE")
        if op.jvp is not None and not callable(op.jvp):
            problems.append("jvp is neither callable nor None")
        if not isinstance(op.static_vjp, bool) or (op.static_vjp and op.vjp is None):
            problems.append("static_vjp is not a bool, or is true without a vjp")
        if not isinstance(op.lowering, LOWERINGS):
            problems.append(f"lowering {op.lowering!r} is not one of {LOWERINGS}")
        problems.extend(_lowering_problems(op))
        for entry in op.saves:
            if not (entry == "out" or isinstance(entry, int) or
                    (isinstance(entry, tuple) and len(entry) == 2)):
                problems.append(f"saves entry {entry!r} is not an index, 'out' or a pair")
        if problems:
            raise TypeError(f"op {op.name!r} is incomplete: " + "; ".join(problems))


def _lowering_problems(op: Op) -> list:
    """What is wrong with the fields of an op's lowering descriptor."""
    lowering = op.lowering
    if isinstance(lowering, Elementwise):
        if not isinstance(lowering.expression, str) or not isinstance(lowering.exact, bool):
            return ["Elementwise needs an expression string and a bool `exact`"]
        if not isinstance(lowering.complex_expression, (bool, str)) and \
                not callable(lowering.complex_expression):
            return ["Elementwise.complex_expression is neither a bool, a template nor a "
                    "function"]
    elif isinstance(lowering, Reduction):
        if op.arity != 1:
            return ["a Reduction takes one input"]
        if lowering.combine is not None and lowering.combine not in COMBINE_IDENTITY:
            return [f"Reduction.combine {lowering.combine!r} is not one of "
                    f"{sorted(COMBINE_IDENTITY)} or None"]
        if lowering.logical and lowering.combine not in ("max", "min"):
            return ["a logical Reduction combines by max (any) or min (all)"]
    elif isinstance(lowering, Layout):
        if lowering.fold is not None and not callable(lowering.fold):
            return ["Layout.fold is neither callable nor None"]
        if lowering.start is not None and (not callable(lowering.start) or
                                           lowering.fold is None):
            return ["Layout.start is neither callable nor None, or has no fold beside it"]
        if lowering.places is not None and not callable(lowering.places):
            return ["Layout.places is neither callable nor None"]
    elif isinstance(lowering, Decomposition):
        if not callable(lowering.function):
            return ["Decomposition.function is not callable"]
    elif isinstance(lowering, Extern):
        if len(lowering.operands) != op.arity:
            return [f"Extern names {len(lowering.operands)} operand roles for {op.arity} "
                    "inputs"]
        unknown = set(lowering.operands) - EXTERN_ROLES
        if unknown:
            return [f"Extern operand roles {sorted(unknown)} are not among "
                    f"{sorted(EXTERN_ROLES)}"]
        background = lowering.background
        if background is not None and not (
                isinstance(background, Background) and callable(background.start) and
                callable(background.progress) and callable(background.finish)):
            return ["Extern.background is not a Background of three callables"]
    return []


# ---- dispatch -------------------------------------------------------------------------------

def bind(op: Op, inputs: tuple, attrs: dict) -> Tensor:
    """Run one primitive on Tensors and Python scalars and record it for autograd.

    Plain eager mode (no tracer, vmap, forward AD, profiler, anomaly or inference mode, no
    saved-tensor hooks: one read of state.dispatch says so) runs the impl and records the
    node directly; the rest goes through `_bind`. See docs/notes/eager-dispatch.md.
    """
    mode = state.dispatch
    if mode == SPECIAL:
        profiler = state.profiler
        if profiler is not None:
            return profiler.forward_event("autojit::" + op.name, inputs,
                                          lambda: _bind(op, inputs, attrs))
        return _bind(op, inputs, attrs)
    out = run_eager(op, inputs, attrs, True)
    if mode and op.vjp is not None and out._dtype.category >= _FLOATING:
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                RECORD(op, inputs, attrs, out, False)
                break
    return out


def _bind(op: Op, inputs: tuple, attrs: dict) -> Tensor:
    if state.vmap_levels and _any_batched(inputs):
        out = BATCH(op, inputs, attrs)
    else:
        out = _run(op, inputs, attrs)
    if state.grad_enabled and op.vjp is not None and out._dtype.category >= _FLOATING:
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                RECORD(op, inputs, attrs, out)
                break
    if state.forward_levels:
        FORWARD(op, inputs, attrs, out)
    return out


def decompose(op: Op, inputs: tuple, attrs: dict) -> Tensor:
    """An op with a Decomposition run as the primitives of its function, which neither autograd
    nor forward mode records: the caller records the op itself."""
    previous_grad, previous_levels = state.grad_enabled, state.forward_levels
    state.grad_enabled, state.forward_levels = False, ()
    try:
        return op.lowering.function(*inputs, **attrs)
    finally:
        state.grad_enabled, state.forward_levels = previous_grad, previous_levels


def share_node(outputs: tuple, inputs: tuple, name: str, saved: dict | None = None) -> tuple:
    """The outputs of one composite call on `inputs`, made the outputs of one autograd node
    named `name` (SHARE_NODE) when autograd is loaded; `saved`: its torch `_saved_<name>`s."""
    return SHARE_NODE(outputs, inputs, name, saved) if SHARE_NODE is not None else outputs


def linear_jvp(op: Op, tangents, attrs):
    """The JVP of an op linear in its one input: the op itself, with its attrs, on the
    tangent (None, a zero tangent, stays zero)."""
    (tangent,) = tangents
    return None if tangent is None else bind(op, (tangent,), attrs)


def _any_batched(inputs: tuple) -> bool:
    for x in inputs:
        if isinstance(x, Tensor) and x._batched:
            return True
    return False


def _run(op: Op, inputs: tuple, attrs: dict) -> Tensor:
    tracer = state.tracer
    if tracer is not None:
        quiet = tracer.quiet_trace
        if quiet is not None and sys.gettrace() is quiet:
            # The compiler's read recorder (Python 3.10, 3.11) is off while a primitive is
            # traced: this runs autojit's code alone (a Tensor subclass's __torch_function__
            # breaks the graph instead of running under a trace, tensor/torch_function.py),
            # and its global trace function would be called on every Python call made here
            # (docs/notes/compile-latency.md).
            sys.settrace(None)
            try:
                return _traced(op, inputs, attrs, tracer)
            finally:
                sys.settrace(quiet)
        return _traced(op, inputs, attrs, tracer)
    return run_eager(op, inputs, attrs)


def _traced(op: Op, inputs: tuple, attrs: dict, tracer) -> Tensor:
    """The node of `op` in the trace (decomposed into its primitives where it has a
    Decomposition), after the checks eager would make of its dtypes."""
    if op.complex is not True and _involves_complex(op, inputs, attrs):
        raise complex_error(op, inputs)
    compute, out_dtype = op.dtype(inputs, attrs)
    if out_dtype.limited or (compute.limited if compute is not None else op.scans_limited):
        refused = refused_dtype(op, inputs, compute, out_dtype)
        if refused is not None:
            raise limited_error(op, refused)
    # A complex op is traced like a real one: the compiled plan runs it by its impl, since
    # kernels fuse real dtypes only (docs/notes/complex.md).
    if op.lowering.__class__ is Decomposition:
        out = decompose(op, inputs, attrs)
        # Row-major in eager (row_major_result), whatever the composite's last op follows.
        tracer.note_eager_layout(out, None)
        return out
    if _involves_bfloat16(op, inputs, attrs) and not (
            op.traces_bfloat16 and not _records_grad(inputs)):
        from ..tensor.graph_break import graph_break

        # Kernels compute in float32 without rounding each result to bfloat16, so a
        # traced bfloat16 op would be silently wrong: the call runs eagerly instead.
        graph_break(f"{op.name} on bfloat16 tensors (compiled code does not round to "
                    "bfloat16)", needs_data=False)
    float8 = _float8_involved(inputs, out_dtype)
    if float8 is not None:
        from ..tensor.graph_break import graph_break

        # Likewise for float8, stored as float32 (tensor/float8.py).
        graph_break(f"{op.name} on {float8.name} tensors (compiled code does not round to "
                    "float8)", needs_data=False)
    return tracer.bind(op, inputs, attrs)


_BFLOAT16 = dtypes.bfloat16  # stored as float32: results are rounded (tensor/dtypes.py)
_COMPLEX32 = dtypes.complex32  # stored as complex64, likewise (docs/notes/complex32.md)



def _involves_complex(op: Op, inputs: tuple, attrs: dict) -> bool:
    return _any_complex(inputs) or op.dtype(inputs, attrs)[1].category == _COMPLEX


def _records_grad(inputs: tuple) -> bool:
    """Whether autograd records the op: its VJP (a compiled backward) would then run other
    ops on bfloat16 gradients, which break the graph where no call can fall back to eager."""
    return state.grad_enabled and any(isinstance(x, Tensor) and x._requires_grad
                                      for x in inputs)


def _float8_involved(inputs: tuple, out_dtype) -> dtypes.DType | None:
    """The float8 dtype among the op's inputs' and result's, or None."""
    if out_dtype.float8 is not None:
        return out_dtype
    for x in inputs:
        if isinstance(x, Tensor) and x._dtype.float8 is not None:
            return x._dtype
    return None


def _involves_bfloat16(op: Op, inputs: tuple, attrs: dict) -> bool:
    for x in inputs:
        if isinstance(x, Tensor) and x._dtype is _BFLOAT16:
            return True
    return op.dtype(inputs, attrs)[1] is _BFLOAT16


# Set once a device other than the CPU is first used: autojit.cuda.eager.dispatch (ops on CUDA
# tensors as kernels), ops/meta.py's (meta tensors), or both in turn (add_device_dispatch);
# each returns None when no input is on its device. Until then the CPU path pays one check.
CUDA_DISPATCH = None
DEVICE_DISPATCHES: list = []


def add_device_dispatch(dispatch, first: bool = False) -> None:
    """Run `dispatch(op, inputs, attrs)` (the op's result, or None where no input is on its
    device) before the CPU impl: after the dispatches added before it, or with `first` ahead
    of them."""
    global CUDA_DISPATCH
    DEVICE_DISPATCHES.insert(0 if first else len(DEVICE_DISPATCHES), dispatch)
    CUDA_DISPATCH = dispatch if len(DEVICE_DISPATCHES) == 1 else _each_device


def _each_device(op: Op, inputs: tuple, attrs: dict):
    for dispatch in DEVICE_DISPATCHES:
        out = dispatch(op, inputs, attrs)
        if out is not None:
            return out
    return None


def run_eager(op: Op, inputs: tuple, attrs: dict, plain: bool = False) -> Tensor:
    """Run `op`'s impl on the inputs' data now and wrap the result; `plain`: the caller found
    state.dispatch not SPECIAL, so the result needs no tracer note or inference flag."""
    compute, out_dtype = op.dtype(inputs, attrs)
    if op.complex is not True and (
            out_dtype.category == _COMPLEX or (compute.category == _COMPLEX if compute is not None
                                               else _any_complex(inputs))):
        raise complex_error(op, inputs)
    if out_dtype.limited or (compute.limited if compute is not None else op.scans_limited):
        refused = refused_dtype(op, inputs, compute, out_dtype)
        if refused is not None:
            raise limited_error(op, refused)
    if CUDA_DISPATCH is not None:
        out = CUDA_DISPATCH(op, inputs, attrs)
        if out is not None:
            return out
    if compute is None:
        arrays = [x._payload if isinstance(x, Tensor) else x for x in inputs]
    else:
        # The common case first: tensors already of the compute dtype, and float scalars
        # outside bfloat16; anything else converts every operand in _operand_arrays.
        arrays = []
        for x in inputs:
            if isinstance(x, Tensor):
                if x._dtype is compute:
                    arrays.append(x._payload)
                    continue
            elif x.__class__ is float and compute is not _BFLOAT16 and \
                    compute is not _COMPLEX32:
                arrays.append(x)
                continue
            arrays = _operand_arrays(op, inputs, compute)
            break
    if warnings.filters is not _FILTERS_SEEN[0]:
        keep_quiet()
    try:
        result = op.impl(*arrays, **attrs) if attrs else op.impl(*arrays)
    except OpError as wrapped:
        raise wrapped.error from None
    except (ValueError, IndexError, TypeError) as error:
        raise shape_error(op, inputs, attrs, error) from None
    except (RuntimeWarning, FloatingPointError):
        # Warnings turned into errors by the caller's filters or np.seterr: inf and nan are
        # values here, so run the op again with NumPy's floating-point checks off.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = op.impl(*arrays, **attrs)
    if result.__class__ is not np.ndarray:
        result = np.asarray(result)
    wanted = out_dtype.numpy
    if result.dtype is not wanted and result.dtype != wanted:
        result = result.astype(wanted)
    if op.view and np.may_share_memory(result, arrays[0]):
        out = view_tensor(result, out_dtype, op, inputs[0], attrs)
    elif op.view and (out_dtype is _COMPLEX32) != (inputs[0]._dtype is _COMPLEX32):
        out = retyped_copy(result, out_dtype, inputs[0])
    else:
        if out_dtype is _BFLOAT16 and not op.view:
            # Computed in float32; a bfloat16 result is rounded, as torch rounds its kernels'.
            result = dtypes.round_to_bfloat16(result)
        elif out_dtype is _COMPLEX32:
            # Computed in complex64; a complex32 result's parts are rounded to float16.
            result = complex32_result(result)
        elif out_dtype.float8 is not None and not op.view:
            # Stored as float32, as bfloat16 is: a cast's result is rounded to the format.
            result = dtypes.round_to_float8(result, out_dtype)
        if plain:  # plain_tensor's body, inlined (every eager op's result)
            out = _new_object(Tensor)
            out._payload = result
            out._dtype = out_dtype
            out._requires_grad = False
            out._grad = None
            out.grad_fn = None
            out._output_nr = 0
            out._counter = None
        else:
            out = Tensor._make(result, out_dtype)
    if STEP is not None and plain:
        STEP(op, inputs, attrs, arrays, out)
    return out


_new_object = object.__new__


def _any_complex(inputs: tuple) -> bool:
    for x in inputs:
        if isinstance(x, Tensor) and x._dtype.category == _COMPLEX:
            return True
    return False


# inf and nan are values here, as in torch: NumPy's floating-point warnings from op impls are
# silenced for autojit's own modules only (a per-op errstate context costs more than the op);
# autojit's own RuntimeWarnings (a CUDA library that failed) still show.
_QUIET_MODULES = r"autojit\."
_QUIET_MESSAGES = (r"(invalid value|divide by zero|overflow|underflow) encountered|Mean of empty "
                   r"slice|Degrees of freedom <= 0|All-NaN (slice|axis) encountered")
warnings.filterwarnings("ignore", _QUIET_MESSAGES, RuntimeWarning, _QUIET_MODULES)
_FILTERS_SEEN = [warnings.filters]


def keep_quiet() -> None:
    """Put the filter above back if the filter list is another than when last looked at: a
    `warnings.catch_warnings()` block that autojit was imported in (pytest runs each test in
    one) takes it away when it ends, and NumPy's warnings of nan cast to an integer or of
    log(0) would show where torch gives none."""
    filters = warnings.filters
    if filters is _FILTERS_SEEN[0]:
        return
    for action, message, category, module, _line in filters:
        if action == "ignore" and category is RuntimeWarning and \
                getattr(module, "pattern", module) == _QUIET_MODULES and \
                getattr(message, "pattern", message) == _QUIET_MESSAGES:
            break
    else:
        warnings.filterwarnings("ignore", _QUIET_MESSAGES, RuntimeWarning, _QUIET_MODULES)
    _FILTERS_SEEN[0] = warnings.filters
