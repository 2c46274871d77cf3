"""The IR data structures: Value, Node, Input, Output and Graph, with the builder the tracer uses.

A Graph is a straight-line SSA program. Its inputs are values with no producer: function
arguments ("arg") and concrete tensors the traced function read (parameters, constants:
"captured", the tensor object is kept so the graph can be run). Each Node applies one registry
primitive to values and Python scalar literals and defines fresh output values. Outputs name
the values the graph returns: the function's results, and side effects made explicit (the
`.grad` a traced backward assigned, the new value of a captured tensor written in place).

The tracer (trace.py) builds graphs through `add_input`, `add_node` and `add_output`; the
printer (printer.py) turns them into text, the verifier (verifier.py) checks them, and the
reference interpreter (interpreter.py) runs them.
"""

from __future__ import annotations

import contextlib
import gc

from ..tensor import dtypes

# "cotangent": the gradient of a result that will arrive from outside (ir/partition.py);
# "random": random numbers drawn anew on each run (its `tensor` slot holds how to draw them);
# "scalar": a Python float read afresh on each run, 0-d float64 (its `tensor` slot holds where
# it is read from: compiler/tracing.py's ScalarSource).
# "carried": a value an earlier segment of a split graph computed (ir/segments.py).
INPUT_KINDS = ("arg", "captured", "cotangent", "random", "scalar", "carried")
# "result": returned by the function; "grad": the .grad of an input assigned while tracing;
# "update": the new value of a captured tensor written in place while tracing;
# "input_grad": the gradient of a result with respect to an input (a joint graph's backward);
# "saved": a forward value the backward graph reads (ir/partition.py);
# "check": a value checked after each run before anything is written back (a gradient anomaly
# mode checks for nan; a graph value the trace decided on, ir/scalars.py);
# "print": a value the function printed, printed again by each run (ir/printing.py);
# "value": a graph value the function read as a Python number (`t.item()`, ir/scalars.py);
# "carry": a value a later segment of a split graph reads (ir/segments.py).
OUTPUT_KINDS = ("result", "grad", "update", "input_grad", "saved", "check", "print", "value",
                "carry")
TARGETED_OUTPUT_KINDS = ("grad", "update", "input_grad")


@contextlib.contextmanager
def collection_paused():
    """Python's cyclic garbage collector held off while a compile builds graphs and plans.

    Graphs are cycles (a Value's producer holds the Value), and a pass pipeline allocates one
    graph per pass: with tens of thousands of nodes alive, each full collection the allocations
    set off walks them all. An LSTM step's graph (6500 nodes, 24 pass runs) spent about half
    of its optimize stage in such collections (docs/notes/step-performance.md). The garbage is
    collected as usual once the collector runs again."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class Value:
    """One SSA value: a shape and dtype, defined by a node (`producer`) or a graph input."""

    __slots__ = ("id", "shape", "dtype", "producer")

    def __init__(self, id: int, shape: tuple, dtype: dtypes.DType, producer=None):  # noqa: A002
        self.id = id
        self.shape = tuple(shape)
        self.dtype = dtype
        self.producer = producer

    @property
    def type_text(self) -> str:
        """The value's type as printed in IR text, e.g. ``f32[4,3]``."""
        return f"{self.dtype.short}[{','.join(str(extent) for extent in self.shape)}]"

    def __repr__(self) -> str:
        return f"%{self.id}:{self.type_text}"


class Node:
    """One primitive application: `outputs = op(*inputs, **attrs)`.

    `inputs` holds Values and Python scalar literals (int, float, bool, None) in the op's
    argument order; `attrs` are the op's keyword attributes exactly as `bind` received them.
    """

    __slots__ = ("op", "inputs", "attrs", "outputs")

    def __init__(self, op, inputs: list, attrs: dict, outputs: list):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.outputs = outputs

    @property
    def output(self) -> Value:
        """The single output of a one-output node (every primitive today)."""
        return self.outputs[0]

    def __repr__(self) -> str:
        from .printer import format_node

        return format_node(self)


class Input:
    """A graph input: its value, kind ("arg", "captured" or "cotangent"), name, and for
    captured inputs the concrete Tensor it stands for."""

    __slots__ = ("value", "kind", "name", "tensor")

    def __init__(self, value: Value, kind: str, name: str, tensor=None):
        self.value = value
        self.kind = kind
        self.name = name
        self.tensor = tensor

    def __repr__(self) -> str:
        return f"Input({self.value!r}, {self.kind}, {self.name!r})"


