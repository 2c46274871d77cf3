"""Compiled results that are differentiated from outside the compiled function.

`out = compiled(x); out.backward()`: the function returns tensors that require grad, and their
gradient is asked for later, by the caller. api.py handles it in three steps:

1. `trace_backward`, while the trace is still open, differentiates the results that require
   grad with respect to every input that requires grad (arguments and captured tensors such
   as parameters), seeded by "cotangent" inputs, so the joint graph holds forward and adjoint.
2. ir/partition.py cuts the optimized joint graph into a forward graph (which also returns the
   residuals the backward reads) and a backward graph; both are compiled.
3. Each call returns results whose grad_fn is a `CompiledFunctionBackward` node holding that
   call's residuals. When the engine reaches it, it runs the backward graph and hands the
   gradients to the inputs' own nodes (AccumulateGrad of a parameter, or the grad_fn of a
   non-leaf argument), so hooks, .grad accumulation and retain_graph behave as in eager.

With create_graph=True (the engine runs the node in grad mode), the node does not run the
compiled backward on its bare residual arrays: ir/replay.py recomputes the results from the
call's own tensors op by op through the registry and differentiates them as eager does, so the
gradients it returns carry history and can be differentiated again, to any order. The compiled
path serves every other backward.
"""

from __future__ import annotations

import numpy as np

from ..autograd.engine import run_backward
from ..autograd.nodes import Node, gradient_edge
from ..autograd.saved_tensors import FREED_MESSAGE, TYPE_NAMES
from ..ir.replay import ReplayedBackward, stash_hooks
from ..tensor.graph_break import GraphBreak
from ..tensor.state import state
from ..tensor.tensor import Tensor


def trace_backward(graph, tracer, requiring: list, symbolic_args: list,
                   deferred: list | None = None) -> None:
    """Append the gradient of `requiring` results to the joint graph being traced.

    requiring: (output name, result Tensor) of results that require grad; symbolic_args:
    (Input, symbolic Tensor) of the tensor arguments. Adds one cotangent input per result and
    one "input_grad" output per input whose gradient is not identically absent (to `deferred`
    instead, as add_output's arguments, when given: the caller adds them last, so that the
    outputs it adds meanwhile keep their numbers in the forward half ir/partition.py cuts,
    which has no input_grad outputs). Returns the error eager autograd would raise on
    differentiating the results, or None.
    """
    differentiable = [(entry, tensor) for entry, tensor in symbolic_args
                      if tensor._requires_grad]
    # Captured tensors that require grad: from before the call, or leaves the call made; not
    # one the call made that has history (a factory's tensor that a custom Function returned,
    # which requires grad through the Function's node: the gradient goes on through that node
    # to the Function's inputs).
    differentiable += [(entry, tensor) for entry, tensor in tracer.touched_tensors()
                       if tensor._requires_grad and not (
                           id(tensor) in tracer.made and tensor.grad_fn is not None)]
    if not differentiable:
        return None
    node_count, input_count = len(graph.nodes), len(graph.inputs)
    cotangents = []
    for name, tensor in requiring:
        value = graph.add_input(tuple(tensor._value.shape), tensor.dtype, "cotangent",
                                tracer.unique_name(f"{name}.cotangent"))
        tracer.know(value)
        cotangents.append(Tensor._symbolic(value))
    # The real tensors' hooks run when the engine delivers the compiled gradients to them;
    # running them here as well would apply them twice.
    stashed = [stash_hooks(tensor) for _, tensor in differentiable]
    # A captured tensor with history of its own (the output of a layer run before the call)
    # gets its gradient handed to its grad_fn by each call's CompiledFunctionBackward, which
    # the engine then runs: the traced backward must end there, or the gradients of what that
    # history reaches would be counted twice, once here and once by the real engine.
    history = frozenset(id(tensor.grad_fn) for _, tensor in differentiable
                        if tensor._payload is not None and tensor.grad_fn is not None)
    inputs_before = {id(entry) for entry in graph.inputs}
    try:
        grads = run_backward([tensor for _, tensor in requiring], cotangents, retain_graph=True,
                             create_graph=False, inputs=[tensor for _, tensor in differentiable],
                             accumulate=False, stop_at=history)
    except GraphBreak:
        # What the backward runs cannot be traced (a warning given by a module's backward
        # hook): the call runs eagerly, with a CompileWarning, its backward the engine's.
        raise
    except RuntimeError as error:
        # Eager would raise this when the caller differentiates the results (a graph freed by
        # a backward inside the function, a saved tensor modified in place since): so will
        # the compiled results' grad_fn, and only then.
        del graph.nodes[node_count:], graph.inputs[input_count:]
        return error
    finally:
        for restore in stashed:
            restore()
        tracer.forget_writes_to(inputs_before)
    for (entry, _), grad in zip(differentiable, grads):
        if grad is not None:
            output = (tracer.value_of(grad), tracer.unique_output(f"{entry.name}.grad_in"),
                      "input_grad", entry)
            if deferred is None:
                graph.add_output(*output)
            else:
                deferred.append(output)
    return None


