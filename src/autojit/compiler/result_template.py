"""The structure a compiled function returns, and which returned tensors are not fresh values.

api.py flattens what the traced function returned into a *template*: nested tuples (a named
tuple, as sort's (values, indices), with its type), lists and dicts (a dict of another type,
as transformers' ModelOutput or an OrderedDict, with a maker that makes one of its type and
attributes) whose leaves say where each returned tensor comes from on every call
(compiler/executable.py rebuilds it after the run); a list or dict that existed before the
call is returned itself, as an "object" leaf:

- ("tensor", index): the graph's output `index`, a new tensor, laid out as eager's array
  would be (ir/eager_layout.py's OutputLayout); the same index twice is the same tensor
  object twice, as in eager;
- ("arg", position): the argument at that position itself (`return x` after `x.mul_(2)`);
- ("object", tensor): a tensor from outside the function, itself (`return self.buffer`);
- ("view", base, steps, detached, requires_grad): a view (or a detached alias) of a base that
  outlives the call (an argument, an outside tensor, or another returned output), made again
  by running the view ops (op, attrs) on the real base after the run, so that it shares the
  base's memory and version counter as eager's view does, with autograd history when it had
  one while tracing;
- ("grad", name): the .grad the write-back left on a tensor (`return w.grad`);
- ("held grad", owner): the tensor `owner.grad` holds when the run ends, where the trace read
  a .grad each run reads afresh (compiler/grad_inputs.py);
- ("constant", value): a Python number, string or None;
- ("symbolic", scalar): a symbolic scalar (tensor/symbolic.py: `loss.item()`, a sum of
  them, a runtime float) or a TracedList (`w.tolist()`), its value in each run;
- ("text", string): text formatted from traced values (ir/printing.py's tokens), filled in
  with each run's values;
- ("object", value): an object that existed before the call, itself;
- ("argument object", read, path): an object the call reached through its arguments (a dict
  or list passed in, a cache object's layer), read at that place in each call's arguments
  (`read(args)`): the traced call's own would be the first call's object on every call;
- ("instance", class, [(attribute, template)]): an object the call made (a dataclass of
  results), made again on each run with `class.__new__` and its attributes' templates;
- ("released", ("tensor", index), name): in Python state only, a tensor the call stored after
  a backward through it freed its graph's saved values: output `index`, requiring grad, with
  a node named as eager's that raises eager's error on any later backward.

Eager returns those very objects and views; a compiled call that returned copies would let a
later in-place write through the result miss the argument it should change.
"""

from __future__ import annotations

import collections
import functools

from ..ir.eager_layout import eager_output_layout
from ..ir.graph import Graph
from ..ir.printing import TOKEN_MARK
from ..tensor.symbolic import contains_symbolic, is_symbolic
from ..tensor.tensor import Tensor
from ..tensor.traced_scalar import TracedList
from .guards import reader


def _history_freed(node) -> bool:
    """Whether a backward pass freed the history below `node`: the node itself, or one it
    leads to (a mean's node saves nothing to free, the square's below it does), so that
    eager's later backward through it raises."""
    stack, seen = [node], {id(node)}
    while stack:
        node = stack.pop()
        if getattr(node, "_released", False):
            return True
        for next_node, _ in getattr(node, "next_functions", ()):
            if next_node is not None and id(next_node) not in seen:
                seen.add(id(next_node))
                stack.append(next_node)
    return False


