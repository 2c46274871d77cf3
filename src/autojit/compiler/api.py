"""autojit.compile: the decorator, the compiled function's calls and its inspection.

The flow of one call of a compiled function:

1. Look for an executable whose guards (guards.py) hold for this call; run it if found.
2. Otherwise compile one through the stages (stages.py: trace, prune, guard, optimize,
   partition, schedule, build): the function is traced on symbolic copies of its tensor
   arguments, forward, backward and optimizer updates in one graph, with captured tensors'
   in-place updates, .grad assignments and `.grad = None` as explicit effects
   (docs/notes/aliasing.md); the graph is optimized, scheduled by a backend and wrapped in
   an Executable (executable.py) with its guards, and run.

Decisions on values the graph computes (`if loss.item() > 10:`, `bool(tensor)`, the size of
`nonzero`) are made with the traced call's values and checked on every run, the graph running
in segments between the checks (segments.py): a run whose check fails writes nothing back and
the call runs another executable (the other branch), traces again or runs eagerly. What
tracing cannot capture at all is a graph break: the call runs eagerly, with a warning once per
source line, or an error naming the line when fullgraph=True. A function that returns
tensors requiring grad gets a compiled backward too (compiled_backward.py): the results'
grad_fn runs it. More than
`recompile_limit` executables for one function fall back to eager with one warning naming the
guard that kept failing. backend="eager" and AUTOJIT_DISABLE=1 run the function eagerly.

A recompile reports what changed since the call before it, read from the executable that call
ran (GuardSet.changed: `optimizer.param_groups[0]['lr']: 0.0031 -> 0.0029`); `stats()` counts
the calls, traces and graph breaks (stats.py), and explain.py reports them with the graphs. A
compiled function pickles by reference: as the module attribute it is, or as the function it
compiles, compiled again when loaded.
"""

from __future__ import annotations

import copy
import functools
import linecache
import pickle
import sys
import time
import types
import warnings

from .. import config
from ..ir.graph import Graph
from ..tensor import torch_dispatch, torch_function
from ..tensor.graph_break import GraphBreak, user_frame
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .dynamic_shapes import DynamicExecutable, DynamicSizes, argument_shapes
from .dynamo_config import TORCH_BACKENDS, compile_options
from .executable import Executable, ValueCheckFailed
from .guard_stage import guard, prune
from .guards import (
    GuardSet,
)
from .inspection import Inspection
from .nested_arguments import flatten, given_arguments
from .stages import (
    check_environment,
    compile_graph,
    interpret_once,
    run_stage,
    without_cycle_collection,
)
from .stats import CompileHistory, CompileStats, GraphBreakRecord
from .tracing import (
    EagerCall,
    GiveUp,
    MakesState,
    ScalarSource,
    TraceRaised,
    trace,
)
from .unbacked_sizes import UnbackedExecutable, split_reason, unbacked_executable
from .vmapped import NOT_BATCHED, call_in_vmap

BACKENDS = ("cpu", "cuda", "eager", "interpreter")
DEFAULT_RECOMPILE_LIMIT = 8


# Consecutive traces that each changed the structure of Python state the guards read, after
# which a function runs eagerly: an optimizer's state made on the first call, then made again
# for parameters the caller unfroze or added after it, is two; a function that changes the
# structure on every call gives up at the third.
STATE_TRACES = 3

class CompileWarning(UserWarning):
    """A compiled function ran eagerly (graph break, recompile limit, unsupported pattern)."""


