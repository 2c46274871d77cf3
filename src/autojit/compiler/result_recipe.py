"""An executable's per-call work on its outputs, decided on its first call (`Recipe`): which
outputs update captured tensors or are a .grad, how each output's array is laid out, and how
the structure the function returned is rebuilt from the arrays, views of one result remade
as views of it. executable.py runs it after every call of the graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.eager_layout import lay_out
from ..ir.graph import Graph, Value
from ..ir.printing import fill_tokens
from ..tensor.tensor import Tensor
from .compiled_backward import ReleasedBackward
from .result_builders import builder
from .segments import SegmentedPlan

if TYPE_CHECKING:
    from .executable import Executable
class Recipe:
    """An executable's per-call work on its outputs, decided once: which outputs update
    captured tensors, which are .grad (of a captured tensor, or of the argument at a position;
    fresh when the function assigned that .grad), and, per output, the dtype and the result
    number when it requires grad."""

    def __init__(self, executable: Executable):
        graph = executable.graph
        self.executable = executable
        self.arguments_only = all(entry.kind in ("arg", "captured") for entry in graph.inputs)
        self.updates, self.grads = [], []
        self.grad_owners = {}  # "grad" output name -> (captured tensor, or argument position)
        for index, output in enumerate(graph.outputs):
            if output.kind == "update":
                entry = output.target
                if entry.kind == "captured":
                    self.updates.append((index, entry.tensor, None))
                else:  # an argument, at its call position
                    self.updates.append((index, None, executable.arg_positions[
                        graph.arg_inputs.index(entry)]))
            elif output.kind == "grad":
                entry = output.target
                fresh = output.name in executable.fresh_grads
                if entry.kind == "captured":
                    owner = (entry.tensor, None)
                else:
                    owner = (None, executable.arg_positions[graph.arg_inputs.index(entry)])
                self.grads.append((index, *owner, output.value.dtype, fresh))
                self.grad_owners[output.name] = owner
        self.leaves = [(output.value.dtype, executable.requiring.get(output.name),
                        output.name in executable.output_leaves,
                        output.name in executable.conj_outputs)
                       for output in graph.outputs]
        # The results eager lays out other than row-major (ir/eager_layout.py), and those
        # it makes on the CPU in a function run on a GPU (ir/trace_devices.py).
        self.layouts = [(index, executable.output_layouts[output.name])
                        for index, output in enumerate(graph.outputs)
                        if output.name in executable.output_layouts]
        self.host_outputs = [index for index, output in enumerate(graph.outputs)
                             if output.name in executable.host_outputs]
        # The .grad outputs laid out as the tensor the function assigned (`p.grad = g`): the
        # others, made by backward, are laid out as AccumulateGrad lays them out.
        self.assigned_grads = frozenset(index for index, *_ in self.grads
                                        if graph.outputs[index].name in executable.output_layouts)
        # Symbolic scalars: each graph value's output index and Python kind, and where each
        # runtime scalar is read (RunBinding); the generators a failed value check puts back.
        env = executable.env
        positions = {output.name: index for index, output in enumerate(graph.outputs)}
        self.symbol_leaves = {name: (positions[leaf.output], leaf.kind)
                              for name, leaf in env.leaves.items()
                              if leaf.output in positions} if env is not None else {}
        self.symbol_sources = {name: source for name, (_, source) in env.runtime.items()} \
            if env is not None else {}
        self.size_sources = dict(env.sources) if env is not None else {}
        # The sizes the graph computes, as the executable's binding has them (each run that
        # reaches its results computed those: unbacked_sizes.py).
        binding = getattr(executable, "binding", None) or {}
        self.unbacked_values = {name: binding[name] for name in env.unbacked if name in binding} \
            if env is not None and env.unbacked and binding else {}
        self.leaf_kinds = {name: (leaf.output, leaf.kind) for name, leaf in env.leaves.items()} \
            if env is not None else {}
        generators = {id(entry.tensor.generator): entry.tensor.generator
                      for entry in graph.inputs if entry.kind == "random"}
        self.generators = list(generators.values()) if executable.value_checks else []
        self.copied = _shared_results(graph, executable.template)
        # Whether a run is only: the plan on the call's arrays, the write-back, the result.
        self.plain = self.arguments_only and not self.copied and not self.layouts and \
            not self.host_outputs and executable.plan is not None and \
            not isinstance(executable.plan, SegmentedPlan) and not executable.value_checks \
            and not executable.nan_checks and executable.python_writes is None and \
            executable.prints is None and executable.failing_backward is None and env is None
        # A run that cannot end in another way of running the call (a failed value check, a
        # nan found, the interpreter's error rerun eagerly) drops the old gradients first.
        self.released = _released_before_run(executable, graph, self.grads) \
            if executable.plan is not None and not isinstance(executable.plan, SegmentedPlan) \
            and not executable.value_checks and not executable.nan_checks else ()
        # The result's template as closures (result_builders.py), or None: walked per call.
        self.result = builder(executable.template, self._output, self.grad_owners)
        plan = executable.plan
        if hasattr(plan, "unread_outputs"):
            plan.unread_outputs = _unread_results(executable)

    def source_value(self, name: str, args: tuple):
        """A runtime scalar's value where it lives, or a dynamic size's from its argument
        (one the graph computes from the executable's binding)."""
        if name in self.unbacked_values:
            return self.unbacked_values[name]
        size = self.size_sources.get(name)
        if size is not None:
            position, dim = size
            return args[position]._payload.shape[dim]
        return self.symbol_sources[name].value(args)

    def build(self, template, arrays: tuple, args: tuple, binding, made: dict):
        """A template's value in this run: what a write into Python state stores."""
        self._binding = binding
        return self._rebuild(template, arrays, None, args, made)

    def _text(self, text: str, arrays: tuple) -> str:
        """Text formatted from traced values, with this run's values (ir/printing.py)."""
        formatted = self.executable.prints[1] if self.executable.prints else []
        values = {output.name: Tensor._make(arrays[index], output.value.dtype)
                  for index, output in enumerate(self.executable.graph.outputs)
                  if output.kind == "print"}
        return fill_tokens(text, formatted, values, self._binding, {})

    def lay_out(self, arrays, owned: frozenset) -> list:
        """The run's arrays with each result where eager has it: on the CPU when eager makes
        it there, laid out as eager's array (a copy, unless the array the call made for it
        alone already is: a transposed product)."""
        arrays = list(arrays)
        for index in self.host_outputs:
            if arrays[index].__class__ is not np.ndarray:
                arrays[index] = arrays[index].to_host()
        for index, layout in self.layouts:
            arrays[index] = lay_out(arrays[index], layout, index in owned)
        return arrays

    def rebuild(self, template, arrays: tuple, node, args: tuple, binding=None, made=None):
        """The function's result: `template` (result_template.py) with each output index
        replaced by its tensor (one tensor per index), arguments and outside tensors by
        themselves, views by views remade on their real base, and each ("grad", name) leaf
        by the .grad the write-back just left there. `made`: the tensors this run already
        made for the values it stored in Python state, by output index: a returned one of
        them is that very tensor, given its history here."""
        if self.result is not None and template is self.executable.template and not made:
            return self.result(arrays, node, args)
        self._binding = binding
        return self._rebuild(template, arrays, node, args, made if made else {})

    def _output(self, index: int, arrays: tuple, node) -> Tensor:
        dtype, number, leaf, conjugated = self.leaves[index]
        tensor = Tensor._make(arrays[index], dtype)
        if conjugated:
            tensor._is_conj = True
        if leaf:
            tensor._requires_grad = True
        elif number is not None:
            tensor._requires_grad = True
            tensor.grad_fn = node
            tensor._output_nr = number
        return tensor

    def _rebuild(self, template, arrays: tuple, node, args: tuple, made: dict):
        kind = template[0]
        if kind == "tensor":
            index = template[1]
            tensor = made.get(index)
            if tensor is None:
                tensor = made[index] = self._output(index, arrays, node)
            elif node is not None and tensor.grad_fn is None and \
                    self.leaves[index][1] is not None:
                # Made first for Python state (`losses.append(loss)`), returned too: the
                # result's history is given to that very tensor.
                tensor._requires_grad = True
                tensor.grad_fn = node
                tensor._output_nr = self.leaves[index][1]
            return tensor
        if kind == "constant":
            return template[1]
        if kind == "symbolic":  # a symbolic scalar's value in this run
            return template[1].evaluate(self._binding)
        if kind in ("tuple", "list"):
            items = [self._rebuild(item, arrays, node, args, made) for item in template[1]]
            if kind == "list":
                return items
            return template[2](*items) if len(template) > 2 else tuple(items)
        if kind == "dict":
            pairs = [(key, self._rebuild(item, arrays, node, args, made))
                     for key, item in template[1]]
            return template[2](pairs) if len(template) > 2 else dict(pairs)
        if kind == "grad":
            tensor, position = self.grad_owners[template[1]]
            return (tensor if position is None else args[position])._grad
        if kind == "arg":
            return args[template[1]]
        if kind == "object":
            return template[1]
        if kind == "argument object":
            return template[1](args)
        if kind == "held grad":
            return template[1]._grad
        if kind == "text":
            return self._text(template[1], arrays)
        if kind == "instance":
            made_object = template[1].__new__(template[1])
            made_object.__dict__.update((name, self._rebuild(item, arrays, node, args, made))
                                        for name, item in template[2])
            return made_object
        if kind == "view":
            _, base, steps, detached, requires_grad = template
            return _remade_view(self._rebuild(base, arrays, node, args, made), steps,
                                detached, requires_grad)
        if kind == "released":
            tensor = self._rebuild(template[1], arrays, None, args, made)
            if tensor.grad_fn is None:
                tensor._requires_grad = True
                tensor.grad_fn = ReleasedBackward(template[2])
                tensor._output_nr = 0
            return tensor
        raise AssertionError(f"unknown result template {kind!r}")


def _shared_results(graph: Graph, template) -> frozenset:
    """The result (and print) outputs whose arrays may be memory something else holds, copied
    on each call: eager's result is a tensor of its own. The passes can make a result the very value
    of an input (`b * 1` is `b`), or of another output (CSE merges two equal results; a
    result equal to a .grad or to an in-place update), and a view of one of those is the
    same memory."""
    leaves: set = set()
    _tensor_leaves(template, leaves)
    # A printed value is read after the write-back too: one that is an input's memory would
    # print the value written after the print.
    leaves.update(index for index, output in enumerate(graph.outputs)
                  if output.kind in ("print", "value", "check"))
    inputs = {id(entry.value) for entry in graph.inputs if entry.kind in ("arg", "captured")}
    holders: dict = {}  # id(root value) -> the outputs whose arrays are its memory
    for index, output in enumerate(graph.outputs):
        # Not "saved": a result that is also a residual of the compiled backward is that
        # very tensor, as in eager (its version is watched, compiled_backward.py).
        if output.kind in ("update", "grad") or index in leaves:
            holders.setdefault(id(_view_root(output.value)), []).append(index)
    copied = set()
    for index in leaves:
        root = _view_root(graph.outputs[index].value)
        sharing = holders.get(id(root), ())
        if id(root) in inputs or (len(sharing) > 1 and sharing[0] != index) or any(
                graph.outputs[other].kind != "result" for other in sharing):
            copied.add(index)
    return frozenset(copied)


def _view_root(value):
    """The value whose memory `value` is (through view ops: reshape, permute, slices)."""
    while value.producer is not None and value.producer.op.view:
        value = next(operand for operand in value.producer.inputs
                     if isinstance(operand, Value))
    return value


def _tensor_leaves(template, leaves: set) -> None:
    """The output indices a result template turns into tensors of their own."""
    kind = template[0]
    if kind == "tensor":
        leaves.add(template[1])
    elif kind in ("tuple", "list"):
        for item in template[1]:
            _tensor_leaves(item, leaves)
    elif kind == "dict":
        for _, item in template[1]:
            _tensor_leaves(item, leaves)
    elif kind in ("view", "released"):
        _tensor_leaves(template[1], leaves)


def _remade_view(base: Tensor, steps: tuple, detached: bool, requires_grad: bool) -> Tensor:
    """The view ops run eagerly on the real base: a view sharing its memory, as eager's was."""
    from ..ops.registry import bind
    from ..tensor.state import state

    previous = state.grad_enabled
    state.grad_enabled = requires_grad
    try:
        view = base.detach() if detached else base
        for op, attrs in steps:
            view = bind(op, (view,), attrs)
        return view
    finally:
        state.grad_enabled = previous


def _unread_results(executable: Executable) -> frozenset:
    """The positions of the "result" outputs nothing reads after a run: those the result
    template dropped for the .grad they equal (result_template.alias_fresh_grads: `return
    w.grad`). The native program may then hand their array to the .grad alone, without a copy
    (codegen/cpu/program.py's owned outputs). Empty where anything else may read outputs."""
    if executable.python_writes is not None or executable.prints is not None or \
            executable.env is not None or executable.value_checks or \
            executable.backward is not None or executable.failing_backward is not None:
        return frozenset()
    referenced: set = set()
    _template_indices(executable.template, referenced)
    return frozenset(index for index, output in enumerate(executable.graph.outputs)
                     if output.kind == "result" and index not in referenced)


def _template_indices(template, found: set) -> None:
    """Every output index a template may read: each ("tensor", index) found anywhere in its
    nested tuples, lists and dicts, payloads included (more than it reads is safe)."""
    if isinstance(template, tuple):
        if len(template) == 2 and template[0] == "tensor" and isinstance(template[1], int):
            found.add(template[1])
        for item in template:
            _template_indices(item, found)
    elif isinstance(template, list):
        for item in template:
            _template_indices(item, found)
    elif isinstance(template, dict):
        for item in template.values():
            _template_indices(item, found)


def _released_before_run(executable, graph: Graph, grads: list) -> tuple:
    """(tensors whose .grad a run sets to None before the plan runs, ids of the tensors the
    graph reads as captured inputs): the captured tensors whose .grad the function set to None
    (zero_grad) before any read of it, then left None or had backward make a new one. Eager
    drops those gradients when the function starts; dropped only at the write-back, they
    stayed alive beside the new ones through the whole run (the size of every gradient again
    in a training step's peak memory)."""
    fresh = [tensor for _, tensor, _, _, is_fresh in grads if is_fresh and tensor is not None]
    candidates = fresh + [tensor for tensor in executable.cleared_grads if tensor is not None]
    read_owners = {id(getattr(entry.tensor, "owner", None)) for entry in graph.inputs
                   if entry.kind == "captured"}
    released = tuple(tensor for tensor in candidates if id(tensor) not in read_owners and
                     id(tensor) in executable.overwritten_grads)
    if not released:
        return ()
    return released, frozenset(id(entry.tensor) for entry in graph.inputs
                               if entry.kind == "captured")
