"""The first three compile stages (stages.py): trace a call, prune the gradients it kept for
itself, and guard what it depended on.

`trace(compiled, args)` walks everything the function can reach (reachability.py), runs the
function on symbolic copies of its tensor arguments under a Tracer (ir/trace.py), so that
forward, backward and optimizer updates land in one graph, restores the real tensors and the
Python state it saw, and compares a second walk with the first to see what the call wrote. It
returns a Trace, or an EagerCall when this call must run eagerly (anomaly mode with results
differentiated outside), and raises GraphBreak for what a graph cannot hold.

`prune(trace)` drops the `.grad` outputs of tensors the call made for itself, and
`guard(trace)` writes the conditions under which the graph may serve a later call
(guards.py), or raises GiveUp / GraphBreak when the call cannot run compiled. Neither
changes its argument.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache

import numpy as np

from .. import config
from ..ir.graph import Graph
from ..ir.printing import PrintCapture
from ..ir.trace import Tracer
from ..tensor.graph_break import GraphBreak, graph_break
from ..tensor.state import state
from ..tensor.symbolic import ShapeEnv
from ..tensor.tensor import Tensor
from .compiled_backward import trace_backward
from .guards import (
    GuardSet,
    array_budget_exceeded,
    array_conditions,
    arrays_to_compare,
    data_read_conditions,
    grad_condition,
    mode_conditions,
    observation_conditions,
    reachable_tensor_conditions,
    symbolic_conditions,
    tensor_conditions,
    written_input_conditions,
)
from .nested_arguments import describe, given_arguments, place, put_back
from .reachability import StateChanges, Walk, function_roots, replay_function, rng_state
from .result_template import (
    alias_fresh_grads,
    flatten_result,
    requiring_results,
    returned_objects,
)


class ScalarSource:
    """Where a runtime float is read on every call: a path the reachability walk found
    (`optimizer.param_groups[0]['lr']`), compiled once into a function of the call's
    arguments. The executable feeds what it reads to the graph's "scalar" input."""

    def __init__(self, path: tuple, constants: dict, display: str):
        self.path, self.display = path, display
        self.expression = "".join(path)
        namespace = dict(constants)
        exec(compile(f"def read(args):\n    return {self.expression}\n",  # noqa: S102
                     "<autojit scalar source>", "exec"), namespace)
        self._read = namespace["read"]
        self._namespace = namespace

    def read(self, args: tuple) -> np.ndarray:
        return np.array(self._read(args), np.float64)

    def replace(self, args: tuple, value) -> None:
        """Put `value` where the float is (for the trace), or the float back."""
        self._assign(self.path, args, value)

    def _assign(self, path: tuple, args: tuple, value) -> None:
        parent = eval("".join(path[:-1]), self._namespace, {"args": args})  # noqa: S307
        last = path[-1]
        if last.startswith("."):
            setattr(parent, last[1:], value)
            return
        key = ast.literal_eval(last[1:-1])
        if isinstance(parent, tuple) and len(path) > 2:
            # A tuple cannot be written (an optimizer's `betas`, which momentum-cycling
            # schedulers replace on every step): a copy holding `value` takes its place.
            items = list(parent)
            items[key] = value
            rebuilt = type(parent)._make(items) if hasattr(parent, "_fields") else \
                type(parent)(items)
            self._assign(path[:-1], args, rebuilt)
            return
        parent[key] = value

    @staticmethod
    def replaceable(path: tuple) -> bool:
        """Whether the float's place can be written: an attribute, or an item with a literal
        key (not a key held as a constant of the guards)."""
        last = path[-1] if len(path) > 1 else ""
        if last.startswith(".") and last[1:].isidentifier():
            return True
        if last.startswith("[") and last.endswith("]"):
            try:
                ast.literal_eval(last[1:-1])
            except (ValueError, SyntaxError):
                return False
            return True
        return False

    def __repr__(self):
        return f"<float read from {self.display}>"