def compile(fn=None, *, backend: str = "cpu", fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, recompile_limit: int | None = None, mode=None,
            options=None, disable: bool = False):
    """Compile `fn`: usable as `@autojit.compile` or `@autojit.compile(backend=...)`.

    dynamic=None (the default) traces static sizes first and makes an argument's dimension
    symbolic once it has been called with a second size; True makes every dimension of the
    tensor arguments symbolic from the first call; False specializes on every size.
    recompile_limit defaults to autojit._dynamo.config.recompile_limit (8). torch.compile's
    backend names, `mode`, `options` and `disable` are taken as dynamo_config.py maps them.
    """
    backend, recompile_limit = compile_options(backend, mode, options, disable,
                                               recompile_limit)
    if backend not in BACKENDS:
        raise ValueError(f"compile: unknown backend {backend!r}; expected one of "
                         f"{BACKENDS + tuple(sorted(set(TORCH_BACKENDS) - set(BACKENDS)))}")
    if dynamic not in (None, True, False):
        raise TypeError(f"compile: dynamic must be None, True or False, got {dynamic!r}")
    if fn is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph,
                                 dynamic=dynamic, recompile_limit=recompile_limit)
    if not callable(fn):
        raise TypeError(f"compile expects a callable, got {type(fn).__name__}")
    check_environment()  # a misspelt AUTOJIT_LOG or AUTOJIT_DUMP fails here, not mid-compile
    options = {"backend": backend, "fullgraph": fullgraph, "dynamic": dynamic,
               "recompile_limit": recompile_limit}
    for wrap in MODULE_WRAPPERS:  # nn's compiled-module proxy, for an nn.Module
        wrapped = wrap(fn, options)
        if wrapped is not None:
            return wrapped
    return CompiledFunction(fn, **options)


# Hooks a higher layer installs (docs/notes/layers.md): `wrap(fn, options)` returns what
# compile returns for `fn` (nn's OptimizedModule for a Module), or None to pass.
MODULE_WRAPPERS: list = []


