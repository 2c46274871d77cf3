"""The conditions a trace's guard set (guards.GuardSet) is built from, one builder per kind of
thing a trace depends on: the walk's observations of Python state (observation_conditions),
NumPy arrays and tensor values the trace read (array_conditions, data_read_conditions), the
tensors the graph reads and their hooks and .grad (reachable_tensor_conditions,
tensor_conditions, hook_conditions, grad_condition), Python scalars (scalar_condition), the
modes around the call (mode_conditions, register_mode_snapshot), symbolic sizes
(symbolic_conditions) and the arguments' memory layout, bases and writes (layout_conditions,
base_conditions, written_input_conditions). guard_stage.py calls them after a trace; the guard
set they fill is compiled into one predicate (guards.py, guard_code.py).
"""

from __future__ import annotations

import math
import re
import types

import numpy as np

from ..ir.eager_layout import layout_signature
from ..tensor import dtypes
from ..tensor.state import RECORDING, state
from ..tensor.tensor import Tensor
from ..tensor.torch_function import wrapped_function
from .array_values import array_bytes
from .guards import _KEY_SCALARS, GuardSet, _short, separate
from .nested_arguments import describe
from .reachability import MAX_ARRAY_BYTES, Walk


def observation_conditions(guards: GuardSet, observations: list, runtime=frozenset()) -> None:
    """The conditions of a walk's observations (reachability.py), in the walk's order: an
    object's class before what is read through it. Tensors are left to api.py, which
    guards the ones the trace read. A float at a path in `runtime` is read afresh on every
    call (a graph input): only its type is checked."""
    for observation in observations:
        kind, path, what = observation.kind, observation.path, observation.display
        if kind == "scalar" and path in runtime:
            kind_of = type(observation.value)
            guards.require(f"$.__class__ is {guards.constant(kind_of, 'K')}",
                           f"{what} is no longer a {kind_of.__name__}", path, what)
        elif kind == "scalar":
            scalar_condition(guards, "$", observation.value, what, subject=path, display=what,
                             tag=("float", path) if type(observation.value) in (float, int)
                             else None)
        elif kind == "class":
            guards.require(f"$.__class__ is {guards.constant(observation.value, 'K')}",
                           f"{what} is now another kind of object (was "
                           f"{observation.value.__qualname__})", path, what)
        elif kind == "len":
            guards.require(f"len($) == {observation.value}",
                           f"the length of {what} changed (was {observation.value})", path, what,
                           compared=(f"len({what})", observation.value, len))
        elif kind == "keys":
            keys = observation.value
            if all(isinstance(key, _KEY_SCALARS) for key in keys):
                # A list compares its items by identity first: the same key objects cost
                # no __eq__ call.
                condition = f"[*$] == {guards.constant(list(keys), 'C')}"
            else:  # objects (tensors): by identity only, never their __eq__
                condition = (f"len($) == {len(keys)} and all(map(is_, $, "
                             f"{guards.constant(keys, 'C')}))")
            guards.require(condition, f"the keys of {what} changed (were "
                           f"{_keys_text(keys)})", path, what,
                           compared=(f"the keys of {what}", _Shown(_keys_text(keys)),
                                     _keys_now))
        elif kind == "missing":  # a key or attribute name looked for and not found there
            key = observation.value
            literal = repr(key) if isinstance(key, _KEY_SCALARS) else guards.constant(key, "C")
            guards.require(f"{literal} not in $", f"{what} now holds {_key_repr(key)}", path,
                           what)
        elif kind == "absent":  # a global that was not defined, read on the globals
            guards.require(f"{observation.value!r} not in $",
                           f"the global {what} was defined (it was not when traced)", path[:-1])
        elif kind == "contents":
            guards.require(f"$ == {guards.constant(observation.value, 'C')}",
                           f"{what} changed (was {_short(observation.value)})", path, what)
        elif kind == "set":
            guards.require(f"$ == {guards.constant(observation.value, 'F')}",
                           f"{what} changed (was {set(observation.value)})", path, what)
        elif kind == "unset":  # an empty slot: read on its owner, where it would be
            guards.require(f"not hasattr($, {observation.value!r})",
                           f"{what} was set (it was empty)", path[:-1],
                           what[:-len(observation.value) - 1])
        elif kind == "is":
            guards.require(_identity(guards, observation.value),
                           f"{what} is another object than when traced", path, what)