class GiveUp(Exception):
    """This call cannot run compiled, nor can later ones: the function runs eagerly from now
    on (the message says why)."""


class _RunEagerly(Exception):
    """Raised inside a trace: this call runs eagerly (without giving up compiling)."""


@dataclasses.dataclass(frozen=True)
class EagerCall:
    """The trace stage's answer for a call that runs eagerly while `guards` (the modes) hold."""
    guards: GuardSet
    graph: Graph


class RuntimeFloatFailed(Exception):
    """Tracing with runtime floats failed (the function wrote one, or needed it as a Python
    value it cannot be): api.py traces again with them as constants."""


@dataclasses.dataclass(frozen=True)
class Trace:
    """The trace stage's result: the joint graph and what the traced call did.

    graph: forward, backward and updates in one graph; env: its symbolic sizes; tracer: the
    finished tracer (its records of .grad reads and writes, version bumps, prints); before and
    changes: the walk of the function's reach before the call and what the call wrote to it;
    template: the structure of the result; requiring: results differentiated outside the
    function, and backward_error the error tracing their backward raised; cleared: tensors
    whose .grad the call set to None; nan_checks: anomaly mode's checked gradients.
    """
    args: tuple
    graph: Graph
    env: ShapeEnv
    tracer: Tracer
    before: Walk
    changes: StateChanges
    template: object
    requiring: list
    backward_error: object
    nan_checks: list
    cleared: list
    prints: PrintCapture
    symbolic_args: list
    arg_positions: list
    runtime_paths: frozenset = frozenset()  # paths of the floats read afresh on every call


@dataclasses.dataclass(frozen=True)
class GuardedTrace:
    """A pruned Trace with its guards, and the effects its executable repeats on each call."""
    trace: Trace
    guards: GuardSet
    has_backward: bool
    cleared_grads: list
    version_bumps: list
    python_writes: object

    @property
    def graph(self) -> Graph:
        return self.trace.graph


# ---- trace ------------------------------------------------------------------------------------