class CompiledFunction(Inspection):
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
        self._last_run = None  # the executable the last compiled call ran
        # While the first run of a new executable is under way: puts back the Python state its
        # trace changed, should that run not serve the call (reachability.Walk.restore).
        self._undo_trace = None
        self._stats = CompileStats()
        self._history = CompileHistory()
        self.compile_seconds = 0.0
        self.stage_seconds: dict[str, float] = {}  # time spent in each compile stage
        # Paths of Python floats that changed between calls (a learning rate a scheduler
        # sets): traced as runtime floats, read afresh on every call instead of retracing;
        # and those that could not be (the function writes them, or needs their value).
        self.runtime_float_paths: set = set()
        self._constant_float_paths: set = set()
        # Until the first trace: a first call that makes state an object it reaches keeps (an
        # optimizer's) runs eagerly instead (tracing.MakesState); later ones are traced.
        self.first_trace = True
        # The argument shapes (dynamic_shapes.argument_shapes) static executables were traced
        # for: a dynamic trace at those sizes compiles them static at once.
        self._static_shapes: set = set()
        # Paths of lists the function only appends to, and of places it only assigns with
        # values it read from tensors (writebacks.py): not guarded.
        self.append_only_paths: set = set()
        self.write_only_paths: set = set()
        self.call_arguments: tuple = ()  # the call being compiled (stages.schedule reads it)
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
        if state.vmap_levels and state.tracer is None:  # inside vmap: vmapped.py
            result = call_in_vmap(self, args, kwargs, _warn)
            if result is not NOT_BATCHED:
                return result
        if kwargs:
            return self._call_with_keywords(args, kwargs)
        if state.tracer is not None:
            # Inside another compiled function's trace, the call is simply inlined.
            return self.fn(*args)
        self._stats.calls += 1
        if self.eager or self.eager_reason is not None:
            self._stats.eager_calls += 1
            return self.fn(*args)
        stance = STANCE[0]
        if stance != "default" and self._by_stance(stance):
            self._stats.eager_calls += 1
            return self.fn(*args)
        args = flatten(args)  # tensors inside container arguments are inputs too
        if torch_function.ACTIVE and _overriding_subclass(args):
            return self._eager_for_subclass(args)
        missed = None
        for executable in self.executables:
            if executable.guards.failure(args) is None:
                try:
                    result = self._run(executable, args)
                except ValueCheckFailed as failed:
                    # A decision on a graph value went the other way: another executable (the
                    # other branch) may serve the call, else it traces again.
                    self._stats.value_check_failures += 1
                    missed = (executable, failed)
                    continue
                self._last_run = executable
                if missed is not None and (not isinstance(executable, DynamicExecutable) or
                                           isinstance(executable, UnbackedExecutable)):
                    # The branch this call took: tried first from now on (a trace for the
                    # sizes a graph computes before one specialized on a count of 0 or 1).
                    self.executables.remove(executable)
                    self.executables.insert(0, executable)
                return result
        self._last_failure = self._what_changed(args, missed)
        return self._compile_and_run(args)

    def _run(self, executable, args: tuple):
        if isinstance(executable, _EagerExecutable):
            self._stats.eager_calls += 1
            return executable.run(args)
        watches = state.saved_watch  # a checkpoint's, around the call (checkpoint_stop.py)
        if watches:
            count = getattr(executable, "saving_nodes", None)
            if any(watch.stops_within(count) for watch in watches) and \
                    (count is None or getattr(executable, "python_effects", True)):
                # A checkpoint's recomputation stops inside this call: eagerly, the Python
                # effects after the stop (a global hook's count, say) do not happen.
                return self._eager_after_trace(args)
        try:
            result = executable.run(args)
        except Exception as error:
            if not getattr(error, "autojit_rerun_eagerly", False):
                raise
            # A kernel found what eager raises for (a target out of range), before anything
            # was stored: the call runs eagerly and raises eager's error from the user's line.
            return self._eager_after_trace(args)
        self._stats.compiled_calls += 1
        if watches:
            for watch in watches:  # may stop a checkpoint's recomputation here
                watch.made(count)
        return result

    def _eager(self, args: tuple):
        self._stats.eager_calls += 1
        return self.fn(*given_arguments(args))

    def _eager_for_subclass(self, args: tuple):
        """A call given a Tensor subclass whose __torch_function__ sees its ops runs eagerly:
        a trace holds plain symbolic tensors, so the handler would not run (warned once)."""
        if "subclass" not in self._warned_lines:
            self._warned_lines.add("subclass")
            _warn(f"autojit.compile: {self.name()} runs eagerly when given a Tensor subclass "
                  f"that overrides __torch_function__ or __torch_dispatch__")
        return self._eager(args)

    def _eager_after_trace(self, args: tuple):
        """The call run eagerly instead of by the executable just traced for it: first the
        Python state the trace left as the call changed it is put back as it was (containers,
        attributes), so that eager's call does it once."""
        undo, self._undo_trace = self._undo_trace, None
        if undo is not None:
            undo()
        return self._eager(args)

    def _what_changed(self, args: tuple, missed=None) -> str | None:
        """Why this call reuses no executable: the guard that fails for the executable the
        last compiled call ran (the newest where that one is gone), with its source path and
        the values before and now, or the decision on a graph value that went another way in
        it; the call before is the one a program changed something since."""
        if not self.executables:
            return None
        last = next((executable for executable in self.executables
                     if executable is self._last_run), self.executables[0])
        changed = last.guards.changed(args)
        if changed is None and missed is not None:
            return str(missed[1])
        return changed

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
            compiled._stats, compiled._history = self._stats, self._history  # counted as one
            self._keyword_variants[key] = compiled
        return compiled(*flat)

    def _by_stance(self, stance: str) -> bool:
        """Whether torch.compiler.set_stance's `stance` runs this call eagerly: always
        ("force_eager"), or the first call ("eager_then_compile"); the stances about
        recompiling are decided in _compile_and_run."""
        if stance == "force_eager":
            return True
        return stance == "eager_then_compile" and self._stats.calls == 1

    def _compile_and_run(self, args: tuple):
        if self.executables and STANCE[0] in ("eager_on_recompile", "fail_on_recompile"):
            if STANCE[0] == "fail_on_recompile":
                raise RuntimeError(f"Detected recompile when torch.compile stance is "
                                   f"'fail_on_recompile': {self.name()}, because "
                                   f"{self._last_failure}")
            return self._eager(args)
        if len(self.executables) >= self.recompile_limit:
            self._give_up(f"recompile limit of {self.recompile_limit} reached; last guard "
                          f"failure: {self._last_failure}")
            return self._eager(args)
        if self.executables:
            config.log("recompiles", f"{self.name()}: recompiling because "
                       f"{self._last_failure}",
                       f"Recompiling function {self.name()}\n    triggered by the following "
                       f"guard failure(s):\n    - {self._last_failure}")
            self._stats.recompiles += 1
            self._history.add_recompile(self._last_failure)
            self._observe_changed_float(args)
        self.sizes.observe(args)
        started = time.perf_counter()
        # How the call runs where it does not compile: decided in the handlers, run after
        # them, so that an error the user's code raises there is not chained to the
        # compiler's own exception ("During handling of the above exception...").
        instead = None
        try:
            executable = self._compile(args)
        except GraphBreak as graph_break:
            self._stats.graph_breaks += 1
            self._history.add_break(GraphBreakRecord(
                graph_break.what, graph_break.filename, graph_break.lineno,
                graph_break.source))
            if self.fullgraph:
                raise
            self._warn_graph_break(graph_break)
            where = (graph_break.filename, graph_break.lineno)
            self._break_counts[where] = self._break_counts.get(where, 0) + 1
            if self._break_counts[where] >= 2:
                # The same break again: stop retracing on every call (already warned once).
                self.eager_reason = f"graph break at {where[0]}:{where[1]}"
            instead = "eager"
        except GiveUp as reason:
            self._give_up(str(reason))
            instead = "eager"
        except MakesState as reason:
            config.log("recompiles", f"{self.name()}: the first call runs eagerly: it makes "
                       f"the state of {reason}")
            self._stats.state_calls += 1
            instead = "state"
        except TraceRaised as raised:
            # The trace put back what the call did before it raised: eager's call does it
            # again and raises eager's error, from the user's own frames.
            instead = f"tracing raised {raised} where the eager call did not"
        finally:
            self.call_arguments = ()
        if instead == "eager":
            return self._eager(args)
        if instead == "state":
            return self.fn(*given_arguments(args))
        if instead is not None:
            result = self._eager(args)
            self._give_up(instead)
            return result
        self.compile_seconds += time.perf_counter() - started
        if self._history.recording is not None:
            self._history.recording.append(executable)
        if getattr(executable, "state_changed", None):
            # The traced call changed the structure of Python state the guards read (it
            # grew a list, added an attribute, replaced an object): eager does that on every
            # call, so this executable serves this call only, and the next call traces again.
            self._state_traces += 1
            if self._state_traces >= STATE_TRACES:
                self._give_up(f"every call changes Python state it can reach "
                              f"({', '.join(executable.state_changed[:3])})")
            try:
                return self._run(executable, args)
            except ValueCheckFailed:
                self._stats.value_check_failures += 1
                return self._eager_after_trace(args)
            finally:
                self._undo_trace = None
        self._state_traces = 0
        if isinstance(executable, DynamicExecutable):
            # Size-generic: tried after the executables made for one size each, which serve
            # their sizes faster (a training loop's full batches, once its ragged last batch
            # made a dimension dynamic).
            self.executables.append(executable)
        else:
            self.executables.insert(0, executable)
        self._last_run = executable
        try:
            return self._run(executable, args)
        except ValueCheckFailed as failed:
            # The compiled graph decided otherwise than the trace did on this very call (its
            # kernels round differently from the eager values the trace decided with): this
            # call runs eagerly, the executable stays for the calls it agrees with.
            self._stats.value_check_failures += 1
            config.log("recompiles", f"{self.name()}: the new executable's {failed}; this "
                       "call runs eagerly")
            return self._eager_after_trace(args)
        finally:
            self._undo_trace = None

    def _observe_changed_float(self, args: tuple) -> None:
        """A float or int the last executable's guards held was found changed: from now on it
        is a runtime scalar, read on every call, unless dynamic=False (or it cannot be one)."""
        if self.dynamic is False:
            return
        for _, path in self.executables[0].guards.changed_float_tags(args):
            if path not in self._constant_float_paths and ScalarSource.replaceable(path):
                config.log("recompiles", f"{self.name()}: a scalar that changed between calls "
                           "is read on every call from now on")
                self.runtime_float_paths.add(path)

    def declare_runtime_floats(self, paths: list) -> None:
        """The floats the walk before a trace found where a class says they change between
        calls (`_runtime_scalar_attributes`: an optimizer's learning rate, betas, eps, which
        schedulers set): read on every call from the first trace on, so that the first change
        traces nothing again; not with dynamic=False, nor those found to be constants."""
        if self.dynamic is False:
            return
        for path in paths:
            if path not in self._constant_float_paths and ScalarSource.replaceable(path):
                self.runtime_float_paths.add(path)

    @without_cycle_collection
    def _compile(self, args: tuple):
        """The executable for this call, through the compile stages (stages.py)."""
        self.call_arguments = args  # the schedule stage picks a backend by the tensors' device
        self._stats.traces += 1
        try:
            traced = run_stage(self, "trace", trace, self, args)
        except MakesState:
            self._stats.traces -= 1  # nothing was traced
            raise
        except Exception as error:
            if not self.runtime_float_paths:
                raise
            # A runtime float the function writes, or uses where no symbol can stand (a
            # graph break on it): those floats are constants of the trace again.
            config.log("recompiles", f"{self.name()}: floats read on every call are "
                       f"constants again ({type(error).__name__}: {error})")
            self._constant_float_paths |= self.runtime_float_paths
            self.runtime_float_paths = set()
            self._stats.traces += 1
            traced = run_stage(self, "trace", trace, self, args)
        if isinstance(traced, EagerCall):
            return _EagerExecutable(self.fn, traced.guards, traced.graph)
        for check in traced.env.value_checks:  # graph breaks compiled as splits
            if check.kind in ("value", "size"):
                self._stats.split_breaks += 1
                where = check.where or (None, None)
                self._history.add_break(GraphBreakRecord(
                    split_reason(check, traced.env), *where,
                    linecache.getline(*where).strip() if where[0] else "", split=True))
        traced = run_stage(self, "prune", prune, traced)
        guarded = run_stage(self, "guard", guard, traced)
        config.log("guards", f"{self.name()}: {len(guarded.guards)} guards\n{guarded.guards}")
        env = traced.env
        if env.unbacked:  # sizes the graph computes: unbacked_sizes.py
            executable = unbacked_executable(self, traced, guarded)
        elif traced.changes.structural and not env.hints:
            executable = interpret_once(self, guarded, traced.graph)
        elif env.hints:
            for text, value, where in env.specializations:
                config.log("recompiles", f"{self.name()}: dynamic size {text} specialized to "
                           f"{value}: {where}")
            executable = DynamicExecutable(
                traced.graph, env, guarded.guards,
                lambda concrete: self._compile_binding(guarded, concrete),
                lambda concrete: self._compile_binding(guarded, concrete, generic=False),
                clock=lambda: self._stats.calls)
            # Compiled now for the traced sizes, so that an error surfaces like a static one;
            # static where a static executable served them (the full batches, traced again
            # because a learning rate changed), as STATIC_AFTER calls in a row would make it.
            executable.specialize(tuple(env.hints[name] for name in executable.symbols),
                                  static=argument_shapes(args) in self._static_shapes)
        else:
            executable = compile_graph(self, guarded, traced.graph)
            self._static_shapes.add(argument_shapes(args))
        executable.state_changed = traced.changes.structural
        # For a checkpoint's early stop around the call (utils/checkpoint_stop.py).
        executable.saving_nodes = traced.tracer.saving_nodes
        executable.python_effects = _has_effects(traced, guarded)
        traced.tracer.scalars.release()
        self._undo_trace = traced.before.restore
        return executable

    @without_cycle_collection
    def _compile_binding(self, guarded, concrete, generic: bool = True, **options):
        """A dynamic trace's graph at one binding of its sizes, compiled (generic kernels, or
        static ones for a binding called often: dynamic_shapes.STATIC_AFTER); `options`:
        stages.compile_graph's."""
        self.call_arguments = guarded.trace.args
        try:
            return compile_graph(self, guarded, concrete, generic=generic, **options)
        finally:
            self.call_arguments = ()

    def user_function(self):
        """The function the user compiled (keyword calls wrap it)."""
        fn = self.fn
        while isinstance(fn, _KeywordCall):
            fn = fn.fn
        return fn

    # ---- falling back -------------------------------------------------------------------------

    def _eager_once(self, args: tuple, reason: str):
        self._give_up(reason)
        return self._eager(args)

    def no_code_generator(self, error: Exception) -> None:
        """The CPU code generator failed to load: graphs run on the reference interpreter."""
        _warn_no_code_generator(error)

    def _give_up(self, reason: str) -> None:
        self.eager_reason = reason
        _warn(f"autojit.compile: {self.name()} runs eagerly from now on: {reason}")
        config.log("recompiles", f"{self.name()}: giving up: {reason}")

    def _warn_graph_break(self, graph_break: GraphBreak) -> None:
        where = (graph_break.filename, graph_break.lineno)
        config.log("graph_breaks", str(graph_break))
        if where in self._warned_lines:
            return
        self._warned_lines.add(where)
        _warn(f"autojit.compile: graph break in {self.name()}, the call runs eagerly: "
              f"{graph_break}")

    def name(self) -> str:
        return getattr(self.fn, "__qualname__", None) or type(self.fn).__name__

    # ---- pickling -----------------------------------------------------------------------------

    def __reduce__(self):
        """By reference: a compiled function that is the module attribute its name says
        (`@autojit.compile` on a module-level function) as that attribute, else as the
        function it compiles, compiled again with the same options when loaded; what it
        compiled is not pickled."""
        if _found_by_name(self, getattr(self, "__module__", None),
                          getattr(self, "__qualname__", None)):
            return self.__qualname__
        fn = self.fn
        if isinstance(fn, types.FunctionType) and not _found_by_name(
                fn, getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)):
            raise pickle.PicklingError(
                f"cannot pickle the compiled function {self.name()}: it compiles "
                f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}, which "
                "cannot be pickled by reference (a lambda, a nested function, or a name bound "
                "to another object now); compile a function defined at a module's top level")
        return _compiled_again, (fn, self._options())

    def __copy__(self) -> CompiledFunction:
        """The same function compiled anew: executables are not shared between copies."""
        return CompiledFunction(self.fn, **self._options())

    def __deepcopy__(self, memo: dict) -> CompiledFunction:
        """A copy of the function (of the module a compiled call belongs to), compiled anew."""
        return CompiledFunction(copy.deepcopy(self.fn, memo), **self._options())

    def _options(self) -> dict:
        return {"backend": self.backend, "fullgraph": self.fullgraph, "dynamic": self.dynamic,
                "recompile_limit": self.recompile_limit}


