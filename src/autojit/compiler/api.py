"""autojit.compile: trace a function once per guard set and run it as an executable.

The flow of one call of a compiled function:

1. Look for an executable whose guards (guards.py) hold for this call; run it if found.
2. Otherwise trace the function (ir/trace.py's Tracer) on symbolic copies of its tensor
   arguments: forward, backward, optimizer updates all land in one graph. Captured tensors
   (parameters, optimizer state, .grad) become graph inputs; their in-place updates, .grad
   assignments and `.grad = None` become explicit effects (DESIGN rule 6).
3. Optimize the graph (ir/pipeline.py), hand it to the backend, wrap it in an Executable
   (codegen/executable.py) with its guards, and run it.

What tracing cannot capture (`.item()`, `bool(tensor)`, printing a tensor, data-dependent
control flow) is a graph break: the call runs eagerly, with a warning once per source line, or
an error naming the line when fullgraph=True. A function that returns tensors requiring grad
gets a compiled backward too (compiled_backward.py): the results' grad_fn runs it. More than
`recompile_limit` executables for one function fall back to eager with one warning naming
the guard that kept failing. backend="eager" and AUTOJIT_DISABLE=1 run the function eagerly.
"""

from __future__ import annotations

import functools
import linecache
import time
import warnings

import numpy as np

from .. import config
from ..ir.graph import Graph
from ..ir.interpreter import interpret
from ..ir.partition import partition
from ..ir.printing import PrintCapture
from ..ir.trace import Tracer
from ..tensor.graph_break import GraphBreak, graph_break, user_frame
from ..tensor.state import state
from ..tensor.symbolic import ShapeEnv
from ..tensor.tensor import Tensor
from . import backends
from .compiled_backward import CompiledBackward, trace_backward
from .dynamic_shapes import DynamicExecutable, DynamicSizes
from .executable import Executable
from .guards import (
    GuardSet,
    array_budget_exceeded,
    array_conditions,
    arrays_to_compare,
    grad_condition,
    mode_conditions,
    observation_conditions,
    reachable_tensor_conditions,
    symbolic_conditions,
    tensor_conditions,
    written_input_conditions,
)
from .reachability import StateChanges, Walk, function_roots, replay_function, rng_state
from .result_template import (
    alias_fresh_grads,
    flatten_result,
    requiring_results,
    returned_objects,
)

BACKENDS = ("cpu", "cuda", "eager", "interpreter")
DEFAULT_RECOMPILE_LIMIT = 8


class _RunEagerly(Exception):
    """Raised inside a trace: this call runs eagerly (without giving up compiling)."""


class CompileWarning(UserWarning):
    """A compiled function ran eagerly (graph break, recompile limit, unsupported pattern)."""


def compile(fn=None, *, backend: str = "cpu", fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, recompile_limit: int = DEFAULT_RECOMPILE_LIMIT):
    """Compile `fn`: usable as `@autojit.compile` or `@autojit.compile(backend=...)`.

    dynamic=None (the default) traces static sizes first and makes an argument's dimension
    symbolic once it has been called with a second size; True makes every dimension of the
    tensor arguments symbolic from the first call; False specializes on every size.
    """
    if backend not in BACKENDS:
        raise ValueError(f"compile: unknown backend {backend!r}; expected one of {BACKENDS}")
    if dynamic not in (None, True, False):
        raise TypeError(f"compile: dynamic must be None, True or False, got {dynamic!r}")
    if fn is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph,
                                 dynamic=dynamic, recompile_limit=recompile_limit)
    if not callable(fn):
        raise TypeError(f"compile expects a callable, got {type(fn).__name__}")
    return CompiledFunction(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                            recompile_limit=recompile_limit)