def _identity(guards: GuardSet, value) -> str:
    """`$ is value`; for a function, also its dispatching wrapper (tensor/torch_function.py):
    a profiler, or the first tensor subclass with __torch_function__, puts wrappers in place
    of torch's public functions and takes them off again, which made every compiled function
    that reads one (`torch.flatten` in a model's forward) trace again under a profiler."""
    inner = wrapped_function(value)
    value = value if inner is None else inner
    name = guards.constant(value, "O")
    if value.__class__ not in (types.FunctionType, types.BuiltinFunctionType):
        return f"$ is {name}"
    return f"($ is {name} or {guards.constant(wrapped_function, 'C')}($) is {name})"


def arrays_to_compare(walk: Walk, graph) -> list:
    """The NumPy arrays a walk reached, less those the graph reads when it runs
    (`autojit.tensor(array)` inside the function, a tensor over the array's memory): the
    trace may have read their values in Python, so the guards compare them."""
    read = [entry.tensor._payload for entry in graph.captured_inputs
            if isinstance(entry.tensor._payload, np.ndarray)]
    return [found for found in walk.arrays.values()
            if not any(np.may_share_memory(found[2], data) for data in read)]


def array_budget_exceeded(arrays: list) -> str | None:
    """Why comparing `arrays` on every call would cost too much (their bytes are over
    MAX_ARRAY_BYTES), else None."""
    if sum(copy.nbytes for *_, copy in arrays) <= MAX_ARRAY_BYTES:
        return None
    return (f"it can reach NumPy arrays of more than {MAX_ARRAY_BYTES} bytes that the guards "
            f"would compare on every call ({', '.join(found[1] for found in arrays[:3])}); "
            "pass what it needs as arguments, or as tensors")


def array_conditions(guards: GuardSet, arrays: list) -> None:
    """The values of NumPy arrays the trace may have read in Python (reachability.Walk.arrays:
    (path, display, array, copy)): their shape, dtype and bytes."""
    for path, display, _, copy in arrays:
        guards.require(f"$.shape == {copy.shape!r} and $.dtype == "
                       f"{guards.constant(copy.dtype, 'D')} and "
                       f"{guards.constant(array_bytes, 'P', 'array_bytes')}($) == "
                       f"{guards.constant(array_bytes(copy), 'C')}",
                       f"the values of the NumPy array {display} changed", path, display)


def data_read_conditions(guards: GuardSet, walk: Walk, data_read: dict) -> str | None:
    """The values of the real tensors whose data Python read while tracing (`bool(t)`,
    `float(t)`, `t.numpy()`: ir/trace.py's data_read): the trace decided on them, so a call
    with other values must trace again. Returns why that cannot be guarded (a tensor the walk
    does not reach, one on a GPU, or more bytes than the budget), else None."""
    total = 0
    for tensor, what in data_read.values():
        found = walk.tensors.get(id(tensor))
        data = tensor._payload
        if found is None or not isinstance(data, np.ndarray):
            return (f"{what} read the values of a tensor the guards cannot compare on every "
                    "call (one the function's reachable state does not hold, or on a GPU)")
        total += data.nbytes
        if total > MAX_ARRAY_BYTES:
            return (f"{what} read the values of tensors of more than {MAX_ARRAY_BYTES} bytes, "
                    "too many to compare on every call")
        path, display, _ = found
        guards.require(f"$._payload.tobytes() == {guards.constant(data.tobytes(), 'C')}",
                       f"the values of {display} changed (the function read them in Python: "
                       f"{what})", path, display)
    return None




def _key_repr(key) -> str:
    return repr(key) if isinstance(key, _KEY_SCALARS) else f"<{type(key).__name__}>"


