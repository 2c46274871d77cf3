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
an error naming the line when fullgraph=True. A function that returns a tensor still requiring
grad (so that backward would run outside it) also runs eagerly, for now. More than
`recompile_limit` executables for one function fall back to eager with one warning naming
the guard that kept failing. backend="eager" and AUTOJIT_DISABLE=1 run the function eagerly.
"""

from __future__ import annotations

import functools
import time
import types
import warnings

from . import config
from .autograd.graph import Node
from .codegen.executable import Executable
from .guards import GuardSet, mode_conditions, reachable, scalar_condition, tensor_conditions
from .ir.graph import Graph
from .ir.trace import GraphBreak, Tracer, user_frame
from .state import state
from .tensor import Tensor

BACKENDS = ("cpu", "eager", "interpreter")
DEFAULT_RECOMPILE_LIMIT = 8


class CompileWarning(UserWarning):
    """A compiled function ran eagerly (graph break, recompile limit, unsupported pattern)."""


def compile(fn=None, *, backend: str = "cpu", fullgraph: bool = False,  # noqa: A001
            dynamic: bool = False, recompile_limit: int = DEFAULT_RECOMPILE_LIMIT):
    """Compile `fn`: usable as `@autojit.compile` or `@autojit.compile(backend=...)`."""
    if backend not in BACKENDS:
        raise ValueError(f"compile: unknown backend {backend!r}; expected one of {BACKENDS}")
    if dynamic:
        raise NotImplementedError("compile: dynamic=True (one executable for varying sizes) is "
                                  "not supported yet; each new size retraces")
    if fn is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph,
                                 recompile_limit=recompile_limit)
    if not callable(fn):
        raise TypeError(f"compile expects a callable, got {type(fn).__name__}")
    return CompiledFunction(fn, backend=backend, fullgraph=fullgraph,
                            recompile_limit=recompile_limit)


class CompiledFunction:
    """The callable autojit.compile returns; it also exposes what it compiled."""

    def __init__(self, fn, *, backend: str, fullgraph: bool, recompile_limit: int):
        self.fn = fn
        self.backend = backend
        self.fullgraph = fullgraph
        self.recompile_limit = recompile_limit
        self.executables: list[Executable] = []
        self.eager_reason: str | None = None  # set when the function gave up compiling
        self._warned_lines: set = set()
        self._break_counts: dict = {}
        self._last_failure: str | None = None
        self.compile_seconds = 0.0
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
        if self.backend == "eager" or config.disabled() or state.tracer is not None or \
                self.eager_reason is not None:
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
                                        recompile_limit=self.recompile_limit)
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
        self.executables.insert(0, executable)
        return executable.run(args)

    # ---- tracing ------------------------------------------------------------------------------

    def _trace(self, args: tuple):
        guards = GuardSet()
        roots = self._roots(args, guards)
        tensors_before, scalars, complete = reachable(roots)
        graph = Graph()
        call_args, arg_positions, symbolic_args = [], [], []
        for position, argument in enumerate(args):
            if isinstance(argument, Tensor) and argument._data is not None:
                graph.add_input(tuple(argument.shape), argument.dtype, "arg", f"arg{position}")
                symbolic = Tensor._symbolic(graph.inputs[-1].value)
                symbolic._requires_grad = argument._requires_grad
                symbolic._grad = argument._grad  # accumulated into like a captured tensor
                call_args.append(symbolic)
                arg_positions.append(position)
                symbolic_args.append((graph.inputs[-1], symbolic))
            else:
                call_args.append(argument)
        names = {id(tensor._data): path for path, tensor in tensors_before.values()}
        tracer = Tracer(graph, names)
        # The .grad of every tensor the function can reach, before it runs: a `p.grad = None`
        # in the function happens for real while tracing, and must be undone (the executable
        # repeats it on each call) before guards and write-back look at .grad.
        grads_before = [(tensor, tensor._grad) for _, tensor in tensors_before.values()]
        state.tracer = tracer
        try:
            result = self.fn(*call_args)
            template = _flatten_result(result, graph, tracer)
            requiring = [output.name for output in graph.outputs
                         if _requires_grad_result(output, result)]
            tracer.finish(graph, symbolic_args)
        finally:
            state.tracer = None
            cleared = [tensor for tensor, grad in grads_before
                       if grad is not None and tensor._grad is None]
            tracer.restore()
            for tensor, grad in grads_before:
                tensor._grad = grad
        if requiring and state.grad_enabled and not tracer.ran_backward:
            return None, self._eager_once(args, "the function returns a tensor that requires "
                                          "grad and computes no gradient itself; call "
                                          "backward() inside the compiled function so that the "
                                          "gradient is compiled too")
        self._write_guards(guards, args, graph, tensors_before, scalars, complete)
        optimized = self._optimize(graph)
        plan = self._plan(optimized)
        cleared_grads = [entry.tensor for entry in tracer.cleared_grads] + [
            tensor for tensor in cleared if all(tensor is not entry.tensor
                                                for entry in tracer.cleared_grads)]
        executable = Executable(optimized, graph, template, cleared_grads, guards,
                                arg_positions, plan)
        if requiring and state.grad_enabled:
            executable.requiring_grad = set(requiring)
            executable.result_node = _CompiledResultNode(self._name())
        config.log("guards", f"{self._name()}: {len(guards)} guards\n{guards}")
        return executable, None

    def _roots(self, args: tuple, guards: GuardSet) -> list:
        """Where guard paths start: non-tensor arguments, the callable's owner or the callable
        object itself, its closure cells and the globals its code names."""
        roots = [(f"args[{index}]", argument) for index, argument in enumerate(args)
                 if not isinstance(argument, Tensor)]
        fn = self.fn
        while isinstance(fn, _KeywordCall):
            fn = fn.fn
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            roots.append((guards.constant(owner, "R"), owner))
        if not isinstance(fn, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
            roots.append((guards.constant(fn, "R"), fn))  # a callable object, e.g. a Module
        function = getattr(fn, "__func__", fn)
        code = getattr(function, "__code__", None)
        if code is not None:
            for cell in function.__closure__ or ():
                try:
                    contents = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                roots.append((f"{guards.constant(cell, 'R')}.cell_contents", contents))
            scope = function.__globals__
            for name in code.co_names:
                if name in scope:
                    roots.append((f"{guards.constant(scope, 'R')}[{name!r}]", scope[name]))
        return roots

    def _write_guards(self, guards: GuardSet, args: tuple, graph: Graph, tensors: dict,
                      scalars: list, complete: bool) -> None:
        guards.require(f"len(args) == {len(args)}", f"the number of arguments changed (was "
                       f"{len(args)})")
        mode_conditions(guards)
        for position, argument in enumerate(args):
            expression, what = f"args[{position}]", f"argument {position}"
            if isinstance(argument, Tensor):
                tensor_conditions(guards, expression, argument, what)
            elif isinstance(argument, (bool, int, float, str, type(None))):
                scalar_condition(guards, expression, argument, what)
            else:
                constant = guards.constant(argument, "A")
                guards.require(f"{expression} is {constant}", f"{what} is another object")
        by_identity = {id(tensor): (path, tensor) for path, tensor in tensors.values()}
        for entry in graph.captured_inputs:
            tensor = entry.tensor
            found = by_identity.get(id(tensor))
            constant = guards.constant(tensor, "T")
            if found is not None:
                guards.require(f"{found[0]} is {constant}",
                               f"{found[0]} is another tensor than when traced")
            tensor_conditions(guards, constant, tensor, f"captured tensor {entry.name}")
        for path, value in scalars:
            scalar_condition(guards, path, value, path)
        guards.complete = complete
        guards.build()

    def _optimize(self, graph: Graph) -> Graph:
        try:
            from .ir.pipeline import optimize
        except ImportError:  # the pass pipeline is optional until it lands
            return graph
        return optimize(graph)

    def _plan(self, graph: Graph):
        if self.backend != "cpu":
            return None
        try:
            from .codegen.schedule import build_plan
        except ImportError:
            return None
        return build_plan(graph)

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
        """The latest executable's graph as text: forward and adjoint in one graph."""
        executable = self._latest()
        return str(executable.graph if optimized else executable.traced)

    def guards(self) -> str:
        """The latest executable's guards, one condition per line with its reason."""
        return str(self._latest().guards)

    def fusion_groups(self) -> str:
        plan = self._latest().plan
        return plan.describe() if plan is not None else "(no kernel plan: interpreted)"

    def kernel_source(self) -> str:
        plan = self._latest().plan
        return plan.llvm_ir() if plan is not None else ""