def trace(compiled, args: tuple) -> Trace | EagerCall:
    """Run `compiled`'s function on `args` under a tracer (see the module docstring)."""
    function = compiled.user_function()
    before = Walk(*function_roots(function, args))
    if not before.complete:
        raise GiveUp(
            f"it can reach more Python state than the guards check (the walk stopped at "
            f"{before.too_large}, after {len(before.observations)} values); reach less "
            "state from the function (pass what it needs as arguments)")
    rng_before = rng_state()
    tensors_before = before.tensors
    graph = Graph()
    env = ShapeEnv()
    call_args, arg_positions, symbolic_args = [], [], []
    for position, argument in enumerate(args):
        if isinstance(argument, Tensor) and argument._data is not None:
            graph.add_input(compiled.sizes.shape(position, argument, env), argument.dtype,
                            "arg", f"arg{position}")
            symbolic = Tensor._symbolic(graph.inputs[-1].value)
            symbolic._requires_grad = argument._requires_grad
            symbolic._grad = argument._grad  # accumulated into like a captured tensor
            for hooks in ("_backward_hooks", "_post_accumulate_hooks"):
                if getattr(argument, hooks):  # run by the traced backward, as in eager
                    setattr(symbolic, hooks, getattr(argument, hooks))
            if argument._is_inference:
                symbolic._is_inference = True  # so an in-place write raises as in eager
            call_args.append(symbolic)
            arg_positions.append(position)
            symbolic_args.append((graph.inputs[-1], symbolic))
        else:
            call_args.append(argument)
    given = given_arguments(args)
    if given is not args:  # tensors inside container arguments: placed where they were
        nested = call_args[len(given):]
        call_args, placed = place(call_args[:len(given)], args.paths, nested)
    else:
        placed = []
    names = {id(tensor._data): before.tensor_names[key]
             for key, (_, _, tensor) in tensors_before.items()}
    tracer = Tracer(graph, names)
    for (entry, symbolic), position in zip(symbolic_args, arg_positions):
        tracer.add_argument(entry, symbolic, args[position]._data)
    runtime = _runtime_floats(compiled.runtime_float_paths, before, env, tracer)
    # The .grad of every tensor the function can reach, before it runs: a `p.grad = None`
    # in the function happens for real while tracing, and must be undone (the executable
    # repeats it on each call) before guards and write-back look at .grad.
    grads_before = [(tensor, tensor._grad) for _, _, tensor in tensors_before.values()]
    state.tracer = tracer
    eager_call = False
    try:
        for source, symbol in runtime:  # the function reads the symbol where the float is
            source.replace(args, symbol)
        with PrintCapture() as prints:
            tracer.prints = prints
            try:
                result = compiled.fn(*call_args)
            finally:
                put_back(placed)
                _put_back(runtime, args)
        tracer.prints = None
        template = flatten_result(result, graph, tracer, {
            id(symbolic): position for (_, symbolic), position in zip(symbolic_args,
                                                                       arg_positions)})
        requiring = requiring_results(graph, result) if state.grad_enabled else []
        if requiring and state.anomaly:
            # Anomaly mode checks every backward node's gradients; a backward run later,
            # outside the function, runs eagerly so that it is checked.
            raise _RunEagerly("anomaly mode with results differentiated outside the "
                              "function")
        backward_error = trace_backward(graph, tracer, requiring, symbolic_args) \
            if requiring else None
        nan_checks = [(len(graph.outputs) + index, node, position) for index, (
            gradient, node, position) in enumerate(tracer.nan_checks)]
        for gradient, _, _ in tracer.nan_checks:
            graph.add_output(tracer.value_of(gradient), tracer.unique_output("nan_check"),
                             "check")
        tracer.finish(graph, symbolic_args)
        template = alias_fresh_grads(template, result, tracer.fresh_grads)
        escaped = prints.escaped()
        if escaped is not None:
            where = escaped.location or (None, None)
            raise GraphBreak("a tensor formatted into a string that is not printed (only "
                             "print() shows each call's values)", *where,
                             linecache.getline(*where).strip() if where[0] else "",
                             needs_data=False)
    except _RunEagerly as reason:
        config.log("recompiles", f"{compiled.name()}: this call runs eagerly: {reason}")
        eager_call = True
        before.restore()  # the eager run does the Python side effects again
    except BaseException:
        before.restore()  # a graph break runs the call again eagerly; no leaked tensors
        raise
    finally:
        state.tracer = None
        reached = {id(tensor) for tensor, _ in grads_before}
        grads_before += [entry for key, entry in tracer.grads_before.items()
                         if key not in reached]
        cleared = [tensor for tensor, grad in grads_before
                   if grad is not None and tensor._grad is None]
        tracer.restore()
        for tensor, grad in grads_before:
            tensor._grad = grad
    if eager_call:
        # Eager is always right, so the modes alone decide when this applies again.
        guards = GuardSet()
        guards.add_constants(before.constants)
        mode_conditions(guards)
        guards.build()
        return EagerCall(guards, graph)
    changes = StateChanges(before, Walk(*function_roots(function, args), copies=False))
    if rng_state() != rng_before:  # NumPy's or Python's global generator drew numbers
        changes.structural.append("the global random generators (numpy.random, random)")
    if changes.leaks:
        before.restore()
        display, tensor = changes.leaks[0]
        where = tracer.location(tensor)
        raise GraphBreak(f"a tensor made while tracing was stored in {display}, where it "
                         "would outlive the trace", *(where or (None, None)),
                         linecache.getline(*where).strip() if where else "",
                         needs_data=False)
    return Trace(args, graph, env, tracer, before, changes, template, requiring,
                 backward_error, nan_checks, cleared, prints, symbolic_args, arg_positions,
                 frozenset(source.path for source, _ in runtime))