class Flattening:
    """One trace's result, flattened: outputs are added once per distinct tensor."""

    def __init__(self, graph: Graph, tracer, arg_positions: dict, known=frozenset(),
                 returned=None, arg_objects=None):
        self.graph, self.tracer = graph, tracer
        # id(object) -> (read, path): the objects reached through the arguments, and how to
        # read each one from a call's arguments
        self.arg_objects = arg_objects if arg_objects is not None else (
            returned.arg_objects if returned is not None else {})
        self.arg_positions = arg_positions  # id(symbolic argument) -> call position
        # id(tensor) -> output index; a Flattening of what the call stored in Python state
        # starts from the result's (`returned`), so that a returned tensor stored there too
        # is the same output, made once per run (the same object, as eager's)
        self.indices: dict = dict(returned.indices) if returned is not None else {}
        self.returned = frozenset(returned.indices) if returned is not None else frozenset()
        self.known = known  # ids of the objects that existed before the call

    def value(self, value):
        """The template of a value the call stored in Python state (writebacks.py): a tensor
        with autograd history made in the call only where the call also returns it (the
        run stores the returned tensor itself, which gets that history: `losses.append(loss);
        return loss`)."""
        if isinstance(value, Tensor) and value._payload is None and value._requires_grad and \
                id(value) not in self.returned:
            node = value.grad_fn
            if node is not None and _history_freed(node):
                # A loss the call stored after backpropagating through it (`history.append(
                # loss)` after `loss.backward()`): eager's tensor keeps a node whose saved
                # values were freed, which raises on any later backward. Each run stores its
                # value with a node that raises the same.
                return ("released", self.output(value), node.name())
            raise TypeError("a tensor that requires grad (with autograd history made in the "
                            "call and not freed by a backward in it) cannot be written into "
                            "Python state by a compiled run")
        return self.flatten(value, set())

    def output(self, tensor: Tensor) -> tuple:
        index = self.indices.get(id(tensor))
        if index is None:
            index = len(self.graph.outputs)
            name = f"out{index}"
            self.graph.add_output(self.tracer.value_of(tensor), name)
            self.indices[id(tensor)] = index
            # Eager's array may not be row-major (`a * 2` of a transposed `a`): each run's
            # result is laid out as eager's, so that its views and strides are eager's too.
            layout = eager_output_layout(self.tracer, tensor)
            if layout is not None:
                self.tracer.output_layouts[name] = layout
            placement = self.tracer.placement
            if placement is not None and placement.is_host(tensor):
                # A CPU tensor in eager (a CPU factory's, in a function run on a GPU).
                self.tracer.host_outputs.add(name)
            if tensor._is_conj:
                self.tracer.conj_outputs.add(name)  # the bit eager's result has
            if tensor._requires_grad and tensor.grad_fn is None:
                # A leaf the call made (`zeros(2, requires_grad=True)`): each run returns a
                # new leaf that requires grad, as eager does.
                self.tracer.output_leaves.add(name)
        return ("tensor", index)

    def known_object(self, value) -> tuple:
        """The template of an object from before the call: by its place in the arguments
        where it was reached through them, else itself."""
        found = self.arg_objects.get(id(value))
        if found is not None:
            return ("argument object", *found)
        return ("object", value)

    def base(self, tensor: Tensor, returned: set):
        """The template of a tensor a returned view may be remade from, or None."""
        position = self.arg_positions.get(id(tensor))
        if position is not None:
            return ("arg", position)
        if tensor._payload is not None and id(tensor) not in self.tracer.made:
            return ("object", tensor)
        if id(tensor) in returned:
            return self.output(tensor)
        return None

    def leaf(self, tensor: Tensor, returned: set) -> tuple:
        position = self.arg_positions.get(id(tensor))
        if position is not None:
            return ("arg", position)
        if tensor._payload is not None and id(tensor) not in self.tracer.made:
            return ("object", tensor)
        if tensor._traced_view is not None:
            steps, detached = _steps(tensor)
            root = self.base(tensor._traced_view.root, returned)
            if root is not None and not contains_symbolic(steps):
                return ("view", root, steps, detached, tensor._requires_grad)
        return self.output(tensor)

    def flatten(self, result, returned: set):
        if isinstance(result, Tensor):
            return self.leaf(result, returned)
        if is_symbolic(result) or isinstance(result, TracedList):
            return ("symbolic", result)  # each run's value: a graph value, a size, ...
        if type(result) in (list, dict) and id(result) in self.known:
            # A list or dict from before the call (`LOG.append(x); return LOG`): the object
            # itself, holding what the run's writes and appends leave in it, as eager's.
            return self.known_object(result)
        if isinstance(result, (tuple, list)):
            kind = "tuple" if isinstance(result, tuple) else "list"
            items = [self.flatten(item, returned) for item in result]
            if hasattr(type(result), "_fields"):
                # A named tuple (sort's (values, indices)) is rebuilt as one: its type last.
                return (kind, items, type(result))
            if type(result) is not tuple and kind == "tuple":
                # A tuple of another type (a Size: x.shape, broadcast_shapes) stays one.
                return (kind, items, _made_from_items(type(result)))
            return (kind, items)
        if isinstance(result, dict):
            entries = [(key, self.flatten(value, returned)) for key, value in result.items()]
            if type(result) is dict:
                return ("dict", entries)
            # A dict of another type (transformers' ModelOutput, an OrderedDict): made again
            # as one, with its attributes.
            return ("dict", entries, _mapping_maker(result))
        if isinstance(result, str) and TOKEN_MARK in result:
            return ("text", result)  # formatted from traced values: filled in on each run
        if isinstance(result, (bool, int, float, complex, str, bytes, type(None))):
            return ("constant", result)
        if id(result) in self.known:
            return self.known_object(result)
        if _is_constant(result):
            return ("object", result)
        attributes = getattr(result, "__dict__", None)
        if isinstance(attributes, dict) and type(result).__new__ is object.__new__ and \
                not isinstance(result, type):
            # An object the call made (a dataclass of results, say): made again on each run.
            return ("instance", type(result), [(name, self.flatten(item, returned))
                                               for name, item in attributes.items()])
        raise TypeError(f"the function returned a {type(result).__name__}, which a compiled "
                        "run cannot make again")