def _keys_text(keys) -> str:
    """Keys as a list shows them, without quoting a key's repr twice."""
    text = "[" + ", ".join(map(_key_repr, keys)) + "]"
    return text if len(text) <= 80 else text[:77] + "..."


def _keys_now(mapping) -> _Shown:
    return _Shown(_keys_text(list(mapping)))


def reachable_tensor_conditions(guards: GuardSet, walk: Walk, read: set, returned: list,
                                selected: set | None = None):
    """The tensors a walk reached whose values the graph does not read (`read`: ids of those
    it does): the trace may still have read their shape, dtype or requires_grad in Python
    (`n = self.buffer.shape[0]`), so those are checked; and a tensor the function returned
    as it is (`return self.buffer`, result_template's "object") must be the one its path
    holds. `selected`: the ids of the tensors the trace read (read_selection.py), or None for
    all the walk reached."""
    returned_ids = {id(tensor) for tensor in returned}
    for path, display, tensor in walk.tensors.values():
        if id(tensor) in read:
            continue  # api.py guards it with the graph's inputs
        if selected is not None and id(tensor) not in selected and \
                id(tensor) not in returned_ids:
            continue
        if id(tensor) in returned_ids:
            guards.require(f"$ is {guards.constant(tensor, 'T', display)}",
                           f"{display} is another tensor than when traced", path, display)
        tensor_conditions(guards, path, tensor, display, grad_is=False, hooks=False,
                          display=display)


def tensor_conditions(guards: GuardSet, subject: tuple, tensor: Tensor, what: str,
                      grad_is=True, dynamic_dims=(), hooks=True,
                      display: str | None = None) -> None:
    """Class, shape, dtype, device, requires_grad, hooks and .grad identity of the tensor at
    the `subject` path (`display`: its source path). The extents of `dynamic_dims` are left
    free here: symbolic_conditions checks them."""
    display = display or "".join(subject)
    dtype = guards.constant(tensor._dtype, "D")
    kind = guards.constant(type(tensor), "K")  # Tensor, or a subclass such as Parameter
    guards.require(f"$.__class__ is {kind} and $._payload is not None",
                   f"{what} is no longer a concrete {type(tensor).__name__}", subject, display)
    data = (*subject, "._payload")
    data_display = f"{display}._payload"
    shape = tuple(tensor._payload.shape)
    if dynamic_dims:
        static = " and ".join(f"$.shape[{dim}] == {extent}"
                              for dim, extent in enumerate(shape) if dim not in dynamic_dims)
        guards.require(f"$.ndim == {len(shape)}" + (f" and {static}" if static else ""),
                       f"{what} changed shape (was {_shape_text(shape, dynamic_dims)})", data,
                       data_display, compared=(f"{display}.shape", _Shown(
                           _shape_text(shape, dynamic_dims)), _shape_of))
    else:
        guards.require(f"$.shape == {shape!r}", f"{what} changed shape (was {list(shape)})",
                       data, data_display, compared=(f"{display}.shape", list(shape), _shape_of))
    guards.require(f"$._dtype is {dtype}", f"{what} changed dtype (was {tensor._dtype.name})",
                   subject, display, compared=(f"{display}.dtype", _Shown(tensor._dtype.name),
                                               _dtype_name))
    storage = guards.constant(tensor._payload.__class__, "S")  # ndarray (CPU) or CudaArray
    guards.require(f"$.__class__ is {storage}", f"{what} changed device (was {tensor.device})",
                   data, data_display)
    guards.require(f"$._requires_grad is {tensor._requires_grad}",
                   f"{what} changed requires_grad (was {tensor._requires_grad})", subject,
                   display, compared=(f"{display}.requires_grad", tensor._requires_grad,
                                      _requires_grad))
    if hooks:
        hook_conditions(guards, subject, tensor, what, display)
    if grad_is:
        grad_condition(guards, subject, tensor, what, display)