def _runtime_floats(paths: set, before: Walk, env: ShapeEnv, tracer: Tracer) -> list:
    """(ScalarSource, SymFloat) for each float at `paths` (the floats that changed between
    calls; api.py chooses them): a runtime symbol of the trace, fed by a "scalar" input."""
    if not paths:
        return []
    runtime = []
    for observation in before.observations:
        if observation.kind == "scalar" and observation.path in paths and \
                type(observation.value) is float:
            source = ScalarSource(observation.path, before.constants, observation.display)
            symbol = env.create_runtime_float(observation.value, source)
            tracer.scalar_input(str(symbol), source)
            runtime.append((source, symbol))
    return runtime


def _put_back(runtime: list, args: tuple) -> None:
    """Put the floats back where the trace found their symbols. A function that wrote one of
    them (`group['lr'] = ...` inside the compiled step) cannot read it afresh on every call:
    RuntimeFloatFailed, after the floats are back."""
    written = []
    for source, symbol in runtime:
        current = eval(source.expression, source._namespace, {"args": args})  # noqa: S307
        if current is not symbol:
            written.append(source.display)
        source.replace(args, symbol.hint)
    if written:
        raise RuntimeFloatFailed(f"the function writes {', '.join(written)}")


# ---- prune ------------------------------------------------------------------------------------

def prune(traced: Trace) -> Trace:
    """The trace without the .grad outputs of tensors the function made for itself.

    A leaf created inside the function (or a detached alias of a captured tensor) that a
    backward gave a .grad is gone when eager's call returns; writing that .grad back to the
    captured constant would be wrong, and would change a guarded .grad on every call.
    `tracer.made` holds the ids of the concrete tensors created while tracing (Tensor._make
    records them); every other tensor existed before the call, however the function reached
    it, and keeps it.
    """
    owners, made = traced.tracer.grad_owners, traced.tracer.made
    graph = traced.graph.with_outputs([
        output for output in traced.graph.outputs
        if not (output.kind == "grad" and output.target.kind == "captured" and
                id(owners.get(output.name)) in made)])
    return dataclasses.replace(traced, graph=graph)


# ---- guard ------------------------------------------------------------------------------------

def guard(traced: Trace) -> GuardedTrace:
    """The guards under which `traced` serves a later call, and the effects it repeats."""
    graph, tracer, before, args = traced.graph, traced.tracer, traced.before, traced.args
    arg_positions, requiring = traced.arg_positions, traced.requiring
    has_backward = any(entry.kind == "cotangent" for entry in graph.inputs)
    symbolic_by_input = {id(entry): symbolic for entry, symbolic in traced.symbolic_args}
    if requiring and not has_backward and traced.backward_error is None:
        before.restore()  # the eager run does the Python side effects again
        raise GiveUp("the function returns a tensor that requires grad but depends on no "
                     "input that requires grad")
    arrays = arrays_to_compare(before, graph)
    if array_budget_exceeded(arrays):
        before.restore()
        raise GiveUp(array_budget_exceeded(arrays))
    grad_guarded = set(tracer.grad_accessed) | {id(tensor) for tensor in traced.cleared}
    for output in graph.outputs:
        if output.kind == "grad":
            grad_guarded.add(id(output.target.tensor) if output.target.kind == "captured"
                             else id(symbolic_by_input[id(output.target)]))
    # A .grad the function assigned before reading it: what it held before the call
    # cannot change the result, so a new tensor there each call must not retrace.
    grad_guarded -= tracer.grad_overwritten
    for entry, symbolic in traced.symbolic_args:
        if id(symbolic) in grad_guarded:
            grad_guarded.add(id(args[arg_positions[graph.arg_inputs.index(entry)]]))
    guards = GuardSet()
    guards.add_constants(before.constants)
    unguardable = data_read_conditions(guards, before, tracer.data_read)
    if unguardable is not None:
        before.restore()
        graph_break(unguardable, needs_data=False)
    overlap = _write_guards(guards, traced, arrays, grad_guarded)
    if overlap is not None:
        before.restore()  # the eager run does the Python side effects again
        graph_break(overlap, needs_data=False)
    cleared_grads = [entry.tensor for entry in tracer.cleared_grads] + [
        tensor for tensor in traced.cleared if all(tensor is not entry.tensor
                                                   for entry in tracer.cleared_grads)]
    version_bumps = [(entry.tensor, None, count) if entry.kind == "captured" else
                     (None, arg_positions[graph.arg_inputs.index(entry)], count)
                     for entry, count in tracer.version_bumps]
    # Python state the traced call wrote: scalars are written again by every run (the
    # guards hold the values from before); anything else makes this trace good for this
    # call only (api.py traces the next call again).
    changes = traced.changes
    python_writes = replay_function(changes.scalar_writes, dict(before.constants)) \
        if changes.scalar_writes else None
    return GuardedTrace(traced, guards, has_backward, cleared_grads, version_bumps,
                        python_writes)