def _mapping_maker(mapping: dict):
    """A function making, from (key, value) pairs, a mapping of `mapping`'s type with its
    attributes, without its __init__ (which may check or convert what it is given): made by
    the type's __new__, filled by the dict base's own __setitem__ (OrderedDict's keeps its
    order), its attributes set as they are, or to the item they are (a ModelOutput's fields
    are its items)."""
    cls = type(mapping)
    setitem = next(base.__setitem__ for base in cls.__mro__
                   if base in (collections.OrderedDict, collections.defaultdict, dict))
    items = {id(value): key for key, value in mapping.items()}
    attributes = []
    names = dict(getattr(mapping, "__dict__", {}))
    if isinstance(mapping, collections.defaultdict):
        names["default_factory"] = mapping.default_factory
    for name, value in names.items():
        if id(value) in items and not isinstance(value, (bool, int, float, str)):
            attributes.append((name, True, items[id(value)]))
        elif value is None or isinstance(value, (bool, int, float, complex, str, bytes)) or \
                _is_constant(value):
            attributes.append((name, False, value))
        else:
            raise TypeError(f"the function returned a {cls.__name__} whose attribute "
                            f"{name!r} holds a {type(value).__name__}, which a compiled run "
                            "cannot make again")

    def make(pairs):
        made = cls.__new__(cls)
        for key, value in pairs:
            setitem(made, key, value)
        for name, from_item, value in attributes:
            object.__setattr__(made, name, dict.__getitem__(made, value) if from_item
                               else value)
        return made

    return make


def _is_constant(value) -> bool:
    """A function, class, module or other library object, or a value that never changes (a
    device, a dtype, an enum member, as a model's cache holds them): returned as it is."""
    import enum
    import types

    from ..tensor.device import device
    from ..tensor.dtypes import DType

    return isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType,
                              types.ModuleType, types.MethodType, device, DType, enum.Enum))


@functools.cache
def _made_from_items(sequence_type):
    """A constructor of `sequence_type` taking the items as arguments, as a named tuple's does
    (one per type, so that templates of one result type hold the same one)."""
    return lambda *items: sequence_type(items)


def _steps(view: Tensor, until=None) -> tuple:
    """The (op, attrs) view steps from the view's root (or from the tensor `until`, on the
    way) to it, and whether an alias on the way (detach) cut it off from autograd history."""
    steps, detached = [], False
    while view._traced_view is not None and view is not until:
        link = view._traced_view
        if link.op is None:
            detached = True
        else:
            steps.append((link.op, link.attrs))
        view = link.source
    return tuple(reversed(steps)), detached


class ArgumentObjects:
    """id(object) -> (read, path) for the objects a walk reached through the call's arguments
    (their paths start at `args`), each `read(args)` made when first asked for: a returned
    dict argument, or a cache object a call hands back, is the one of each call's arguments
    (result_template.py's "argument object")."""

    def __init__(self, walk):
        self._walk, self._made = walk, {}

    def get(self, identity: int):
        found = self._made.get(identity)
        if found is None:
            path = self._walk.object_paths.get(identity)
            if path is None or path[0] != "args":
                return None
            found = self._made[identity] = (reader(path, self._walk.constants), path)
        return found