def hook_conditions(guards: GuardSet, subject: tuple, tensor: Tensor, what: str,
                    display: str | None = None) -> None:
    """The tensor's hooks (register_hook on a leaf, post-accumulate-grad hooks): the trace ran
    them, so which hooks there are, and what they can reach, is part of what it read."""
    if not tensor._requires_grad:
        return  # hooks need requires_grad, which is guarded
    hooks = [(name, getattr(tensor, name)) for name in ("_backward_hooks",
                                                        "_post_accumulate_hooks")]
    if not any(registered for _, registered in hooks):
        guards.require("not $._backward_hooks and not $._post_accumulate_hooks",
                       f"a hook was registered on {what}", subject, display)
        return
    for name, registered in hooks:
        if not registered:
            guards.require(f"not $.{name}", f"a hook was registered on {what}", subject,
                           display)
            continue
        walk = Walk([((*subject, f".{name}"), f"{what}.{name}", registered)])
        guards.add_constants(walk.constants)
        observation_conditions(guards, walk.observations)


def grad_condition(guards: GuardSet, subject: tuple, tensor: Tensor, what: str,
                   display: str | None = None) -> None:
    """Which object .grad is (None included): the trace read or assigned it."""
    display = display or "".join(subject)
    if tensor._grad is None:
        guards.require("$._grad is None", f"{what}.grad is no longer None", subject, display)
    else:
        grad = guards.constant(tensor._grad, "G", f"<the .grad of {display}>")
        guards.require(f"$._grad is {grad}", f"{what}.grad was replaced", subject, display)


def scalar_condition(guards: GuardSet, expression: str, value, what: str,
                     subject: tuple | None = None, display: str | None = None,
                     tag=None) -> None:
    """`expression` (with a subject path, "$") holds `value`: the same type and value."""
    compared = (display or what, value, _itself) if expression == "$" else None
    if value is None or isinstance(value, bool):
        guards.require(f"{expression} is {value!r}", f"{what} changed (was {value!r})", subject,
                       display, compared=compared)
        return
    if isinstance(value, float) and math.isnan(value):
        guards.require(f"{expression}.__class__ is float and isnan({expression})",
                       f"{what} changed (was nan)", subject, display, tag, compared)
        return
    if isinstance(value, float) and value == 0.0:
        # -0.0 == 0.0, but 1 / x tells them apart: the sign is part of the value.
        guards.require(f"{expression}.__class__ is float and {expression} == 0.0 and "
                       f"copysign(1.0, {expression}) == {math.copysign(1.0, value)!r}",
                       f"{what} changed (was {value!r})", subject, display, tag, compared)
        return
    if type(value) in (int, float) and math.isfinite(value):
        literal = repr(value)
    else:  # strings, bytes, complex, infinities and subclasses: compared to a constant
        literal = guards.constant(value, "C")
    guards.require(f"{expression}.__class__ is {guards.constant(type(value), 'K')} and "
                   f"{expression} == {literal}", f"{what} changed (was {_short(value)})",
                   subject, display, tag, compared)


