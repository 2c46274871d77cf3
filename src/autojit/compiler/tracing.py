"""The first compile stage (stages.py): trace a call. The next two, prune and guard, are in
guard_stage.py.

`trace(compiled, args)` walks everything the function can reach (reachability.py), runs the
function on symbolic copies of its tensor arguments under a Tracer (ir/trace.py), so that
forward, backward and optimizer updates land in one graph, restores the real tensors and the
Python state it saw, and compares a second walk with the first to see what the call wrote. It
returns a Trace, or an EagerCall when this call must run eagerly (anomaly mode with results
differentiated outside), and raises GraphBreak for what a graph cannot hold.

The Trace and GuardedTrace records and the exceptions the stages raise (GiveUp, TraceRaised,
MakesState) are defined here.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import os

from .. import config
from ..autograd.saved_tensors import SavingCount
from ..ir.graph import Graph
from ..ir.printing import CallEffect, LogEffect, PrintCapture
from ..ir.scalars import SymbolicMath
from ..ir.trace import Tracer
from ..ir.trace_devices import Placement
from ..tensor.graph_break import GraphBreak, graph_break
from ..tensor.state import state
from ..tensor.symbolic import ShapeEnv
from ..tensor.tensor import Tensor
from .compiled_backward import trace_backward
from .constant_checks import ConstantChecks
from .guard_conditions import (
    mode_conditions,
)
from .guards import GuardSet
from .library_code import LIBRARY_ROOTS
from .nested_arguments import (
    aliased_arguments,
    describe,
    given_arguments,
    place,
    put_back,
)
from .reachability import Walk, rng_state
from .recorder import Recorder
from .result_template import (
    ArgumentObjects,
    Flattening,
    alias_fresh_grads,
    flatten_result,
    requiring_results,
    symbolic_leaves,
)
from .walk_roots import function_roots
from .writebacks import PythonWrites, StateChanges


class _Attribute(str):
    """An attribute's name, where a placement's key is (not a dict key or an index)."""

    @property
    def name(self) -> str:
        return str(self)


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

    def value(self, args: tuple):
        """The scalar where it is read, in this call."""
        return self._read(args)

    def written(self, args: tuple, current):
        """(path, value, display) of the write a function made where the scalar is: where it
        is an item of a tuple (Adam's `betas`, which momentum-cycling schedulers replace), the
        outermost tuple holding it, written as a whole, since no run can assign its item."""
        for end in range(2, len(self.path)):
            holder = eval("".join(self.path[:end]), self._namespace,  # noqa: S307
                          {"args": args})
            if type(holder) is tuple or isinstance(holder, tuple) and hasattr(holder, "_fields"):
                suffix = "".join(self.path[end:])
                display = self.display[:-len(suffix)] if self.display.endswith(suffix) else \
                    self.display
                return self.path[:end], holder, display
        return self.path, current, self.display

    def replace(self, args: tuple, value):
        """Put `value` where the scalar is (for the trace); returns what put_back needs."""
        return self._assign(self.path, args, value)

    @staticmethod
    def put_back(placed) -> None:
        """Put the scalar back where `replace` put a symbol, also where the function wrote
        another value there (`group['lr'] = lr * 0.5`): the run that follows the trace reads
        the value the call started with, and writes the new one itself (writebacks.py)."""
        holder, key, before, _ = placed
        if isinstance(key, _Attribute):
            setattr(holder, key.name, before)
        else:
            holder[key] = before

    def _assign(self, path: tuple, args: tuple, value):
        parent = eval("".join(path[:-1]), self._namespace, {"args": args})  # noqa: S307
        last = path[-1]
        if last.startswith("."):
            before = getattr(parent, last[1:])
            setattr(parent, last[1:], value)
            return parent, _Attribute(last[1:]), before, value
        key = ast.literal_eval(last[1:-1])
        if isinstance(parent, tuple) and len(path) > 2:
            # A tuple cannot be written (an optimizer's `betas`, which momentum-cycling
            # schedulers replace on every step): a copy holding `value` takes its place.
            items = list(parent)
            items[key] = value
            rebuilt = type(parent)._make(items) if hasattr(parent, "_fields") else \
                type(parent)(items)
            return self._assign(path[:-1], args, rebuilt)
        before = parent[key]
        parent[key] = value
        return parent, key, before, value

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


class TraceRaised(Exception):
    """The function raised while traced (`error`): api.py runs the call eagerly, so that what
    it did before the raise happens, as eager's call does it, and eager's error is raised."""

    def __init__(self, error: Exception):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


class MakesState(Exception):
    """Raised before the first trace: an object the function reaches says the call will make
    state it keeps (an optimizer before its first step). The trace of such a call changes the
    structure of what the guards read and serves that call only (guards.md), so api.py runs
    it eagerly, untraced, and traces the next call."""


class _RunEagerly(Exception):
    """Raised inside a trace: this call runs eagerly (without giving up compiling)."""


@dataclasses.dataclass(frozen=True)
class EagerCall:
    """The trace stage's answer for a call that runs eagerly while `guards` (the modes) hold."""
    guards: GuardSet
    graph: Graph


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
    python_writes: object = None  # writebacks.PythonWrites, or None
    reads: object = None  # recorder.Reads: what the call read, or None (guard all it reaches)


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
    appended = frozenset(compiled.append_only_paths)
    unguarded = frozenset(compiled.write_only_paths)
    before = Walk(*function_roots(function, args), appended=appended, skipped=unguarded)
    if not before.complete:
        raise GiveUp(
            f"it can reach more Python state than the guards check (the walk stopped at "
            f"{before.too_large}, after {len(before.observations)} values); reach less "
            "state from the function (pass what it needs as arguments)")
    first, compiled.first_trace = compiled.first_trace, False
    if first and before.makes_state:
        raise MakesState(", ".join(before.makes_state))
    compiled.declare_runtime_floats(before.declared_runtime)
    rng_before = rng_state()
    tensors_before = before.tensors
    graph = Graph()
    env = ShapeEnv()
    env.unbacked_sizes = compiled.dynamic is not False  # else sizes from data specialize
    call_args, arg_positions, symbolic_args = [], [], []
    aliased = aliased_arguments(args, before)
    for position, argument in enumerate(args):
        if isinstance(argument, Tensor) and argument._payload is not None and \
                position not in aliased:
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
            symbolic._is_conj = argument._is_conj  # conj() flips it, view_as_real refuses it
            call_args.append(symbolic)
            arg_positions.append(position)
            symbolic_args.append((graph.inputs[-1], symbolic))
        else:
            call_args.append(argument)
    given = given_arguments(args)
    nested = []  # the writes placing tensors inside container arguments (put back after)
    if given is not args:  # tensors inside container arguments: placed where they were
        call_args, nested = place(call_args[:len(given)], args.paths, call_args[len(given):])
    names = {id(tensor._payload): before.tensor_names[key]
             for key, (_, _, tensor) in tensors_before.items()}
    tracer = Tracer(graph, names, env)
    tracer.call_args = args
    tracer.device = next((argument.device for argument in args
                          if isinstance(argument, Tensor) and argument.is_cuda), None)
    if tracer.device is not None:
        tracer.placement = Placement(tracer.device)
    tracer.aliased_arguments = aliased
    constant = ConstantChecks(graph, tracer, tensors_before)
    env.on_value_check = _value_check_hook(compiled, constant)
    for (entry, symbolic), position in zip(symbolic_args, arg_positions):
        tracer.add_argument(entry, symbolic, args[position]._payload, args[position])
    runtime = _runtime_scalars(compiled.runtime_float_paths, before, env)
    for source, symbol in runtime:  # an argument: the function gets the symbol
        if source.path[0] == "args" and len(source.path) == 2:
            call_args[int(source.path[1][1:-1])] = symbol
    # The .grad of every tensor the function can reach, before it runs: a `p.grad = None`
    # in the function happens for real while tracing, and must be undone (the executable
    # repeats it on each call) before guards and write-back look at .grad.
    grads_before = [(tensor, tensor._grad) for _, _, tensor in tensors_before.values()]
    recorder = _recorder(compiled, before)
    state.tracer = tracer
    # The watches of checkpoints outside see the call's one node, not the traced ones: the
    # saving nodes the function makes are counted (utils/checkpoint_stop.py).
    counting = SavingCount()
    outer_watch, state.saved_watch = state.saved_watch, (counting,)
    eager_call = False
    try:
        if recorder is not None:
            recorder.__enter__()
            tracer.quiet_trace = recorder.trace_function
        placed = [(source, symbol, source.replace(args, symbol)) for source, symbol in runtime
                  # the function reads the symbol there (an argument's attribute too)
                  if source.path[0] != "args" or len(source.path) > 2]
        with PrintCapture() as prints, SymbolicMath():
            tracer.prints = prints
            try:
                result = compiled.fn(*call_args)
                tracer.saving_nodes = counting.count
            except (GraphBreak, _RunEagerly, GiveUp):
                raise
            except Exception as error:
                if not env.leaves and not env.runtime:
                    raise TraceRaised(error) from error
                # Code that met a symbolic scalar where it wanted a Python number of its own
                # (json.dumps, a C extension): the call runs eagerly, where the value is one.
                where = user_location_of(error)
                raise GraphBreak(f"the function raised {type(error).__name__} ({error}) on a "
                                 "value read from a tensor or a scalar read on every call",
                                 *(where or (None, None)),
                                 linecache.getline(*where).strip() if where else "",
                                 needs_data=False) from error
            finally:
                put_back(nested)
                runtime_writes = _put_back(placed, args)
        tracer.prints = None
        positions = {id(symbolic): position
                     for (_, symbolic), position in zip(symbolic_args, arg_positions)}
        try:
            template = flatten_result(result, graph, tracer, positions, before._seen,
                                      ArgumentObjects(before))
        except TypeError as error:
            graph_break(str(error), needs_data=False)
        requiring = requiring_results(graph, result) if state.grad_enabled else []
        if requiring and state.anomaly:
            # Anomaly mode checks every backward node's gradients; a backward run later,
            # outside the function, runs eagerly so that it is checked.
            raise _RunEagerly("anomaly mode with results differentiated outside the "
                              "function")
        gradient_outputs: list = []  # added last (compiled_backward.trace_backward)
        backward_error = trace_backward(graph, tracer, requiring, symbolic_args,
                                        gradient_outputs) if requiring else None
        if recorder is not None:
            recorder.__exit__(None, None, None)
        nan_checks = [(len(graph.outputs) + index, node, position) for index, (
            gradient, node, position) in enumerate(tracer.nan_checks)]
        for gradient, _, _ in tracer.nan_checks:
            graph.add_output(tracer.value_of(gradient), tracer.unique_output("nan_check"),
                             "check")
        tracer.finish(graph, symbolic_args)
        for check in constant.finish(env):  # a decision on a tensor written after it
            _fullgraph_break(compiled, check)
        # `x.requires_grad_()` on an argument: every run sets it on the caller's tensor.
        flag_writes = [(("args", f"[{position}]", "._requires_grad"), symbolic._requires_grad,
                        f"{describe(args, position)}.requires_grad")
                       for (_, symbolic), position in zip(symbolic_args, arg_positions)
                       if symbolic._requires_grad != args[position]._requires_grad and
                       args[position].grad_fn is None]
        template = alias_fresh_grads(template, result, tracer.grads_left)
    except _RunEagerly as reason:
        config.log("recompiles", f"{compiled.name()}: this call runs eagerly: {reason}")
        eager_call = True
        before.restore()  # the eager run does the Python side effects again
    except BaseException:
        before.restore()  # a graph break runs the call again eagerly; no leaked tensors
        raise
    finally:
        if recorder is not None:
            recorder.__exit__(None, None, None)
        state.tracer = None
        state.saved_watch = outer_watch
        reached = {id(tensor) for tensor, _ in grads_before}
        grads_before += [entry for key, entry in tracer.grads_before.items()
                         if key not in reached]
        # .grad left None: set so by the call (repeated by every run), where it held a tensor
        # or where the call assigned it (a later call may find one there).
        cleared = [tensor for tensor, grad in grads_before if tensor._grad is None and (
            grad is not None or id(tensor) in tracer.grad_assigned)]
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
    recorded = recorder is not None and recorder.reads.failure is None
    stored = frozenset(before.object_paths[owner] + (fragment,)
                       for owner, fragment in recorder.reads.stored
                       if owner in before.object_paths) if recorded else frozenset()
    after = Walk(*function_roots(function, args), copies=False, appended=appended)
    changes = StateChanges(before, after, before.codes, unguarded,
                           recorder.reads.append_only() if recorded else None, stored)
    # A runtime scalar's place (read afresh by each run) was put back before the walk: its
    # write, if any, is the runtime one, never the traced value.
    taken = {path for path, _, _ in runtime_writes + flag_writes} | {
        source.path for source, _ in runtime}
    changes.writes = [write for write in changes.writes if write[0] not in taken] + \
        runtime_writes + flag_writes
    if rng_state() != rng_before:  # NumPy's or Python's global generator drew numbers
        changes.structural.append("the global random generators (numpy.random, random)")
    try:
        # Only a tensor the state can reach after the call is kept there (a solver's output
        # buffer dies with the call while the optimizer grows its state beside it).
        kept = [tensor for tensor in tracer.fresh_history if id(tensor) in after.tensors] \
            if after.complete else tracer.fresh_history
        if changes.structural and kept:
            raise GraphBreak("an in-place write gave autograd history to a tensor the function "
                             "made, in a call that changed Python state where it may be kept "
                             "(eager's tensor would keep that history)", needs_data=False)
        flattening = Flattening(graph, tracer, positions, before._seen,
                                tracer.result_flattening)
        python_writes = _python_writes(changes, flattening, tracer, changes.constants)
        logged = _log_templates(prints, flattening)
    except BaseException:
        before.restore()
        raise
    changes.undo()
    if not recorded:
        # Lists the source only ever appends to: later walks do not look into them. With a
        # record of reads, a later trace that reads one guards what it reads.
        compiled.append_only_paths.update(changes.appended_paths)
    compiled.write_only_paths.update(changes.unguarded_paths)
    _values_read(graph, tracer, template, prints,
                 *(value for written in (*(python_writes.templates if python_writes else ()),
                                         *logged)
                   for value in symbolic_leaves(written)))
    for output in gradient_outputs:
        graph.add_output(*output)
    reads = recorder.reads if recorder is not None else None
    if reads is not None and reads.failure is not None:
        config.log("guards", f"{compiled.name()}: the record of reads failed "
                   f"({reads.failure}); the guards check all the function can reach")
        reads = None
    return Trace(args, graph, env, tracer, before, changes, template, requiring,
                 backward_error, nan_checks, cleared, prints, symbolic_args, arg_positions,
                 frozenset(source.path for source, _ in runtime), python_writes, reads)


def _recorder(compiled, before: Walk) -> Recorder | None:
    """The recorder of this trace's reads (recorder.py), or None where guards check all the
    function can reach: AUTOJIT_GUARDS=walk, or no recorder works here (the reason is logged)."""
    if not config.guards_from_reads():
        return None
    missing = Recorder.available()
    if missing is not None:
        config.log("guards", f"{compiled.name()}: reads are not recorded ({missing}); the "
                   "guards check all the function can reach")
        return None
    return Recorder(before.object_paths, before.cell_paths, before.attribute_owners)


def user_location_of(error: BaseException):
    """(filename, line) of the innermost frame of the error's traceback in the user's code
    (outside autojit, the standard library and installed packages), or None."""
    found = None
    traceback = error.__traceback__
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename
        if not os.path.realpath(filename).startswith(LIBRARY_ROOTS):
            found = (filename, traceback.tb_lineno)
        traceback = traceback.tb_next
    return found


def _log_templates(prints: PrintCapture, flattening: Flattening) -> list:
    """The result templates of each logging call's message and arguments, and of each deferred
    call's arguments (ir/printing.py's LogEffect and CallEffect), set on the effect; returns
    them all."""
    templates = []
    for effect in prints.effects:
        if isinstance(effect, LogEffect):
            try:
                effect.templates = (flattening.value(effect.msg), flattening.value(effect.args))
            except TypeError as error:
                graph_break(f"a logging call's arguments: {error}", needs_data=False)
            templates.extend(effect.templates)
        elif isinstance(effect, CallEffect):
            try:
                effect.templates = (flattening.value(effect.args),
                                    flattening.value(effect.kwargs))
            except TypeError as error:
                graph_break(f"the arguments of {getattr(effect.function, '__qualname__', '')}: "
                            f"{error}", needs_data=False)
            templates.extend(effect.templates)
    return templates


def _python_writes(changes: StateChanges, flattening: Flattening, tracer: Tracer,
                   constants: dict) -> PythonWrites | None:
    """What every run writes into Python state (writebacks.py), or a graph break where a
    symbolic value was stored where no run can write it."""
    if changes.leaks:
        display, value = changes.leaks[0]
        where = tracer.location(value) if isinstance(value, Tensor) else None
        raise GraphBreak(f"a value made while tracing was stored in {display}, where it would "
                         "outlive the trace", *(where or (None, None)),
                         linecache.getline(*where).strip() if where else "",
                         needs_data=False)
    if not changes.writes and not changes.appends and not changes.aliases:
        return None

    def template(value, display: str):
        try:
            return flattening.value(value)
        except TypeError as error:
            graph_break(f"{display}: {error}", needs_data=False)
            return None

    writes = [(path, template(value, display)) for path, value, display in changes.writes]
    appends = [(path, [template(item, display) for item in items])
               for path, items, display in changes.appends]
    aliases = [(path, source) for path, source, _ in changes.aliases]
    return PythonWrites(writes, appends, dict(constants), changes.key_orders, aliases)


def _runtime_scalars(paths: set, before: Walk, env: ShapeEnv) -> list:
    """(ScalarSource, symbol) for each float or int at `paths` (the scalars that changed
    between calls; api.py chooses them): a runtime symbol of the trace (tensor/symbolic.py),
    read before every run."""
    if not paths:
        return []
    runtime = []
    for observation in before.observations:
        if observation.kind == "scalar" and observation.path in paths and \
                type(observation.value) in (float, int):
            source = ScalarSource(observation.path, before.constants, observation.display)
            symbol = env.create_runtime_float(observation.value, source) \
                if type(observation.value) is float else \
                env.create_runtime_int(observation.value, source)
            runtime.append((source, symbol))
    return runtime


def _values_read(graph: Graph, tracer, template, prints, *more) -> None:
    """A "value" output for each graph value Python reads after a run (a result, a print, a
    decision, a write: `more` are further symbolic scalars), appended to the graph's outputs;
    one that only fed ops needs none. Those a decision was made on are "check" outputs: the
    plan stores nothing in place before they are checked (codegen/schedule/in_place.py)."""
    env = tracer.env
    checked = set().union(*(check.names for check in env.value_checks))
    read = set(checked)
    for entry in prints.formatted:
        if entry.scalar is not None:
            read |= entry.scalar.names()
    for value in (*symbolic_leaves(template), *more):
        read |= value.names()
    for name, leaf in env.leaves.items():
        if name in read:
            graph.add_output(tracer.scalars.leaf_values[name], leaf.output,
                             "check" if name in checked else "value")


def _value_check_hook(compiled, constant):
    """What a trace does when it decides on a graph value (tensor/symbolic.py's value
    checks): one computed from constant tensors alone is folded (constant_checks.py); else,
    one of kind "value" (a specialization) with fullgraph=True is a graph break, raised at
    once."""

    def hook(check) -> None:
        if not constant.fold(check):
            _fullgraph_break(compiled, check)

    return hook


def _fullgraph_break(compiled, check) -> None:
    """The graph break of a specialization on a graph value, or of a size the graph computes
    (shape_env.size_from_value), under fullgraph=True."""
    if check.kind in ("value", "size") and compiled.fullgraph:
        where = check.where or (None, None)
        why = "the trace would specialize on it" if check.kind == "value" else \
            "a size the graph computes, the graph split there"
        raise GraphBreak(f"{check.what or 'a Python value'} of a value read from a tensor "
                         f"({why})", *where,
                         linecache.getline(*where).strip() if where[0] else "",
                         needs_data=False)


def _put_back(placed: list, args: tuple) -> list:
    """Put the scalars back where the trace found their symbols, and return the writes the
    function made there (`group['lr'] = lr * gamma`, `self.steps += 1`): (path, the value
    written, display), which every run writes again (writebacks.py)."""
    written, paths = [], set()
    for source, symbol, _ in placed:  # all read before any is put back
        try:
            current = source.value(args)
        except Exception:  # noqa: BLE001 - the path went away: a structural change
            current = symbol
        if current is not symbol:
            write = source.written(args, current)
            if write[0] not in paths:
                paths.add(write[0])
                written.append(write)
    # Last placed, first put back: two floats of one tuple (Adam's betas) each placed a
    # rebuilt tuple over the one before.
    for source, _, placement in reversed(placed):
        source.put_back(placement)
    return written


# ---- prune ------------------------------------------------------------------------------------
