"""The compile stages, in order: what autojit.compile does to a call that no executable's
guards accept.

    trace      (CompiledFunction, args) -> Trace      run the function under the tracer
    prune      Trace -> Trace                         drop .grad outputs of the call's own tensors
    guard      Trace -> GuardedTrace                  what a later call must match (guards.py)
    optimize   Graph -> Graph                         the pass pipeline (ir/passes/pipeline.py),
                                                      or its result for an equal graph
                                                      (optimized_graphs.py)
    partition  Graph -> Partition                     forward and backward, for results
                                                      differentiated outside (ir/partition.py)
    split      Graph -> [Segment]                     segments checked between, where the
                                                      trace decided on graph values
                                                      (ir/segments.py, segments.py)
    schedule   Graph -> plan                          fusion and kernels, by the backend the
                                                      tensors' device picks (backends.py)
    build      GuardedTrace, graphs, plans -> Executable

trace is in tracing.py, prune and guard in guard_stage.py. A trace that changed the
structure of Python state (an optimizer creating its state on the first step) serves its own
call only, so `interpret_once` builds it without optimize and schedule: the reference
interpreter runs it once, which costs about an eager step instead of a compile. With dynamic
shapes the first three run once per symbolic trace, and the other four once per binding of
its sizes (dynamic_shapes.py). Every stage is a function that returns a new value and leaves
its input as it was.

`run_stage` runs one: it times it (CompiledFunction.stage_seconds), logs it under
AUTOJIT_LOG=stages, and prints what it returned to stderr when AUTOJIT_DUMP names the stage
(comma-separated names, or "all"; an unknown name is an error listing the stages).
`check_environment` reads every such variable when a function is compiled, so a misspelt
name fails there rather than in the middle of a compile.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
import time

import numpy as np

from .. import config
from ..ir.graph import Graph
from ..ir.interpreter import interpret
from ..ir.partition import Partition, partition
from ..ir.passes.pipeline import dumped_pass_names
from ..ir.printer import format_graph
from ..ir.segments import split as split_segments
from ..tensor.graph_break import GraphBreak
from ..tensor.tensor import Tensor
from . import backends
from .compiled_backward import CompiledBackward
from .dynamo_config import errors_suppressed
from .executable import Executable
from .guard_stage import guard, prune
from .optimized_graphs import optimize_cached
from .result_template import symbolic_leaves
from .segments import SegmentedPlan, boundaries
from .tracing import GiveUp, GuardedTrace, Trace, trace

STAGES = ("trace", "prune", "guard", "optimize", "partition", "split", "schedule", "build")
DUMP_VARIABLE = "AUTOJIT_DUMP"

__all__ = ["STAGES", "check_environment", "compile_graph", "guard", "interpret_once", "prune",
           "rebind", "run_stage", "trace"]


def check_environment() -> None:
    """Raise ValueError, listing the known names, for a name AUTOJIT_LOG, AUTOJIT_DUMP or
    AUTOJIT_DUMP_PASSES gives that is not a log topic, a stage or a pass."""
    config.log_topics()
    dumped_stages()
    dumped_pass_names()


def dumped_stages() -> set:
    """The stages AUTOJIT_DUMP names ("all" for every one)."""
    names = {name.strip() for name in os.environ.get(DUMP_VARIABLE, "").split(",")
             if name.strip()}
    unknown = names - set(STAGES) - {"all"}
    if unknown:
        raise ValueError(f"{DUMP_VARIABLE}: unknown stage {', '.join(sorted(unknown))}; the "
                         f"stages are {', '.join(STAGES)} (or all)")
    return set(STAGES) if "all" in names else names


def without_cycle_collection(method):
    """`method` with Python's cyclic garbage collector paused while it runs (a compile).

    A compile makes tens of thousands of objects that live on (graphs, plans, guards), and
    those survivors make CPython run full collections, each a walk over every object of the
    process: 0.12-0.22 s in bench/end_to_end.py's process (torch, scikit-learn and autojit
    loaded), half of the CNN step's dynamic compile there. Paused, the compile's temporaries
    go by reference counting and its survivors seldom reach the threshold of a full pass.
    Nothing is freed later than a pause allows: cyclic garbage made meanwhile is collected
    by the next collection after it."""

    @functools.wraps(method)
    def paused(*args, **kwargs):
        if not gc.isenabled():  # paused already (a nested compile) or by the program
            return method(*args, **kwargs)
        gc.disable()
        try:
            return method(*args, **kwargs)
        finally:
            gc.enable()

    return paused


def run_stage(compiled, name: str, function, *arguments):
    """`function(*arguments)` as the stage `name` of `compiled`'s compile: timed, logged and
    dumped (see the module docstring)."""
    dumped = dumped_stages()
    started = time.perf_counter()
    try:
        result = function(*arguments)
    except (GraphBreak, GiveUp):
        raise
    except Exception as error:
        if not errors_suppressed():
            raise
        # autojit._dynamo.config.suppress_errors: the function runs eagerly from now on.
        raise GiveUp(f"the {name} stage failed ({type(error).__name__}: {error}); "
                     "suppress_errors is set") from error
    seconds = time.perf_counter() - started
    compiled.stage_seconds[name] = compiled.stage_seconds.get(name, 0.0) + seconds
    config.log("stages", f"{compiled.name()}: {name} {seconds * 1e3:.2f} ms")
    if name in dumped:
        print(f"=== {compiled.name()}: after {name} ===\n{_describe(result)}", file=sys.stderr)
    return result


def _describe(result) -> str:
    """What a stage returned, as text: a graph's IR, its guards, a plan's steps."""
    if isinstance(result, GuardedTrace):
        return f"{result.graph}\n--- guards ---\n{result.guards}"
    if isinstance(result, (Trace, Executable)):
        return str(result.graph)
    if isinstance(result, Partition):
        return f"--- forward ---\n{result.forward}\n--- backward ---\n{result.backward}"
    if result is None:
        return "(no plan: the reference interpreter runs the graph)"
    return result.describe() if hasattr(result, "describe") else str(result)


def compile_graph(compiled, guarded: GuardedTrace, graph: Graph, generic: bool = False,
                  optimized: bool = False, plans: dict | None = None) -> Executable:
    """optimize, partition (when results are differentiated outside), schedule and build:
    `graph` (the trace's graph, or a dynamic trace's graph at one binding of its sizes) as
    an Executable. With `generic`, its kernels read their sizes at run time; `optimized`: the
    graph is already through the passes (a binding of a graph optimized with its symbols,
    unbacked_sizes.py); `plans`: the plans of segments before the last by their text, which
    the bindings of one trace share (those that compute the sizes are the same graphs)."""
    traced = guarded.trace
    fresh_grads = set(traced.tracer.fresh_grads)
    _prepare(compiled, graph)
    optimized = graph if optimized else run_stage(compiled, "optimize", optimize_cached, graph)
    split = run_stage(compiled, "partition", partition, optimized) \
        if guarded.has_backward else None
    main = split.forward if split is not None else optimized
    checks = boundaries(traced.env, traced.graph)
    if checks:
        # Decisions on graph values: the graph runs in segments, checked between them.
        segments = run_stage(compiled, "split", split_segments, main,
                             [names for names, _ in checks])
        plan = SegmentedPlan(segments, [
            _segment_plan(compiled, segment, generic, fresh_grads,
                          plans if number < len(segments) - 1 else None)
            for number, segment in enumerate(segments)], [found for _, found in checks])
    else:
        plan = run_stage(compiled, "schedule", schedule, compiled, main, generic, fresh_grads)
    backward = run_stage(compiled, "schedule", schedule, compiled, split.backward, generic,
                         frozenset()) if split is not None else None
    return run_stage(compiled, "build", build, compiled, guarded, graph, optimized, split, plan,
                     backward)


def _segment_plan(compiled, segment, generic: bool, fresh_grads, plans: dict | None):
    """A segment's plan: scheduled, or one scheduled before for the same graph (`plans`)."""
    key = format_graph(segment.graph) if plans is not None else None
    plan = plans.get(key) if key is not None else None
    if plan is None:
        plan = run_stage(compiled, "schedule", schedule, compiled, segment.graph, generic,
                         fresh_grads)
        if key is not None:
            plans[key] = plan
    return plan