def _write_guards(guards: GuardSet, traced: Trace, arrays: list, grad_guarded: set):
    """arrays: the NumPy arrays whose values are compared (guards.arrays_to_compare);
    grad_guarded: ids of the tensors whose .grad the trace read or wrote; only those have
    their .grad checked. Returns why the traced call cannot run compiled (an input written in
    place shares memory with another), else None."""
    args, graph, before, env = traced.args, traced.graph, traced.before, traced.env
    made = traced.tracer.made
    guards.require(f"len(args) == {len(args)}", f"the number of arguments changed (was "
                   f"{len(args)})")
    mode_conditions(guards)
    for position, argument in enumerate(args):
        if isinstance(argument, Tensor):
            tensor_conditions(guards, ("args", f"[{position}]"), argument,
                              describe(args, position), grad_is=id(argument) in grad_guarded,
                              dynamic_dims=env.dims_of(position))
    observation_conditions(guards, before.observations, traced.runtime_paths)
    array_conditions(guards, arrays)
    # A tensor the traced call made over the storage of one it reached (`v.detach()`, and the
    # detached `grad_outputs` of a backward) is captured by that storage: the tensor that
    # owns it must still be there, holding the same array, or the run reads a stale one.
    owners = {id(found[2]._data): found for found in before.tensors.values()
              if found[2]._data is not None}
    for entry in graph.captured_inputs:
        tensor = entry.tensor
        found = before.tensors.get(id(tensor))
        constant = guards.constant(tensor, "T", entry.name)
        if found is not None:
            guards.require(f"$ is {constant}", f"{found[1]} is another tensor than when "
                           "traced", found[0], found[1])
        elif id(tensor) in made:
            owner = owners.get(id(tensor._data))
            if owner is None:
                continue  # made by the traced call itself: nothing else can reach it
            path, display, owning = owner
            guards.require(f"$ is {guards.constant(owning, 'T', display)} and $._data is "
                           f"{guards.constant(tensor._data, 'A', f'<the storage of {display}>')}",
                           f"{display} is another tensor, or holds another storage, than when "
                           "traced", path, display)
            continue
        tensor_conditions(guards, (constant,), tensor, f"captured tensor {entry.name}",
                          grad_is=id(tensor) in grad_guarded, display=entry.name)
    # A tensor whose .grad the function only looked at (`if p.grad is None: continue`).
    captured = {id(entry.tensor) for entry in graph.captured_inputs}
    # Tensors inside container arguments are graph inputs, checked as arguments above.
    nested = {id(args[position]) for position in range(len(given_arguments(args)), len(args))}
    reachable_tensor_conditions(guards, before, captured | nested,
                                returned_objects(traced.template))
    for path, display, tensor in before.tensors.values():
        if id(tensor) in grad_guarded and id(tensor) not in captured:
            grad_condition(guards, path, tensor, display, display)
    symbolic_conditions(guards, env)
    overlap = written_input_conditions(guards, args, graph, traced.arg_positions,
                                       traced.tracer.first_writes)
    guards.build()
    return overlap