class CompiledBackward:
    """What every call's backward node shares: the backward program and where its inputs and
    outputs come from. `run_backward_graph(arrays)` runs the compiled backward graph."""

    def __init__(self, function_name: str, partition, run_backward_graph, arg_positions: list):
        self.function_name = function_name
        self.residuals = partition.residuals
        self.run_backward_graph = run_backward_graph
        self.graph = partition.backward
        self.gradient_dtypes = [output.value.dtype for output in partition.backward.outputs]
        self.saved_dtypes = [partition.forward.outputs[residual.index].value.dtype
                             if residual.kind == "saved" else None
                             for residual in self.residuals]
        arg_inputs = [entry for entry in partition.forward.inputs if entry.kind == "arg"]

        def source(entry):
            """An argument (by call position) or a captured tensor."""
            if entry.kind == "arg":
                return ("arg", arg_positions[_index_of(arg_inputs, entry)])
            return ("captured", entry.tensor)

        # Where a residual that is a forward input comes from, and where each gradient goes.
        self.input_sources = {index: source(partition.forward.inputs[residual.index])
                              for index, residual in enumerate(self.residuals)
                              if residual.kind == "input"}
        self.aliased_sources = [source(partition.forward.inputs[residual.aliases])
                                for residual in self.residuals if residual.aliases is not None]
        self.targets = [source(_matching(partition.forward.inputs, target))
                        for target in partition.gradient_targets]
        # create_graph=True: the backward replayed on the call's tensors (ir/replay.py).
        self.replayed = ReplayedBackward(partition)
        self.replay_sources = [source(partition.forward.inputs[index])
                               for index in self.replayed.read_inputs]
        # Those the compiled backward does not read (so their versions are not watched yet).
        watched_keys = {_key(source) for source in [*self.input_sources.values(),
                                                    *self.aliased_sources]}
        self.replay_unwatched = [source for source in self.replay_sources
                                 if _key(source) not in watched_keys]

    def node_for_call(self, args: tuple, output_arrays: tuple, result_meta: list,
                      draws: dict | None = None, bumped: dict | None = None
                      ) -> CompiledFunctionBackward:
        """The grad_fn of one call's results, holding that call's residuals (and the random
        arrays it drew that a create_graph replay needs: forward input index -> array).
        `bumped`: id(tensor) -> how far the call itself moved its version, writing it in place
        after reading it (the graph read the value from before the write: eager's saved
        tensor is at the version before it, and its backward fails, as this one must)."""
        bumped = bumped or {}

        def version_read(tensor) -> int:
            return tensor._version_counter.value - bumped.get(id(tensor), 0)

        values, watched = [], []
        for index, residual in enumerate(self.residuals):
            if residual.kind == "saved":
                values.append(output_arrays[residual.index])
            elif residual.kind == "input":
                tensor = _resolve(self.input_sources[index], args)
                values.append(tensor._payload)
                # Read in place when the backward runs: checked against its version now.
                watched.append((tensor, version_read(tensor)))
            else:
                values.append(None)
        for aliased in self.aliased_sources:
            tensor = _resolve(aliased, args)
            watched.append((tensor, version_read(tensor)))
        edges = [gradient_edge(_resolve(target, args)) for target in self.targets]
        # A replay (create_graph=True) also reads these: their versions, to check them against.
        replay_watched = [(tensor, version_read(tensor)) for tensor in (
            _resolve(source, args) for source in self.replay_unwatched)]
        node = CompiledFunctionBackward(self, values, edges, watched, result_meta, args,
                                        replay_watched)
        node.draws = {index: draws[index] for index in self.replayed.draw_inputs} \
            if self.replayed.draw_inputs else {}
        return node


def _resolve(source: tuple, args: tuple) -> Tensor:
    kind, where = source
    return args[where] if kind == "arg" else where


def _key(source: tuple) -> tuple:
    kind, where = source
    return (kind, where if kind == "arg" else id(where))


def _index_of(entries: list, wanted) -> int:
    for index, entry in enumerate(entries):
        if entry is wanted:
            return index
    raise AssertionError("a gradient target that is not a forward input")


def _matching(inputs: list, joint_entry):
    """The forward graph's copy of a joint graph input (same name)."""
    for entry in inputs:
        if entry.name == joint_entry.name:
            return entry
    raise AssertionError(f"the forward graph lost input {joint_entry.name}")