def _prepare(compiled, graph: Graph) -> None:
    """The CPU backend's `prepare` (backends.py) for a graph it will build, so that what its
    plan needs compiles on the compile threads while the passes run on this one."""
    if compiled.backend != "cpu" or _device_of_call(graph, compiled.call_arguments) is not None:
        return
    try:
        backend = backends.load("cpu")
    except Exception:  # noqa: BLE001 - llvmlite or numba missing: schedule() says so
        return
    prepare = getattr(backend, "prepare", None)
    if prepare is not None:
        prepare(graph)


def interpret_once(compiled, guarded: GuardedTrace, graph: Graph) -> Executable:
    """partition (when results are differentiated outside) and build, with no plans: the
    Executable for a trace that serves one call, whose graph the reference interpreter runs.

    Optimizing and scheduling a graph that runs once would cost many times what running it
    costs; the interpreter gives eager's values, and the next call traces again. The
    interpreter runs on host arrays only: a graph on a GPU is compiled as any other."""
    if _device_of_call(graph, compiled.call_arguments) is not None:
        return compile_graph(compiled, guarded, graph)
    split = run_stage(compiled, "partition", partition, graph) if guarded.has_backward else None
    return run_stage(compiled, "build", build, compiled, guarded, graph, graph, split, None, None)