class CompiledFunction:
    """The callable autojit.compile returns; it also exposes what it compiled."""

    # What a guard walk (reachability.py) looks into when a compiled function reaches this
    # one: only the function it runs, not the executables it keeps.
    _reachable_attributes = ("fn",)

    def __init__(self, fn, *, backend: str, fullgraph: bool, recompile_limit: int,
                 dynamic: bool | None = None):
        self.fn = fn
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.sizes = DynamicSizes(dynamic)  # which argument dimensions trace symbolically
        self.recompile_limit = recompile_limit
        self.executables: list[Executable] = []
        self.eager_reason: str | None = None  # set when the function gave up compiling
        self._warned_lines: set = set()
        self._break_counts: dict = {}
        self._state_traces = 0  # consecutive traces that changed the state guards read
        self._last_failure: str | None = None
        self.compile_seconds = 0.0
        # AUTOJIT_DISABLE is read when the function is compiled, not on every call.
        self.eager = backend == "eager" or config.disabled()
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, instance, owner=None):
        """Decorating a method: bind `self` as the first argument, sharing the executables."""
        if instance is None:
            return self
        return functools.partial(self.__call__, instance)

    # ---- calling ------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if kwargs:
            return self._call_with_keywords(args, kwargs)
        if self.eager or state.tracer is not None or self.eager_reason is not None:
            # Inside another compiled function's trace, the call is simply inlined.
            return self.fn(*args)
        for executable in self.executables:
            reason = executable.guards.failure(args)
            if reason is None:
                return executable.run(args)
            self._last_failure = reason
        return self._compile_and_run(args)

    def _call_with_keywords(self, args: tuple, kwargs: dict):
        names = tuple(sorted(kwargs))
        bound = _KeywordCall(self.fn, names)
        flat = args + tuple(kwargs[name] for name in names)
        key = ("keywords", names, len(args))
        compiled = self.__dict__.setdefault("_keyword_variants", {}).get(key)
        if compiled is None:
            compiled = CompiledFunction(bound, backend=self.backend, fullgraph=self.fullgraph,
                                        recompile_limit=self.recompile_limit,
                                        dynamic=self.dynamic)
            self._keyword_variants[key] = compiled
        return compiled(*flat)

    def _compile_and_run(self, args: tuple):
        if len(self.executables) >= self.recompile_limit:
            self._give_up(f"recompile limit of {self.recompile_limit} reached; last guard "
                          f"failure: {self._last_failure}")
            return self.fn(*args)
        if self.executables:
            config.log("recompiles", f"{self._name()}: recompiling because "
                       f"{self._last_failure}")
        self.sizes.observe(args)
        started = time.perf_counter()
        try:
            executable, result = self._trace(args)
        except GraphBreak as graph_break:
            if self.fullgraph:
                raise
            self._warn_graph_break(graph_break)
            where = (graph_break.filename, graph_break.lineno)
            self._break_counts[where] = self._break_counts.get(where, 0) + 1
            if self._break_counts[where] >= 2:
                # The same break again: stop retracing on every call (already warned once).
                self.eager_reason = f"graph break at {where[0]}:{where[1]}"
            return self.fn(*args)
        self.compile_seconds += time.perf_counter() - started
        if executable is None:
            return result
        if getattr(executable, "state_changed", None):
            # The traced call changed the structure of Python state the guards read (it
            # grew a list, added an attribute, replaced an object): eager does that on every
            # call, so this executable serves this call only, and the next call traces again.
            self._state_traces += 1
            if self._state_traces >= 2:
                self._give_up(f"every call changes Python state it can reach "
                              f"({', '.join(executable.state_changed[:3])})")
            return executable.run(args)
        self._state_traces = 0
        self.executables.insert(0, executable)
        return executable.run(args)

    # ---- tracing ------------------------------------------------------------------------------

    def _trace(self, args: tuple):
        self._call_args = args  # CUDA hook: _plan picks the backend from the tensors' device
        guards = GuardSet()
        before = Walk(*function_roots(self._function(), args))
        if not before.complete:
            return None, self._eager_once(args, (
                f"it can reach more Python state than the guards check (the walk stopped at "
                f"{before.too_large}, after {len(before.observations)} values); reach less "
                "state from the function (pass what it needs as arguments)"))
        guards.add_constants(before.constants)
        rng_before = rng_state()
        tensors_before = before.tensors
        graph = Graph()
        env = ShapeEnv()
        call_args, arg_positions, symbolic_args = [], [], []
        for position, argument in enumerate(args):
            if isinstance(argument, Tensor) and argument._data is not None:
                graph.add_input(self.sizes.shape(position, argument, env), argument.dtype, "arg",
                                f"arg{position}")
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
        names = {id(tensor._data): display for _, display, tensor in tensors_before.values()}
        tracer = Tracer(graph, names)
        for (entry, symbolic), position in zip(symbolic_args, arg_positions):
            tracer.add_argument(entry, symbolic, args[position]._data)
        # The .grad of every tensor the function can reach, before it runs: a `p.grad = None`
        # in the function happens for real while tracing, and must be undone (the executable
        # repeats it on each call) before guards and write-back look at .grad.
        grads_before = [(tensor, tensor._grad) for _, _, tensor in tensors_before.values()]
        state.tracer = tracer
        eager_call = False
        try:
            with PrintCapture() as prints:
                tracer.prints = prints
                result = self.fn(*call_args)
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
            config.log("recompiles", f"{self._name()}: this call runs eagerly: {reason}")
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
            mode_conditions(guards)
            guards.build()
            return _EagerExecutable(self.fn, guards, graph), None
        changes = StateChanges(before, Walk(*function_roots(self._function(), args),
                                            copies=False))
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
        _drop_local_grads(graph, tracer.grad_owners, tracer.made)
        has_backward = any(entry.kind == "cotangent" for entry in graph.inputs)
        symbolic_by_input = {id(entry): symbolic for entry, symbolic in symbolic_args}
        if requiring and not has_backward and backward_error is None:
            before.restore()  # the eager run does the Python side effects again
            return None, self._eager_once(args, "the function returns a tensor that requires "
                                          "grad but depends on no input that requires grad")
        arrays = arrays_to_compare(before, graph)
        if array_budget_exceeded(arrays):
            before.restore()
            return None, self._eager_once(args, array_budget_exceeded(arrays))
        grad_guarded = set(tracer.grad_accessed) | {id(tensor) for tensor in cleared}
        for output in graph.outputs:
            if output.kind == "grad":
                grad_guarded.add(id(output.target.tensor) if output.target.kind == "captured"
                                 else id(symbolic_by_input[id(output.target)]))
        # A .grad the function assigned before reading it: what it held before the call
        # cannot change the result, so a new tensor there each call must not retrace.
        grad_guarded -= tracer.grad_overwritten
        for entry, symbolic in symbolic_args:
            if id(symbolic) in grad_guarded:
                grad_guarded.add(id(args[arg_positions[graph.arg_inputs.index(entry)]]))
        overlap = self._write_guards(guards, args, graph, before, arrays, grad_guarded, env,
                                     arg_positions, tracer.first_writes, tracer.made,
                                     returned_objects(template))
        if overlap is not None:
            before.restore()  # the eager run does the Python side effects again
            graph_break(overlap, needs_data=False)
        cleared_grads = [entry.tensor for entry in tracer.cleared_grads] + [
            tensor for tensor in cleared if all(tensor is not entry.tensor
                                                for entry in tracer.cleared_grads)]
        version_bumps = [(entry.tensor, None, count) if entry.kind == "captured" else
                         (None, arg_positions[graph.arg_inputs.index(entry)], count)
                         for entry, count in tracer.version_bumps]
        # Python state the traced call wrote: scalars are written again by every run (the
        # guards hold the values from before); anything else makes this trace good for this
        # call only (compile.py traces the next call again).
        python_writes = replay_function(changes.scalar_writes, dict(before.constants)) \
            if changes.scalar_writes else None
        parts = (template, cleared_grads, guards, arg_positions, has_backward, requiring,
                 backward_error, nan_checks, set(tracer.fresh_grads), version_bumps,
                 python_writes, (prints.effects, prints.formatted))
        config.log("guards", f"{self._name()}: {len(guards)} guards\n{guards}")
        if env.hints:
            for text, value, where in env.specializations:
                config.log("recompiles", f"{self._name()}: dynamic size {text} specialized to "
                           f"{value}: {where}")
            executable = DynamicExecutable(graph, env, guards, lambda concrete: self._build(
                concrete, graph, *parts, generic=True))
            # Compiled now for the traced sizes, so that an error surfaces like a static one.
            executable.specialize(tuple(env.hints[name] for name in executable.symbols))
        else:
            executable = self._build(graph, graph, *parts)
        executable.state_changed = changes.structural
        return executable, None

    def _build(self, graph: Graph, traced: Graph, template, cleared_grads: list, guards,
               arg_positions: list, has_backward: bool, requiring: list, backward_error,
               nan_checks: list, fresh_grads: set, version_bumps: list, python_writes,
               prints: tuple, generic: bool = False) -> Executable:
        """Optimize a traced graph (concrete sizes) and compile it into an Executable; with
        `generic`, its kernels read their sizes at run time (a dynamic trace's binding)."""
        optimized = self._optimize(graph)
        if has_backward:
            split = partition(optimized)
            executable = Executable(split.forward, traced, template, cleared_grads, guards,
                                    arg_positions, self._plan(split.forward, generic,
                                                              fresh_grads))
            executable.joint = optimized
            executable.backward = CompiledBackward(self._name(), split, self._runner(
                split.backward, generic), arg_positions)
            executable.requiring = {name: number for number, (name, _) in enumerate(requiring)}
        else:
            executable = Executable(optimized, traced, template, cleared_grads, guards,
                                    arg_positions, self._plan(optimized, generic, fresh_grads))
            if backward_error is not None:
                executable.failing_backward = (backward_error, requiring)
        executable.nan_checks = nan_checks
        executable.fresh_grads = fresh_grads
        executable.version_bumps = version_bumps
        executable.python_writes = python_writes
        executable.prints = prints if prints[0] else None
        return executable

    def _function(self):
        """The function the user compiled (keyword calls wrap it)."""
        fn = self.fn
        while isinstance(fn, _KeywordCall):
            fn = fn.fn
        return fn

    def _write_guards(self, guards: GuardSet, args: tuple, graph: Graph, before: Walk,
                      arrays: list, grad_guarded: set, env, arg_positions: list,
                      first_writes: dict, made: set, returned: list):
        """arrays: the NumPy arrays whose values are compared (guards.arrays_to_compare);
        returned: tensors from outside the function it returns as they are;
        grad_guarded: ids of the tensors whose .grad the trace read or wrote; only those
        have their .grad checked; made: ids of the tensors the traced call made. Returns why
        the traced call cannot run compiled (an input written in place shares memory with
        another), else None."""
        guards.require(f"len(args) == {len(args)}", f"the number of arguments changed (was "
                       f"{len(args)})")
        mode_conditions(guards)
        for position, argument in enumerate(args):
            if isinstance(argument, Tensor):
                tensor_conditions(guards, ("args", f"[{position}]"), argument,
                                  f"argument {position}", grad_is=id(argument) in grad_guarded,
                                  dynamic_dims=env.dims_of(position))
        observation_conditions(guards, before.observations)
        array_conditions(guards, arrays)
        for entry in graph.captured_inputs:
            tensor = entry.tensor
            found = before.tensors.get(id(tensor))
            constant = guards.constant(tensor, "T")
            if found is not None:
                guards.require(f"$ is {constant}", f"{found[1]} is another tensor than when "
                               "traced", found[0])
            elif id(tensor) in made:
                continue  # made by the traced call itself: nothing else can reach it
            tensor_conditions(guards, (constant,), tensor, f"captured tensor {entry.name}",
                              grad_is=id(tensor) in grad_guarded)
        # A tensor whose .grad the function only looked at (`if p.grad is None: continue`).
        captured = {id(entry.tensor) for entry in graph.captured_inputs}
        reachable_tensor_conditions(guards, before, captured, returned)
        for path, display, tensor in before.tensors.values():
            if id(tensor) in grad_guarded and id(tensor) not in captured:
                grad_condition(guards, path, tensor, display)
        symbolic_conditions(guards, env)
        overlap = written_input_conditions(guards, args, graph, arg_positions, first_writes)
        guards.build()
        return overlap

    def _optimize(self, graph: Graph) -> Graph:
        from ..ir.passes import optimize

        return optimize(graph)

    def _runner(self, graph: Graph, generic: bool = False):
        """A function running `graph` on its non-captured inputs' arrays."""
        plan = self._plan(graph, generic)
        if plan is not None:
            return plan.run_arrays
        return lambda arrays: interpret(graph, *arrays)

    def _plan(self, graph: Graph, generic: bool = False, fresh_grads: set = frozenset()):
        # A graph whose tensors are on a GPU (or backend="cuda") runs on that device's
        # backend (compiler/backends.py); the schedule is the same, only the kernels differ.
        arguments = getattr(self, "_call_args", ())
        device = _device_of_call(graph, arguments)
        if self.backend == "cuda" or (self.backend == "cpu" and device is not None):
            backend = backends.load("cuda" if self.backend == "cuda" else device)
            if self.backend != "cpu" or backend.claims(graph, arguments):
                return backend.build(graph, arguments, generic, fresh_grads)
        if self.backend != "cpu":
            return None
        try:
            backend = backends.load("cpu")
        except Exception as error:  # llvmlite or numba missing, or failing to load
            _warn_no_code_generator(error)
            return None
        return backend.build(graph, arguments, generic, fresh_grads)

    # ---- falling back -------------------------------------------------------------------------

    def _eager_once(self, args: tuple, reason: str):
        self._give_up(reason)
        return self.fn(*args)

    def _give_up(self, reason: str) -> None:
        self.eager_reason = reason
        _warn(f"autojit.compile: {self._name()} runs eagerly from now on: {reason}")
        config.log("recompiles", f"{self._name()}: giving up: {reason}")

    def _warn_graph_break(self, graph_break: GraphBreak) -> None:
        where = (graph_break.filename, graph_break.lineno)
        config.log("graph_breaks", str(graph_break))
        if where in self._warned_lines:
            return
        self._warned_lines.add(where)
        _warn(f"autojit.compile: graph break in {self._name()}, the call runs eagerly: "
              f"{graph_break}")

    def _name(self) -> str:
        return getattr(self.fn, "__qualname__", None) or type(self.fn).__name__

    # ---- inspection ---------------------------------------------------------------------------

    def _latest(self) -> Executable:
        if not self.executables:
            raise RuntimeError(f"{self._name()} has not been compiled yet: call it first")
        return self.executables[0]

    def ir(self, optimized: bool = True) -> str:
        """The latest executable's graph as text: forward and adjoint in one graph (for a
        function whose results are differentiated outside it, the joint graph that is split
        into the compiled forward and backward, see `forward_ir` and `backward_ir`)."""
        executable = self._latest()
        if not optimized:
            return str(executable.traced)
        return str(executable.joint if executable.joint is not None else executable.graph)

    def forward_ir(self) -> str:
        """The graph the latest executable runs on each call."""
        return str(self._latest().graph)

    def backward_ir(self) -> str:
        """The compiled backward of the latest executable's results ("" when there is none)."""
        backward = self._latest().backward
        return str(backward.graph) if backward is not None else ""

    def guards(self) -> str:
        """The latest executable's guards, one condition per line with its reason."""
        return str(self._latest().guards)

    def fusion_groups(self) -> str:
        plan = self._latest().plan
        if plan is None:
            return "(no kernel plan: interpreted)"
        program = getattr(plan, "program", None)
        if program:
            return f"{plan.describe()}\nnative program: {program.operation_count} native calls"
        if program is False:
            return f"{plan.describe()}\nPython loop: {plan.program_refusal}"
        return plan.describe()

    def kernel_source(self) -> str:
        plan = self._latest().plan
        return plan.llvm_ir() if plan is not None else ""