def flatten_result(result, graph: Graph, tracer, arg_positions: dict, known=frozenset(),
                   arg_objects=None):
    """The template of `result`, adding a graph output for each tensor that is a new value;
    `known`: the ids of the objects that existed before the call (returned as they are, or
    read from each call's arguments where `arg_objects` has them)."""
    returned = {id(tensor) for tensor in tensors_in(result)}
    flattening = Flattening(graph, tracer, arg_positions, known, arg_objects=arg_objects)
    template = flattening.flatten(result, returned)
    tracer.result_flattening = flattening  # (the start of the stored values' flattening)
    return template


def alias_fresh_grads(template, result, fresh_grads: dict):
    """The template with each returned tensor that is a .grad the call leaves on a tensor from
    outside (`return w.grad` after `loss.backward()`; `fresh_grads`: output name -> that
    .grad) made a ("grad", output name) leaf: the call returns the very tensor it leaves in
    .grad, as eager does."""
    if not fresh_grads:
        return template
    kind = template[0]
    if kind == "tensor":
        for name, grad in fresh_grads.items():
            if grad is result and not result._requires_grad:
                return ("grad", name)
        # `return w.grad[0]`: a view of the .grad eager leaves (itself maybe a view).
        names = {id(grad): name for name, grad in fresh_grads.items()
                 if not grad._requires_grad}
        source = result
        while getattr(source, "_traced_view", None) is not None:
            source = source._traced_view.source
            if id(source) in names:
                steps, detached = _steps(result, until=source)
                if not contains_symbolic(steps):
                    return ("view", ("grad", names[id(source)]), steps, detached,
                            result._requires_grad)
                break
        return template
    if kind in ("tuple", "list"):
        return (kind, [alias_fresh_grads(item, value, fresh_grads)
                       for item, value in zip(template[1], result)], *template[2:])
    if kind == "dict":
        return (kind, [(key, alias_fresh_grads(item, result[key], fresh_grads))
                       for key, item in template[1]], *template[2:])
    return template


def held_grads(template, owners: dict):
    """The template with each returned tensor from outside that is a .grad every run reads
    afresh (`owners`: id(the .grad traced) -> the tensor it is the .grad of) made a
    ("held grad", owner) leaf: each run returns the tensor .grad holds then, or a view of it,
    not the one the trace read."""
    kind = template[0]
    if kind == "object":
        owner = owners.get(id(template[1]))
        return template if owner is None else ("held grad", owner)
    if kind in ("tuple", "list"):
        return (kind, [held_grads(item, owners) for item in template[1]], *template[2:])
    if kind == "dict":
        return (kind, [(key, held_grads(item, owners)) for key, item in template[1]],
                *template[2:])
    if kind == "view":
        return (kind, held_grads(template[1], owners), *template[2:])
    return template


def returned_objects(template) -> list:
    """The tensors from outside the function a result template returns as they are
    ("object" leaves, and the bases of views remade on them)."""
    kind = template[0]
    if kind == "object":
        return [template[1]]
    if kind in ("tuple", "list"):
        return [tensor for item in template[1] for tensor in returned_objects(item)]
    if kind == "dict":
        return [tensor for _, item in template[1] for tensor in returned_objects(item)]
    if kind == "view":
        return returned_objects(template[1])
    return []


def symbolic_leaves(template) -> list:
    """The symbolic scalars (and TracedLists) a result template returns."""
    kind = template[0]
    if kind == "symbolic":
        return [template[1]]
    if kind in ("tuple", "list"):
        return [value for item in template[1] for value in symbolic_leaves(item)]
    if kind == "dict":
        return [value for _, item in template[1] for value in symbolic_leaves(item)]
    if kind == "instance":
        return [value for _, item in template[2] for value in symbolic_leaves(item)]
    return []


def requiring_results(graph: Graph, result) -> list:
    """(output name, Tensor) for each returned tensor that is a graph output and requires
    grad: those get a compiled backward."""
    tensors = list(tensors_in(result))
    requiring = []
    for output in graph.outputs:
        if output.kind != "result":
            continue
        for tensor in tensors:
            if tensor._value is output.value and tensor._requires_grad:
                requiring.append((output.name, tensor))
                break
    return requiring


def tensors_in(result):
    if isinstance(result, Tensor):
        yield result
    elif isinstance(result, (tuple, list)):
        for item in result:
            yield from tensors_in(item)
    elif isinstance(result, dict):
        for item in result.values():
            yield from tensors_in(item)