def schedule(compiled, graph: Graph, generic: bool, fresh_grads) -> object | None:
    """The plan running `graph`: the backend's fusion schedule and kernels, or None where the
    graph runs on the reference interpreter (backend="interpreter", or no code generator).

    A graph whose tensors are on a GPU (or backend="cuda") runs on that device's backend;
    the schedule is the same, only the kernels differ."""
    arguments = compiled.call_arguments
    device = _device_of_call(graph, arguments)
    if compiled.backend == "cuda" or (compiled.backend == "cpu" and device is not None):
        backend = backends.load("cuda" if compiled.backend == "cuda" else device)
        if compiled.backend != "cpu" or backend.claims(graph, arguments):
            return backend.build(graph, arguments, generic, fresh_grads)
    if compiled.backend != "cpu":
        return None
    try:
        backend = backends.load("cpu")
    except Exception as error:  # llvmlite or numba missing, or failing to load
        compiled.no_code_generator(error)
        return None
    return backend.build(graph, arguments, generic, fresh_grads)


def rebind(compiled, plan, graph: Graph) -> object | None:
    """The plan of `graph` made from `plan`, which `schedule` made for a graph of the same
    nodes at other sizes (binding_plans.py), by the CPU backend's `rebind`; None where it
    cannot be (another backend, a device, a decision that does not hold at these sizes)."""
    if plan is None or compiled.backend != "cpu" or \
            _device_of_call(graph, compiled.call_arguments) is not None:
        return None
    try:
        backend = backends.load("cpu")
    except Exception:  # noqa: BLE001 - no code generator: schedule() says so
        return None
    rebinding = getattr(backend, "rebind", None)
    return rebinding(plan, graph) if rebinding is not None else None


def build(compiled, guarded: GuardedTrace, traced_graph: Graph, optimized: Graph, split,
          plan, backward_plan) -> Executable:
    """The Executable: the graph it runs (the forward of `split` when there is one), its
    plans, guards and the effects it repeats on each call."""
    traced = guarded.trace
    prints = (traced.prints.effects, traced.prints.formatted)
    graph = split.forward if split is not None else optimized
    executable = Executable(graph, traced_graph, traced.template, guarded.cleared_grads,
                            guarded.guards, traced.arg_positions, plan)
    if split is not None:
        executable.joint = optimized
        runner = backward_plan.run_arrays if backward_plan is not None else (
            lambda arrays: interpret(split.backward, *arrays))
        executable.backward = CompiledBackward(compiled.name(), split, runner,
                                               traced.arg_positions)
        executable.backward.plan = backward_plan
        executable.requiring = {name: number
                                for number, (name, _) in enumerate(traced.requiring)}
    elif traced.backward_error is not None:
        executable.failing_backward = (traced.backward_error, traced.requiring)
        # As _failing_result sets it, so that the first call's recipe is not made twice.
        executable.requiring = {name: number
                                for number, (name, _) in enumerate(traced.requiring)}
    executable.nan_checks = traced.nan_checks
    executable.fresh_grads = set(traced.tracer.fresh_grads)
    executable.overwritten_grads = frozenset(traced.tracer.grad_overwritten)
    executable.output_layouts = dict(traced.tracer.output_layouts)
    executable.host_outputs = frozenset(traced.tracer.host_outputs)
    executable.output_leaves = frozenset(traced.tracer.output_leaves)
    executable.conj_outputs = frozenset(traced.tracer.conj_outputs)
    executable.version_bumps = guarded.version_bumps
    executable.python_writes = guarded.python_writes
    executable.prints = prints if prints[0] or prints[1] else None
    env = traced.env
    # Symbols read after a run: graph values, runtime scalars, and dynamic sizes that reach a
    # result, a print or a write into Python state (each run's own, from its arguments).
    if env.leaves or env.runtime or env.sources and (
            executable.python_writes is not None or executable.prints is not None or
            symbolic_leaves(traced.template) or env.value_checks):
        executable.env = env
    executable.value_checks = list(env.value_checks)
    return executable


def _device_of_call(graph: Graph, arguments: tuple) -> str | None:
    """The device type of the first tensor of the call that is not on the CPU, or None (then
    no device backend is imported)."""
    tensors = [x for x in arguments if isinstance(x, Tensor)] + [
        entry.tensor for entry in graph.inputs if entry.kind == "captured"]
    for x in tensors:
        if x._payload is not None and x._payload.__class__ is not np.ndarray:
            return x.device.type
    return None