def _drop_local_grads(graph: Graph, owners: dict, made: set):
    """Remove the .grad outputs of tensors the function made for itself.

    A leaf created inside the function (or a detached alias of a captured tensor) that a
    backward gave a .grad is gone when eager's call returns; writing that .grad back to the
    captured constant would be wrong, and would change a guarded .grad on every call. `made`
    holds the ids of the concrete tensors created while tracing (Tensor._make records them);
    every other tensor existed before the call, however the function reached it, and keeps it.
    """
    graph.outputs = [output for output in graph.outputs
                     if not (output.kind == "grad" and output.target.kind == "captured" and
                             id(owners.get(output.name)) in made)]


def _device_of_call(graph: Graph, arguments: tuple) -> str | None:
    """The device type of the first tensor of the call that is not on the CPU, or None (then
    no device backend is imported)."""
    tensors = [x for x in arguments if isinstance(x, Tensor)] + [
        entry.tensor for entry in graph.inputs if entry.kind == "captured"]
    for x in tensors:
        if x._data is not None and x._data.__class__ is not np.ndarray:
            return x.device.type
    return None


class _EagerExecutable:
    """Runs the function eagerly while its guards (the modes) hold: anomaly mode with results
    differentiated outside, whose backward must run eagerly to be checked node by node."""

    def __init__(self, fn, guards: GuardSet, traced: Graph):
        self.fn, self.guards, self.graph, self.traced = fn, guards, traced, traced
        self.plan = self.joint = self.backward = None
        self.calls = 0

    def run(self, args: tuple):
        self.calls += 1
        return self.fn(*args)