class _Shown:
    """A value `changed` shows as its text, without quotes (a dtype's name)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _itself(value):
    return value


def _shape_of(data) -> list:
    return list(data.shape)


def _dtype_name(tensor) -> _Shown:
    return _Shown(tensor._dtype.name)


def _requires_grad(tensor) -> bool:
    return tensor._requires_grad



# Process-wide settings of the layers above that change what a traced call does (nn's global
# module hooks): functions returning a snapshot (a tuple of ints, strings, bools) that a
# trace's guard requires to be the same. Registered with register_mode_snapshot.
_MODE_SNAPSHOTS: list = []


def register_mode_snapshot(snapshot) -> None:
    """Guard every trace on `snapshot()` (what its docstring names) staying as it was."""
    _MODE_SNAPSHOTS.append(snapshot)


def mode_conditions(guards: GuardSet) -> None:
    default = guards.constant(dtypes.get_default_dtype(), "D")
    # Each read of a thread-local flag costs several plain reads. Traced with grad mode on and
    # no other mode (state.dispatch is RECORDING), a call made the same way holds the first
    # four conditions at once: one read of the summary, and the flags only where it differs.
    recording = state.dispatch == RECORDING
    shortcut, subject = (f"$ == {RECORDING} or ", ("state", ".dispatch")) if recording \
        else ("", None)
    guards.require(f"{shortcut}state.grad_enabled is {state.grad_enabled}",
                   f"grad mode changed (was {'enabled' if state.grad_enabled else 'disabled'})",
                   subject, internal=True)
    guards.require(f"{shortcut}state.inference is {state.inference}", "inference mode changed",
                   subject, internal=True)
    guards.require(f"{shortcut}state.anomaly is {state.anomaly}", "anomaly mode changed",
                   subject, internal=True)
    # A save under saved-tensor hooks is a graph break (autograd/graph_api.py): a trace made
    # without hooks must not run inside a block that has them.
    guards.require(f"{shortcut}bool(state.saved_tensor_hooks) is "
                   f"{bool(state.saved_tensor_hooks)}",
                   "saved tensor hooks were entered or left", subject, internal=True)
    for snapshot in _MODE_SNAPSHOTS:
        name = guards.constant(snapshot, "M")
        guards.require(f"{name}() == {snapshot()!r}", f"{snapshot.__doc__} changed",
                       internal=True)
    # The settings objects are interned (ops/autocast.py): one identity test.
    guards.require(f"state.autocast is {guards.constant(state.autocast, 'A')}",
                   f"autocast changed (was {state.autocast or 'off'})", internal=True)
    guards.require(f"dtypes._default_float[0] is {default}", "the default dtype changed",
                   internal=True)


def _shape_text(shape: tuple, dynamic_dims) -> str:
    return "[" + ", ".join("*" if dim in dynamic_dims else str(extent)
                           for dim, extent in enumerate(shape)) + "]"


_SYMBOL = re.compile(r"\bs(\d+)\b")
_RUNTIME = re.compile(r"\b[fi]\d+\b")


def symbolic_conditions(guards: GuardSet, env) -> None:
    """The conditions a dynamic trace recorded on its symbols (symbolic.ShapeEnv), with each
    symbol read from the argument dimension it stands for; every symbol is at least 2, since
    sizes 0 and 1 are traced as constants (broadcasting and empty tensors behave apart)."""

    def source(match) -> str:
        position, dim = env.sources[f"s{match.group(1)}"]
        return f"args[{position}]._payload.shape[{dim}]"

    for name in env.hints:
        guards.require(_SYMBOL.sub(source, f"{name} >= 2"),
                       f"a dynamic size ({name}) is 0 or 1")
    for condition in env.guards:
        guards.require(_SYMBOL.sub(source, condition),
                       f"the sizes broke a condition the trace relied on: {condition}")

    def runtime_source(match) -> str:  # a float read afresh: where it is read from
        _, scalar_source = env.runtime[match.group(0)]
        return f"({scalar_source.expression})"

    def runtime_display(match) -> str:  # the same place as the user names it
        _, scalar_source = env.runtime[match.group(0)]
        return scalar_source.display

    for condition in env.runtime_guards:
        sized = _SYMBOL.sub(source, condition)
        guards.require(_RUNTIME.sub(runtime_source, sized),
                       f"a scalar read on every call broke a condition the trace relied on: "
                       f"{condition}", display=_RUNTIME.sub(runtime_display, sized))


def layout_conditions(guards: GuardSet, args: tuple, graph, arg_positions: list,
                      layout_reads: dict) -> None:
    """Each argument or captured tensor whose layout the trace read to lay out a value as
    eager does (ir/eager_layout.py: whether a view of it aliases, how a result is laid out)
    keeps that layout's signature: a transposed argument where a row-major one was traced is
    another trace."""
    for entry in graph.inputs:
        if id(entry.value) not in layout_reads:
            continue
        if entry.kind == "arg":
            position = arg_positions[graph.arg_inputs.index(entry)]
            array, expression = args[position]._payload, f"args[{position}]._payload"
            what = describe(args, position)
        elif entry.kind == "captured":
            array = entry.tensor._payload
            expression = f"{guards.constant(entry.tensor, 'T', entry.name)}._payload"
            what = f"captured tensor {entry.name}"
        else:
            continue
        if array.__class__ is np.ndarray:
            guards.require(f"layout_signature({expression}) == {layout_signature(array)!r}",
                           f"{what} changed its memory layout (strides {array.strides} when "
                           "traced)")


def base_conditions(guards: GuardSet, args: tuple, graph, arg_positions: list,
                    base_reads: dict) -> None:
    """Each argument view whose base's storage the trace read (as_strided past the view's
    elements: ir/trace.py's argument_view) stays a view of that base at the same place: a view
    of another tensor, or elsewhere in it, is another trace."""
    for entry in graph.inputs:
        base = base_reads.get(id(entry.value))
        if base is None or entry.kind != "arg":
            continue
        position = arg_positions[graph.arg_inputs.index(entry)]
        argument = args[position]
        name = guards.constant(base, "T", f"the base of argument {position}")
        guards.require(f"args[{position}]._base is {name}",
                       f"{describe(args, position)} is a view of another tensor (as_strided "
                       "read its base's storage)")
        guards.require(f"args[{position}].storage_offset() == {argument.storage_offset()!r} and "
                       f"args[{position}]._payload.strides == {argument._payload.strides!r}",
                       f"{describe(args, position)} is another view of its base")


def written_input_conditions(guards: GuardSet, args: tuple, graph, arg_positions: list,
                             first_writes: dict):
    """Conditions for a graph that writes an input (an argument, or a captured tensor while
    arguments are read): the graph reads every input before anything is written back, so an
    input the function reads after another input's first write (`first_writes`: id(Input) ->
    node count then) must not share that input's memory, nor may two written inputs share
    memory; and views of a written argument were laid out as its strides were. Returns a
    description of an overlap the call being traced has (it must run eagerly), else None."""
    position_of = {id(entry): position for entry, position in zip(graph.arg_inputs,
                                                                    arg_positions)}
    written = [output.target for output in graph.outputs if output.kind == "update"]
    if not arg_positions or not written:
        return None
    for entry in written:
        if entry.kind == "arg":
            position = position_of[id(entry)]
            argument = args[position]
            if argument._payload.__class__ is np.ndarray:
                strides = argument._payload.strides
                guards.require(f"args[{position}]._payload.strides == {strides!r}",
                               f"{describe(args, position)}, written in place, changed its "
                               "memory layout")
            guards.require(f"args[{position}]._is_inference is {argument._is_inference}",
                           f"{describe(args, position)}, written in place, changed inference "
                           "mode")
    inputs = [entry for entry in graph.inputs if entry.kind in ("arg", "captured")]
    written_ids = {id(entry) for entry in written}

    def source(entry):
        if entry.kind == "arg":
            position = position_of[id(entry)]
            return f"args[{position}]", args[position], describe(args, position)
        return (guards.constant(entry.tensor, "T", entry.name), entry.tensor,
                f"captured tensor {entry.name}")

    # Where each value is last read: an input is read after a write when its last read is,
    # one walk over the graph for all the written inputs.
    last_read = {id(operand): index for index, node in enumerate(graph.nodes)
                 for operand in node.inputs}
    overlap = None
    for entry in written:
        start = first_writes.get(id(entry), 0)
        others = [other for other in inputs if other is not entry and (
            entry.kind == "arg" or other.kind == "arg") and (
            last_read.get(id(other.value), -1) >= start or id(other) in written_ids)]
        if not others:
            continue
        expression, tensor, what = source(entry)
        listed = [source(other) for other in others]
        listing = ", ".join(f"{other}._payload" for other, _, _ in listed)
        guards.require(f"separate(({expression}._payload,), ({listing},))",
                       f"{what}, written in place, now shares memory with an input read after "
                       f"the write")
        if overlap is None and not separate((tensor._payload,), tuple(
                other._payload for _, other, _ in listed)):
            overlap = (f"{what} is written in place and shares memory with another input of "
                       f"the call that is read after the write")
    return overlap
