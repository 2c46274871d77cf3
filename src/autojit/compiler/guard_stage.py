"""The second and third compile stages (stages.py), after tracing (tracing.py): prune the
gradients a traced call kept for itself, and guard what it depended on.

`prune(trace)` drops the `.grad` outputs of tensors the call made for itself, and
`guard(trace)` writes the conditions under which the graph may serve a later call
(guards.py, from the builders of guard_conditions.py), or raises GiveUp / GraphBreak when the
call cannot run compiled. Neither changes its argument.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.eager_layout import layout_signature
from ..tensor.graph_break import graph_break
from ..tensor.tensor import Tensor
from .grad_inputs import GradInput, runtime_grads
from .guard_conditions import (
    array_budget_exceeded,
    array_conditions,
    arrays_to_compare,
    base_conditions,
    data_read_conditions,
    grad_condition,
    layout_conditions,
    mode_conditions,
    observation_conditions,
    reachable_tensor_conditions,
    symbolic_conditions,
    tensor_conditions,
    written_input_conditions,
)
from .guards import GuardSet
from .nested_arguments import describe, given_arguments, tensor_paths
from .read_selection import select
from .result_template import held_grads, returned_objects
from .tracing import GiveUp, GuardedTrace, Trace


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
    selection = select(before, traced.reads) if traced.reads is not None else None
    arrays = arrays_to_compare(before, graph)
    if selection is not None:  # only the arrays the trace read
        arrays = [found for found in arrays if id(found[2]) in selection.arrays]
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
    overlap, template = _write_guards(guards, traced, arrays, grad_guarded, selection)
    if template is not traced.template:
        traced = dataclasses.replace(traced, template=template)
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
    python_writes = traced.python_writes
    return GuardedTrace(traced, guards, has_backward, cleared_grads, version_bumps,
                        python_writes)


def returned_state_conditions(guards: GuardSet, walk, returned: list) -> None:
    """A list, dict or other object from before the call that the function returns as it is
    (result_template's "object" leaf), reached through its state (a global, an attribute of
    `self`), must be the one its path holds: a rebound global returned the first call's list.
    (Objects reached through the arguments are read from each call's instead.)"""
    wanted = {id(value): value for value in returned if not isinstance(value, Tensor) and
              walk.object_paths.get(id(value), ("args",))[0] != "args"}
    if not wanted:
        return
    displays = {observation.path: observation.display for observation in walk.observations}
    for identity, value in wanted.items():
        path = walk.object_paths[identity]
        display = displays.get(path, "".join(path))
        guards.require(f"$ is {guards.constant(value, 'C', display)}",
                       f"{display} is another object than when traced", path, display)


def _write_guards(guards: GuardSet, traced: Trace, arrays: list, grad_guarded: set,
                  selection=None):
    """arrays: the NumPy arrays whose values are compared (guard_conditions.arrays_to_compare);
    grad_guarded: ids of the tensors whose .grad the trace read or wrote; only those have
    their .grad checked; selection: what the trace read (read_selection.py), or None to guard
    all the walk found. Returns why the traced call cannot run compiled (an input written in
    place shares memory with another) or None, and the result template with each returned
    .grad that each run reads afresh (grad_inputs.py) taken from its owner on every run."""
    args, graph, before, env = traced.args, traced.graph, traced.before, traced.env
    made = traced.tracer.made
    guards.require(f"len(args) == {len(args)}", f"the number of arguments changed (was "
                   f"{len(args)})")
    mode_conditions(guards)
    aliased = traced.tracer.aliased_arguments
    given = len(given_arguments(args))
    for position, argument in enumerate(args):
        if isinstance(argument, Tensor):
            if position in aliased:  # traced as the very tensor: guarded as a captured one
                guards.require(f"$ is {guards.constant(argument, 'T', describe(args, position))}",
                               f"{describe(args, position)} is another tensor than when traced",
                               ("args", f"[{position}]"), describe(args, position))
                continue
            # A tensor inside an argument is named by its place there (args[1].layers[0].keys).
            nested_place = describe(args, position) if position >= given else None
            tensor_conditions(guards, ("args", f"[{position}]"), argument,
                              describe(args, position), grad_is=id(argument) in grad_guarded,
                              dynamic_dims=env.dims_of(position), display=nested_place)
    # Lists the function only appends to: their class alone; places it only assigns: nothing.
    appended = tuple(traced.changes.appended_paths)
    unguarded = tuple(traced.changes.unguarded_paths)
    observations = selection.observations if selection is not None else before.observations
    observation_conditions(guards, [
        observation for observation in observations
        if not any(observation.path[:len(path)] == path and (
            observation.path != path or observation.kind != "class") for path in appended)
        and not any(observation.path[:len(path)] == path for path in unguarded)],
        traced.runtime_paths)
    array_conditions(guards, arrays)
    # A tensor the traced call made over the storage of one it reached (`v.detach()`, and the
    # detached `grad_outputs` of a backward) is captured by that storage: the tensor that
    # owns it must still be there, holding the same array, or the run reads a stale one.
    owners = {id(found[2]._payload): found for found in before.tensors.values()
              if found[2]._payload is not None}
    paths = tensor_paths(before)
    if selection is not None:  # the paths the trace read each tensor by, where it read one
        paths = {**paths, **selection.tensor_paths}
    # A .grad the trace read is read afresh by each run (grad_inputs.py): its owner's .grad
    # is guarded by shape, dtype and layout instead of by identity.
    runtime = runtime_grads(graph.captured_inputs, [entry.tensor for entry in
                                                    graph.captured_inputs] +
                            [found[2] for found in before.tensors.values()],
                            traced.tracer.grad_accessed, traced.tracer.grad_overwritten)
    grad_guarded = grad_guarded - {id(owner) for owner in runtime.values()}
    held: dict = {}  # id(the .grad traced) -> its owner, for each .grad read afresh
    for entry in graph.captured_inputs:
        tensor = entry.tensor
        owner = runtime.get(id(entry))
        if owner is not None:
            name = before.tensor_names.get(id(owner), entry.name)
            subject = (guards.constant(owner, "T", name), "._grad")
            tensor_conditions(guards, subject, tensor, f"{name}.grad", grad_is=False,
                              hooks=False, display=f"{name}.grad")
            if tensor._payload.__class__ is np.ndarray:
                guards.require(f"layout_signature($._payload) == "
                               f"{layout_signature(tensor._payload)!r}",
                               f"{name}.grad changed its memory layout", subject,
                               f"{name}.grad")
            entry.tensor = GradInput(owner, tensor)
            held[id(tensor)] = owner
            continue
        found = before.tensors.get(id(tensor))
        constant = guards.constant(tensor, "T", entry.name)
        if found is not None:
            # Every path that reached it (a parameter through its module and through the
            # optimizer): one of them replaced is another program.
            traced_tensor = guards.constant(tensor, "I", f"<the tensor {entry.name} traced>")
            for path, display in paths.get(id(tensor), [found[:2]]):
                guards.require(f"$ is {traced_tensor}", f"{display} is another tensor than "
                               "when traced", path, display)
        elif id(tensor) in made:
            owner = owners.get(id(tensor._payload))
            if owner is None:
                continue  # made by the traced call itself: nothing else can reach it
            path, display, owning = owner
            storage = guards.constant(tensor._payload, 'A', f'<the storage of {display}>')
            guards.require(f"$ is {guards.constant(owning, 'T', display)} and $._payload is "
                           f"{storage}",
                           f"{display} is another tensor, or holds another storage, than when "
                           "traced", path, display)
            continue
        tensor_conditions(guards, (constant,), tensor, f"captured tensor {entry.name}",
                          grad_is=id(tensor) in grad_guarded, display=entry.name)
    # A tensor whose .grad the function only looked at (`if p.grad is None: continue`).
    captured = {id(entry.tensor) for entry in graph.captured_inputs}
    # Tensors inside container arguments are graph inputs, checked as arguments above.
    nested = {id(args[position]) for position in range(len(given_arguments(args)), len(args))
              if position not in aliased}
    template = held_grads(traced.template, held) if held else traced.template
    reachable_tensor_conditions(guards, before, captured | nested,
                                returned_objects(template),
                                selection.tensors if selection is not None else None)
    returned_state_conditions(guards, before, returned_objects(template))
    for path, display, tensor in before.tensors.values():
        if id(tensor) in grad_guarded and id(tensor) not in captured:
            grad_condition(guards, path, tensor, display, display)
    symbolic_conditions(guards, env)
    layout_conditions(guards, args, graph, traced.arg_positions, traced.tracer.layout_reads)
    base_conditions(guards, args, graph, traced.arg_positions, traced.tracer.base_reads)
    overlap = written_input_conditions(guards, args, graph, traced.arg_positions,
                                       traced.tracer.first_writes)
    guards.build()
    return overlap, template