class Output:
    """A graph output: its value, name and kind; for "grad", "update" and "input_grad"
    outputs, `target` is the Input whose tensor the output belongs to (its .grad, its new
    data, or its gradient)."""

    __slots__ = ("value", "name", "kind", "target")

    def __init__(self, value: Value, name: str, kind: str = "result", target: Input | None = None):
        self.value = value
        self.name = name
        self.kind = kind
        self.target = target

    def __repr__(self) -> str:
        return f"Output({self.value!r}, {self.name!r}, {self.kind})"


class Graph:
    """A traced program: inputs, nodes in execution order, outputs. `str(graph)` is its text."""

    def __init__(self):
        self.inputs: list[Input] = []
        self.nodes: list[Node] = []
        self.outputs: list[Output] = []
        self._next_id = 0
        # ids of the values a backward pass computed while the graph was traced (the adjoint
        # part of a training step): passes keep them, inspection colours them.
        self.backward_ids: set = set()
        # ids of forward values a checkpointed segment recomputes for the backward pass
        # (utils/checkpoint.py): no pass merges them with the forward's own, and the partition
        # puts them in the backward graph (docs/notes/checkpointing.md).
        self.recompute_ids: set = set()
        # ids of the forward values computed inside a checkpointed segment, its outputs
        # included: the partition saves a segment's output rather than what it is made of.
        self.checkpoint_ids: set = set()

    # ---- builder ----------------------------------------------------------------------------

    def new_value(self, shape: tuple, dtype: dtypes.DType, producer: Node | None = None) -> Value:
        value = Value(self._next_id, shape, dtype, producer)
        self._next_id += 1
        return value

    def add_input(self, shape: tuple, dtype: dtypes.DType, kind: str = "arg",
                  name: str | None = None, tensor=None) -> Value:
        """Append a graph input and return its value; captured inputs keep `tensor`."""
        if kind not in INPUT_KINDS:
            raise ValueError(f"input kind must be one of {INPUT_KINDS}, got {kind!r}")
        if kind == "captured" and tensor is None:
            raise ValueError("a captured input needs the concrete tensor it stands for")
        value = self.new_value(shape, dtype)
        if name is None:
            name = f"{'x' if kind == 'arg' else 'c'}{len(self.inputs)}"
        self.inputs.append(Input(value, kind, name, tensor))
        return value

    def add_node(self, op, inputs, attrs: dict, shape: tuple, dtype: dtypes.DType) -> Value:
        """Append `op(*inputs, **attrs)` with one output of `shape` and `dtype`; return it."""
        node = Node(op, list(inputs), dict(attrs), [])
        value = self.new_value(shape, dtype, node)
        node.outputs.append(value)
        self.nodes.append(node)
        return value

    def add_output(self, value: Value, name: str, kind: str = "result",
                   target: Input | None = None) -> Output:
        if kind not in OUTPUT_KINDS:
            raise ValueError(f"output kind must be one of {OUTPUT_KINDS}, got {kind!r}")
        output = Output(value, name, kind, target)
        self.outputs.append(output)
        return output

    def set_outputs(self, outputs) -> None:
        """Replace the outputs: a list of Output records or (value, name) pairs."""
        self.outputs = []
        for entry in outputs:
            if isinstance(entry, Output):
                self.outputs.append(entry)
            else:
                value, name = entry
                self.add_output(value, name)

    def with_outputs(self, outputs: list) -> Graph:
        """A new graph with these inputs and nodes (shared, not copied) and `outputs`."""
        graph = Graph()
        graph.inputs, graph.nodes, graph.outputs = list(self.inputs), list(self.nodes), \
            list(outputs)
        graph._next_id = self._next_id
        graph.backward_ids = self.backward_ids
        graph.recompute_ids = self.recompute_ids
        graph.checkpoint_ids = self.checkpoint_ids
        return graph

    # ---- queries ----------------------------------------------------------------------------

    @property
    def arg_inputs(self) -> list[Input]:
        return [entry for entry in self.inputs if entry.kind == "arg"]

    @property
    def captured_inputs(self) -> list[Input]:
        return [entry for entry in self.inputs if entry.kind == "captured"]

    def input_named(self, name: str) -> Input:
        for entry in self.inputs:
            if entry.name == name:
                return entry
        raise KeyError(f"graph has no input named {name!r}")

    def output_named(self, name: str) -> Output:
        for entry in self.outputs:
            if entry.name == name:
                return entry
        raise KeyError(f"graph has no output named {name!r}")

    def __str__(self) -> str:
        from .printer import format_graph

        return format_graph(self)

    def __repr__(self) -> str:
        return (f"<Graph: {len(self.inputs)} inputs, {len(self.nodes)} nodes, "
                f"{len(self.outputs)} outputs>")