class _KeywordCall:
    """fn called with keywords, as a positional function (keyword values last)."""

    def __init__(self, fn, names: tuple):
        self.fn, self.names = fn, names
        self.__qualname__ = getattr(fn, "__qualname__", type(fn).__name__)
        self.__wrapped__ = fn

    def __call__(self, *flat):
        count = len(flat) - len(self.names)
        return self.fn(*flat[:count], **dict(zip(self.names, flat[count:], strict=True)))


class _CompiledResultNode(Node):
    """grad_fn of a compiled function's results that required grad when traced.

    The function already ran its backward inside; differentiating its results again from
    outside is not compiled, and fails loudly instead of silently giving no gradient.
    """

    def __init__(self, function_name: str):
        super().__init__()
        self.function_name = function_name
        self.next_functions = ()
        self.input_meta = ()
        self.needs_input_grad = ()

    def name(self) -> str:
        return "CompiledFunctionBackward"

    def apply(self, grads):
        raise RuntimeError(
            f"a result of the compiled function {self.function_name!r} was differentiated "
            "outside of it; autojit compiles the gradients a function computes inside itself "
            "(call backward() or autograd.grad() in the compiled function), and does not "
            "differentiate compiled results from outside yet")


def _warn(message: str) -> None:
    """A CompileWarning attributed to the user's line that called the compiled function."""
    frame = user_frame()
    if frame is None:
        warnings.warn(message, CompileWarning, stacklevel=2)
        return
    warnings.warn_explicit(message, CompileWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def _flatten_result(result, graph: Graph, tracer: Tracer):
    if isinstance(result, Tensor):
        index = len(graph.outputs)
        graph.add_output(tracer.value_of(result), f"out{index}")
        return ("tensor", index)
    if isinstance(result, (tuple, list)):
        kind = "tuple" if isinstance(result, tuple) else "list"
        return (kind, [_flatten_result(item, graph, tracer) for item in result])
    if isinstance(result, dict):
        return ("dict", [(key, _flatten_result(value, graph, tracer))
                         for key, value in result.items()])
    if isinstance(result, (bool, int, float, str, type(None))):
        return ("constant", result)
    raise TypeError(f"autojit.compile: the function returned a {type(result).__name__}; "
                    "a compiled function returns Tensors, numbers, None, or tuples, lists and "
                    "dicts of them")


def _requires_grad_result(output, result) -> bool:
    for tensor in _tensors_in(result):
        if tensor._value is output.value:
            return tensor._requires_grad
    return False


def _tensors_in(result):
    if isinstance(result, Tensor):
        yield result
    elif isinstance(result, (tuple, list)):
        for item in result:
            yield from _tensors_in(item)
    elif isinstance(result, dict):
        for item in result.values():
            yield from _tensors_in(item)
