"""The optimize stage's results kept by the graph they were made from: in this process, and
across processes in the kernel disk cache (config.CODE_STORE, which codegen installs).

The pass pipeline (ir/passes/pipeline.py) is a pure function of a graph's structure: its
inputs' kinds, names, ids, shapes and dtypes, its nodes' ops, operands, literals and
attributes, its outputs, and the id sets that mark backward, recomputed and checkpointed
values. It never reads the data of a captured tensor. So a program traced again (the same
training step in another process, or compiled again in this one) meets passes it has run
before: a 4-layer GPT step's graph (2,663 nodes) took 95-110 ms in them, about a fifth of the
call that compiles it, where encoding the graph and building the kept result take about 12.

`optimize_cached(graph)` encodes the graph (`encode`): a pickle of plain values in which a
dtype is its name, an op its registry name and a value its id. The key is a sha256 over that
encoding, the interpreter, autojit's and NumPy's versions, the default dtype, the pass list and
a fingerprint of the sources the passes run (ir/, ops/, tensor/): an edited pass never meets
its old results. The
kept entry is the optimized graph's encoding; `decode` builds it again around the new graph's
own inputs, whose tensors (parameters, random draws, runtime scalars) belong to this trace.

Anything the encoding cannot name exactly (an attribute holding an object of another class, a
size that is a symbol) makes the graph uncacheable, and the passes run as before; so does a
request to print the passes' graphs (AUTOJIT_DUMP_PASSES), whose output a kept result would
skip. An entry that does not decode is a miss. Entries load with a restricted unpickler: only
NumPy's array, scalar and dtype reconstructors and three builtins may be named.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import sys
import threading
from collections import OrderedDict

import numpy as np

from .. import config
from ..ir.graph import Graph, Input, Node, Output, Value
from ..ir.passes import optimize, pipeline
from ..ir.passes.pipeline import dumped_pass_names
from ..ops.registry import REGISTRY, Op
from ..tensor import dtypes

# Where the passes and what they call are written: a change in any of these files changes
# every key (config.source_fingerprint).
_PASS_SOURCES = ("ir/*.py", "ir/passes/*.py", "ops/**/*.py", "tensor/*.py")
_FORMAT = b"autojit-optimized-graph-1|"  # the entry format's version
_MOST = 32  # entries kept in this process (a GPT step's is about 90 KB)
_GRAPHS: OrderedDict = OrderedDict()  # key -> the optimized graph's encoding
_LOCK = threading.Lock()  # two threads may compile at once
# Classes an attribute or literal may hold, as pickle writes them; anything else is refused.
_PLAIN = frozenset((int, float, bool, str, bytes, complex, type(None), tuple, list, dict, slice,
                    frozenset, np.ndarray, np.dtype, pickle.PickleBuffer))
_LOADABLE = {("builtins", "slice"), ("builtins", "complex"), ("builtins", "frozenset"),
             ("numpy", "dtype"), ("numpy", "ndarray"),
             *((module, name) for module in ("numpy.core.multiarray", "numpy._core.multiarray")
               for name in ("_reconstruct", "scalar")),
             *((module, "_frombuffer") for module in ("numpy.core.numeric",
                                                       "numpy._core.numeric"))}


class Uncacheable(Exception):
    """The graph holds something the encoding cannot name exactly."""


def optimize_cached(graph: Graph) -> Graph:
    """optimize(graph), or the graph it gave for an equal graph before (see the module)."""
    if dumped_pass_names():
        return optimize(graph)
    try:
        encoded = encode(graph)
    except Uncacheable:
        return optimize(graph)
    key = _key(encoded)
    with _LOCK:
        data = _GRAPHS.get(key)
    store = config.CODE_STORE
    if data is None and store:
        data = store["load"](key)
    if data is not None:
        try:
            result = decode(data, graph)
        except Exception as error:  # noqa: BLE001 - a damaged or foreign entry is a miss
            config.log("stages", f"optimized graph {key[:12]} did not load ({error}); "
                                 "running the passes")
        else:
            _keep(key, data)
            return result
    result = optimize(graph)
    try:
        data = encode(result, graph)
    except Uncacheable:
        return result
    _keep(key, data)
    if store:
        store["store"](key, data)
    return result


def _key(encoded: bytes) -> str:
    # The pass list by its functions' names, so that a list changed in this process (a pass
    # replaced, another bound of rounds) never meets the default list's results.
    passes = ",".join(f"{name}={function.__module__}.{function.__qualname__}"
                      for name, function in pipeline.DEFAULT_PASSES)
    # NumPy's version too: constant folding evaluates ops through their NumPy impls.
    tag = "|".join((sys.version, sys.implementation.cache_tag, config.VERSION, np.__version__,
                    dtypes.get_default_dtype().name, config.source_fingerprint(_PASS_SOURCES),
                    passes, str(pipeline.MAX_ROUNDS)))
    return hashlib.sha256(_FORMAT + tag.encode() + b"|" + encoded).hexdigest()


def _keep(key: str, data: bytes) -> None:
    with _LOCK:
        _GRAPHS[key] = data
        _GRAPHS.move_to_end(key)
        while len(_GRAPHS) > _MOST:
            _GRAPHS.popitem(last=False)


# ---- the encoding ------------------------------------------------------------------------------

def _reducers() -> frozenset:
    """The callables and classes pickle writes for what _PLAIN allows (NumPy's arrays,
    scalars and dtypes reduce to them): the objects `_LOADABLE` names, where they exist."""
    import importlib

    found = set()
    modern = hasattr(np, "_core")
    for module, name in _LOADABLE:
        if modern and module.startswith("numpy.core."):
            continue  # NumPy 2's deprecated alias of numpy._core: importing it warns
        try:
            found.add(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            pass
    return frozenset(found)


_REDUCERS = _reducers()


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        cls = obj.__class__
        if cls in _PLAIN or isinstance(obj, (np.generic, np.dtype)):
            return None
        if (cls is type or callable(obj)) and obj in _REDUCERS:
            return None  # written by pickle for an array, a NumPy scalar or a dtype
        if isinstance(obj, type) and issubclass(obj, np.generic):
            return None  # a NumPy scalar type, which a dtype's reduction may name
        if cls is dtypes.DType:
            return ("dtype", obj.name)
        if isinstance(obj, Op) and REGISTRY.get(obj.name) is obj:
            return ("op", obj.name)
        raise Uncacheable(f"{cls.__name__} in a graph")


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        kind, name = pid
        if kind == "dtype":
            return dtypes.from_name(name)
        if kind == "op":
            return REGISTRY[name]
        raise pickle.UnpicklingError(f"unknown reference {kind}")

    def find_class(self, module, name):
        if (module, name) in _LOADABLE or (module == "numpy" and name in np.sctypeDict):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not loadable here")


def _shape(shape: tuple) -> tuple:
    for extent in shape:
        if extent.__class__ is not int:
            raise Uncacheable("a symbolic size")
    return shape


def encode(graph: Graph, source: Graph | None = None) -> bytes:
    """`graph` as bytes that say everything the passes read. With `source` (the graph it was
    optimized from), its inputs must be source's, position by position: the decoded graph
    takes the tensors of the inputs it is decoded around."""
    inputs = graph.inputs
    if source is not None and (len(inputs) != len(source.inputs) or any(
            new.value.id != old.value.id or new.kind != old.kind or new.name != old.name
            for new, old in zip(inputs, source.inputs))):
        raise Uncacheable("the passes changed the inputs")
    positions = {id(entry): position for position, entry in enumerate(inputs)}
    nodes = []
    for node in graph.nodes:
        if len(node.outputs) != 1:
            raise Uncacheable("a node of several outputs")
        out = node.outputs[0]
        operands = [operand.id if operand.__class__ is Value else operand
                    for operand in node.inputs]
        literals = tuple(position for position, operand in enumerate(node.inputs)
                         if operand.__class__ is not Value)
        nodes.append((node.op.name, operands, literals, node.attrs, out.id, _shape(out.shape),
                      out.dtype.name))
    outputs = []
    for entry in graph.outputs:
        target = entry.target
        if target is not None and id(target) not in positions:
            raise Uncacheable("an output's target is not an input")
        outputs.append((entry.value.id, entry.name, entry.kind,
                        None if target is None else positions[id(target)]))
    body = ([(entry.kind, entry.name, entry.value.id, _shape(entry.value.shape),
              entry.value.dtype.name) for entry in inputs], nodes, outputs,
            sorted(graph.backward_ids), sorted(graph.recompute_ids),
            sorted(graph.checkpoint_ids), graph._next_id)
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, protocol=5)
    # No memo: equal graphs give equal bytes whichever of their tuples and strings happen to
    # be one object (a shape tuple a cache handed out twice), so that a key does not depend on
    # the identity of what it encodes.
    pickler.fast = True
    try:
        pickler.dump(body)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise Uncacheable(str(error)) from None
    return buffer.getvalue()


def decode(data: bytes, source: Graph) -> Graph:
    """The graph `encode` wrote, its inputs standing for `source`'s (their tensors)."""
    inputs, nodes, outputs, backward, recompute, checkpoint, next_id = \
        _Unpickler(io.BytesIO(data)).load()
    if len(inputs) != len(source.inputs):
        raise ValueError("the entry has other inputs")
    graph = Graph()
    values: dict = {}
    for (kind, name, number, shape, dtype), old in zip(inputs, source.inputs):
        if old.kind != kind or old.name != name or old.value.id != number:
            raise ValueError(f"the entry's input {name} is not this graph's")
        value = Value(number, shape, dtypes.from_name(dtype))
        graph.inputs.append(Input(value, kind, name, old.tensor))
        values[number] = value
    by_name = dtypes.from_name
    append = graph.nodes.append
    for name, operands, literals, attrs, number, shape, dtype in nodes:
        if literals:
            literal = set(literals)
            operands = [operand if position in literal else values[operand]
                        for position, operand in enumerate(operands)]
        else:
            operands = [values[operand] for operand in operands]
        node = Node(REGISTRY[name], operands, attrs, [])
        value = Value(number, shape, by_name(dtype), node)
        node.outputs.append(value)
        values[number] = value
        append(node)
    for number, name, kind, target in outputs:
        graph.outputs.append(Output(values[number], name, kind,
                                    None if target is None else graph.inputs[target]))
    graph.backward_ids, graph.recompute_ids = set(backward), set(recompute)
    graph.checkpoint_ids, graph._next_id = set(checkpoint), next_id
    return graph