class CompiledFunctionBackward(Node):
    """grad_fn of a compiled call's results: runs the compiled backward graph."""

    def __init__(self, backward: CompiledBackward, residual_values: list, edges: list,
                 watched: list, result_meta: list, args: tuple, replay_watched: list):
        super().__init__()
        self.backward = backward
        self.residual_values = residual_values
        self.next_functions = tuple(edges)
        self.input_meta = ()
        self.needs_input_grad = tuple(True for _ in edges)
        self.result_meta = result_meta  # (shape, dtype) per result that requires grad
        self.output_count = len(result_meta)
        self._watched = watched
        self._args = args  # the call's arguments, which a replay reads
        self._replay_watched = replay_watched
        self._released = False

    def name(self) -> str:
        return "CompiledFunctionBackward"

    def watch_results(self, result) -> None:
        """A returned tensor that is also a residual (an output the backward reads, such as
        sigmoid's) must not be modified in place before backward: watch its version."""
        residual_ids = {id(value) for value in self.residual_values if value is not None}
        stack = [result]
        while stack:
            item = stack.pop()
            if isinstance(item, Tensor):
                if id(item._payload) in residual_ids:
                    self._watched.append((item, item._version_counter.value))
            elif isinstance(item, (tuple, list)):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())

    # Set by utils/checkpoint.py on the node of a call inside a checkpointed function: it runs
    # the function again (once, before the first of its nodes' backward), as eager's backward
    # does for the values it dropped, so the call's effects (a BatchNorm's running statistics,
    # hooks) happen a second time, as in eager and torch. The call keeps its residuals: the
    # gradients are computed from them, which equal the recomputed ones.
    before_backward = None

    def apply(self, grads: list) -> list:
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        self._check_versions(self._watched)
        if self.before_backward is not None:
            self.before_backward()
        if state.grad_enabled:
            return self._replay(grads)
        arrays, cotangent = [], iter(grads)
        for residual, value in zip(self.backward.residuals, self.residual_values):
            if residual.kind != "cotangent":
                arrays.append(value)
                continue
            grad = next(cotangent)
            if grad is None:
                shape, dtype = self.result_meta[residual.index]
                arrays.append(np.zeros(shape, dtype.numpy))
            else:
                arrays.append(grad._payload)
        results = self.backward.run_backward_graph(arrays)
        return [Tensor._make(array, dtype)
                for array, dtype in zip(results, self.backward.gradient_dtypes)]

    def _check_versions(self, watched: list) -> None:
        for tensor, version in watched:
            if tensor._version_counter.value != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [autojit.{TYPE_NAMES[tensor.dtype.name]}Tensor "
                    f"{list(tensor.shape)}] "
                    f"is at version {tensor._version_counter.value}; expected version {version} "
                    f"instead (it was saved by {self.name()}).")

    def _replay(self, grads: list) -> list:
        """create_graph=True: the gradients as a recorded graph (ir/replay.py)."""
        replayed = self.backward.replayed
        self._check_versions(self._replay_watched)
        tensors = [_resolve(source, self._args) for source in self.backward.replay_sources]
        return replayed.run(tensors, self.residual_values, grads, self.result_meta,
                            self.draws)

    def release(self) -> None:
        self._released = True
        self.residual_values = self._args = self._replay_watched = self.draws = None
        self.before_backward = None


class FailingBackward(Node):
    """grad_fn of compiled results whose gradient eager autograd could not compute either.
    `inputs`: the call's tensors that require grad, which it leads to as eager's graph does,
    so that differentiating the results with respect to them reaches it and raises eager's
    error (not "appears to not have been used in the graph")."""

    def __init__(self, error: RuntimeError, output_count: int, inputs=()):
        super().__init__()
        self.error = error
        self.next_functions = tuple(gradient_edge(tensor) for tensor in inputs)
        self.input_meta = ()
        self.needs_input_grad = tuple(True for _ in inputs)
        self.output_count = output_count

    def name(self) -> str:
        return "CompiledFunctionBackward"

    def apply(self, grads: list) -> list:
        raise RuntimeError(str(self.error))


class ReleasedBackward(Node):
    """grad_fn of a tensor a compiled run stored in Python state after a backward through it
    in the call freed its graph (`history.append(loss)` after `loss.backward()`): eager's
    tensor keeps its node, named `name`, whose saved values are gone, so any backward through
    it raises eager's error; this one raises the same."""

    def __init__(self, name: str):
        super().__init__()
        self.node_name = name
        self.next_functions = ()
        self.input_meta = ()
        self.needs_input_grad = ()
        self.output_count = 1

    def name(self) -> str:
        return self.node_name

    def apply(self, grads: list) -> list:
        raise RuntimeError(FREED_MESSAGE)
