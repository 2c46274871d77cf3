"""make_graph: trace a Python function on example inputs into the Graph it computes, with a
Tracer (trace.py) installed while it runs; and the names the graph gives the function's
arguments and the tensors it reaches.
"""

from __future__ import annotations

import inspect

from ..tensor.graph_break import graph_break
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .graph import Graph
from .trace import Tracer

# ---- naming -------------------------------------------------------------------------------

def _argument_names(fn, count: int) -> list[str]:
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = []
    for parameter in parameters:
        if len(names) == count:
            break
        if parameter.kind is parameter.VAR_POSITIONAL:
            names.extend(f"{parameter.name}{i}" for i in range(count - len(names)))
        elif parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            names.append(parameter.name)
    names.extend(f"x{i}" for i in range(len(names), count))
    return names


def _captured_names(fn) -> dict:
    """Names for the tensors `fn` can reach directly: its closure, globals, module parameters."""
    names: dict = {}

    def visit(name, obj):
        if isinstance(obj, Tensor):
            if obj._payload is not None:
                names.setdefault(id(obj._payload), name)
            return
        for method in ("named_parameters", "named_buffers"):
            listing = getattr(obj, method, None)
            if callable(listing) and not isinstance(obj, type):
                try:
                    members = list(listing())
                except Exception:  # naming is best effort; an odd object only loses names
                    continue
                for member_name, member in members:
                    visit(member_name if name is None else f"{name}.{member_name}", member)

    owner = getattr(fn, "__self__", None)
    if owner is not None:
        visit("self", owner)
    if hasattr(fn, "named_parameters"):
        visit(None, fn)
    code = getattr(fn, "__code__", None)
    if code is not None:
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
            try:
                visit(name, cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        scope = getattr(fn, "__globals__", {})
        for name in code.co_names:
            if name in scope:
                visit(name, scope[name])
    return names


def _as_output_list(result) -> list:
    if result is None:
        return []
    if isinstance(result, Tensor):
        return [("out", result)]
    if isinstance(result, (tuple, list)):
        for item in result:
            if not isinstance(item, Tensor):
                raise TypeError(f"make_graph: the traced function must return a Tensor or a "
                                f"tuple/list of Tensors, got an element of type "
                                f"{type(item).__name__}")
        return [(f"out{index}", item) for index, item in enumerate(result)]
    raise TypeError(f"make_graph: the traced function must return a Tensor or a tuple/list of "
                    f"Tensors, got {type(result).__name__}")


# ---- entry point --------------------------------------------------------------------------

def make_graph(fn, *example_inputs) -> Graph:
    """Trace `fn` on `example_inputs` and return the Graph it computes.

    Tensor arguments become symbolic "arg" inputs (same shape, dtype and requires_grad);
    other arguments are passed through unchanged and baked into the graph. Outputs: the
    function's returned tensors ("out", or "out0", "out1", ...), then `name.grad` for every
    argument or captured tensor whose .grad was assigned while tracing, then `name.update` for
    every captured tensor written in place.
    """
    if state.tracer is not None:
        raise RuntimeError("make_graph: already tracing; nested traces are not supported")
    graph = Graph()
    call_args, arg_tensors = [], []
    for name, example in zip(_argument_names(fn, len(example_inputs)), example_inputs,
                             strict=True):
        if not isinstance(example, Tensor):
            call_args.append(example)
            continue
        graph.add_input(tuple(example.shape), example.dtype, "arg", name)
        symbolic = Tensor._symbolic(graph.inputs[-1].value)
        symbolic._requires_grad = example._requires_grad
        arg_tensors.append((graph.inputs[-1], symbolic))
        call_args.append(symbolic)
    tracer = Tracer(graph, _captured_names(fn))
    # make_graph has no call to evaluate a value on: a Python decision on one breaks.
    tracer.env.evaluate_leaf = lambda name: graph_break(
        "a Python decision on a value read with Tensor.item()")
    tracer.evaluates = False
    state.tracer = tracer
    try:
        result = fn(*call_args)
        for name, tensor in _as_output_list(result):
            graph.add_output(tracer.value_of(tensor), name)
        tracer.finish(graph, arg_tensors)
    finally:
        state.tracer = None
        tracer.restore()
    return graph