class _KeywordCall:
    """fn called with keywords, as a positional function (keyword values last)."""

    def __init__(self, fn, names: tuple):
        self.fn, self.names = fn, names
        self.__qualname__ = getattr(fn, "__qualname__", type(fn).__name__)
        self.__wrapped__ = fn

    def __call__(self, *flat):
        count = len(flat) - len(self.names)
        return self.fn(*flat[:count], **dict(zip(self.names, flat[count:], strict=True)))


_NO_CODE_GENERATOR_WARNED = []


def _warn_no_code_generator(error: Exception) -> None:
    """Once per process: compiled functions run on the reference interpreter instead."""
    if _NO_CODE_GENERATOR_WARNED:
        return
    _NO_CODE_GENERATOR_WARNED.append(error)
    _warn(f"autojit.compile: the CPU code generator cannot be loaded ({type(error).__name__}: "
          f"{error}); compiled functions run on the reference interpreter, correct but slow. "
          "Install llvmlite and numba (pip install autojit installs both) to compile them.")


def _warn(message: str) -> None:
    """A CompileWarning attributed to the user's line that called the compiled function."""
    frame = user_frame()
    if frame is None:
        warnings.warn(message, CompileWarning, stacklevel=2)
        return
    warnings.warn_explicit(message, CompileWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))