def _has_effects(traced, guarded) -> bool:
    """Whether a traced call does more than return values: writes Python state, prints or
    logs, updates tensors in place, or sets or clears .grad."""
    return bool(guarded.python_writes is not None or guarded.version_bumps or
                guarded.cleared_grads or traced.prints.effects or traced.prints.formatted or
                any(output.kind in ("grad", "update") for output in traced.graph.outputs))


class _EagerExecutable:
    """Runs the function eagerly while its guards (the modes) hold: anomaly mode with results
    differentiated outside, whose backward must run eagerly to be checked node by node."""

    def __init__(self, fn, guards: GuardSet, traced: Graph):
        self.fn, self.guards, self.graph, self.traced = fn, guards, traced, traced
        self.plan = self.joint = self.backward = None
        self.calls = 0

    def run(self, args: tuple):
        self.calls += 1
        return self.fn(*given_arguments(args))


class _KeywordCall:
    """fn called with keywords, as a positional function (keyword values last)."""

    def __init__(self, fn, names: tuple):
        self.fn, self.names = fn, names
        self.__qualname__ = getattr(fn, "__qualname__", type(fn).__name__)
        self.__wrapped__ = fn

    def __call__(self, *flat):
        count = len(flat) - len(self.names)
        return self.fn(*flat[:count], **dict(zip(self.names, flat[count:], strict=True)))


# torch.compiler.set_stance's stance (compiler/control.py), process-wide as torch's.
STANCE = ["default"]

_NO_CODE_GENERATOR_WARNED = []


def _compiled_again(fn, options: dict) -> CompiledFunction:
    """A pickled compiled function, loaded: `fn` compiled anew (CompiledFunction.__reduce__)."""
    return CompiledFunction(fn, **options)


def _found_by_name(value, module_name: str | None, qualname: str | None) -> bool:
    """Whether `module_name.qualname` names `value` itself, as pickle finds it by reference."""
    if not module_name or not qualname or "<" in qualname:
        return False
    found = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found is value


def _overriding_subclass(args: tuple) -> bool:
    return any(arg.__class__ is not Tensor and isinstance(arg, Tensor)
               and (torch_function.overrides(arg.__class__)
                    or torch_dispatch.dispatches(arg.__class__)) for arg in args)


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
