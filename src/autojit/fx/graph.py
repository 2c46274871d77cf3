"""autojit.fx.graph: torch.fx's Graph, the program a GraphModule runs: a doubly linked list of
Nodes (node.py) in execution order, with an insert point, unique node names and the editing
operations passes use (create, copy, erase, dead code elimination, lint).

Nodes are named after their targets as torch names them (`add`, `add_1`, `linear`, `sum_1`),
the listing (`str(graph)`) prints as torch's does, and `python_code` writes the graph as the
source of a `forward` (codegen.py). The symbolic tracer (_symbolic_trace.py) builds graphs;
graph_module.py runs them.
"""

from __future__ import annotations

import copy
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .codegen import (  # noqa: F401 - torch.fx.graph's names
    CodeGen,
    PythonCode,
    _format_target,
    _is_magic,
    _Namespace,
    _snake_case,
    inplace_methods,
    magic_methods,
    reflectable_magic_methods,
)
from .node import Argument, Node, Target, _legal_ops, map_arg

__all__ = ["CodeGen", "Graph", "PythonCode"]


class _InsertPoint:
    """Within it, new nodes go where the graph's `inserting_before/after` put them."""

    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        self.graph._insert = self.orig_insert


class _node_list:  # noqa: N801 - torch's name
    """The nodes of a graph as a sized, iterable, reversible view; iteration survives the
    erasure of the node it stands on."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        if direction not in ("_next", "_prev"):
            raise AssertionError(f"direction must be '_next' or '_prev', got {direction}")
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        step = self.direction
        current = getattr(root, step)
        while current is not root:
            # The step is read after the yield, so that nodes inserted after the current one
            # are visited; an erased node keeps its links, so walking on from it still works.
            if not current._erased:
                yield current
            current = getattr(current, step)

    def __reversed__(self):
        return iter(_node_list(self.graph, "_prev" if self.direction == "_next" else "_next"))


class Graph:
    """A torch.fx graph: placeholders for the inputs, then calls, then one output node."""

    def __init__(self, owning_module=None, tracer_cls: type | None = None,
                 tracer_extras: dict[str, Any] | None = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict[str, int] = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields: dict[str, Any] = {}

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, module) -> None:
        self._owning_module = module

    @property
    def nodes(self) -> _node_list:
        """The nodes in order (a view: len, iteration, reversed)."""
        return _node_list(self)

    @property
    def output_node(self) -> Node:
        """The output node (the last node)."""
        output = next(iter(reversed(self.nodes)))
        if output.op != "output":
            raise AssertionError(f"Last node is {output.op}, expected output")
        return output

    def find_nodes(self, *, op: str, target: Target | None = None, sort: bool = True) -> list:
        """The nodes with opcode `op` (and `target`, where given), in graph order."""
        return [node for node in self.nodes
                if node.op == op and (target is None or node.target == target)]

    # ---- creating nodes -------------------------------------------------------------------

    def create_node(self, op: str, target: Target, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """A new node at the insert point (the end, unless inserting_before/after says)."""
        if op not in _legal_ops or op == "root":
            raise AssertionError(f"Unknown op {op!r}")
        args = () if not args else args
        if not isinstance(args, tuple):
            raise AssertionError(f"args must be a tuple, got {type(args)}")
        kwargs = {} if not kwargs else kwargs
        if not isinstance(kwargs, dict):
            raise AssertionError(f"kwargs must be a dict, got {type(kwargs)}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        node = Node(self, name, op, target, args, kwargs, type_expr)
        module = self.owning_module
        for hook in getattr(module, "_create_node_hooks", None) or ():
            hook(node)
        self._graph_namespace.associate_name_with_obj(name, node)
        self._insert(node)
        self._len += 1
        return node

    def _target_to_str(self, target: Target | None) -> str:
        if callable(target):
            op = target.__name__
        else:
            if not isinstance(target, str):
                raise AssertionError(f"Expected target to be str, got {type(target)}")
            op = target[2:-2] if _is_magic(target) else target
        return _snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the function; `default_value` makes it optional."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def _warn_missing(self, qualified_name: str, what: str) -> None:
        module = self.owning_module
        if module is None:
            return
        value = module
        for part in qualified_name.split("."):
            if not hasattr(value, part):
                warnings.warn(f"Attempted to insert a {what} Node with no underlying reference "
                              f"in the owning GraphModule! Call GraphModule.add_submodule to "
                              f"add the necessary submodule, GraphModule.add_parameter to add "
                              f"the necessary Parameter, or nn.Module.register_buffer to add "
                              f"the necessary buffer", stacklevel=3)
                return
            value = getattr(value, part)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """A read of a parameter, buffer or attribute of the owning module, by dotted path."""
        self._warn_missing(qualified_name, "get_attr")
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """A call of the submodule at dotted path `module_name`."""
        self._warn_missing(module_name, "call_module")
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """A call of method `method_name` on args[0]."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None,
                      name: str | None = None) -> Node:
        """A call of a free function (torch.relu, operator.add, a wrap()ped function)."""
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """The node that returns `result`."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x
                  ) -> Node:
        """A copy of `node` (from any graph) here, its argument nodes mapped by
        `arg_transform`."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copied = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        copied.meta = copy.copy(node.meta)
        return copied

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False):
        """Copy every node of `g` but its output here, recording old -> new in `val_map`;
        returns the value the output returned, in terms of the new nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> Graph:
        memo = memo if memo is not None else {}
        graph = Graph(tracer_cls=self._tracer_cls)
        found = graph.graph_copy(self, val_map=memo, return_output_node=True)
        graph._codegen = copy.deepcopy(self._codegen)
        if found is not None:
            value, old_output = found
            output = graph.output(value, type_expr=getattr(old_output, "type", None))
            output.meta = copy.copy(old_output.meta)
        return graph

    # ---- editing ----------------------------------------------------------------------------

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nothing reads any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        for hook in getattr(self.owning_module, "_erase_node_hooks", None) or ():
            hook(to_erase)
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        # Dropping its arguments takes it out of its inputs' users.
        to_erase._update_args_kwargs(map_arg(to_erase.args, lambda n: None),
                                     map_arg(to_erase.kwargs, lambda n: None))

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """`with graph.inserting_before(n):` new nodes go before `n` (the start if None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """`with graph.inserting_after(n):` new nodes go after `n` (the end if None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def lint(self) -> None:
        """Check that nodes belong here, are topologically ordered and uniquely named, and that
        the targets exist in the owning module."""
        seen_names: set[str] = set()
        seen_values: set[Node] = set()
        for node in self.nodes:
            if node.op not in _legal_ops:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to "
                                       f"this Graph, but was used as an argument! If you are "
                                       f"copying nodes from another graph, make sure to use "
                                       f"``arg_transform`` on node_copy() to remap values\n"
                                       f"{self}")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       f"has been defined! Please check that Nodes in the "
                                       f"graph are topologically ordered\n{self}")
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
        module = self.owning_module
        if module is None:
            return
        from ..nn import Module

        for node in self.nodes:
            if node.op not in ("get_attr", "call_module"):
                continue
            value = module
            atoms = node.target.split(".")
            for index, atom in enumerate(atoms):
                value = getattr(value, atom, None)
                seen = ".".join(atoms[:index])
                if value is None:
                    raise RuntimeError(f"Node {node} target {node.target} references "
                                       f"nonexistent attribute {atom} of {seen}")
                if node.op == "call_module" and not isinstance(value, Module):
                    raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen} "
                                       "does not reference an nn.Module")

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None
                            ) -> bool:
        """Erase the nodes nobody reads that have no effects (Node.is_impure, or
        `is_impure_node`); returns whether anything was erased."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    # ---- printing and code ------------------------------------------------------------------

    def set_codegen(self, codegen: CodeGen) -> None:
        self._codegen = codegen

    def process_inputs(self, *args):
        """The arguments as the generated function takes them (its codegen's say)."""
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        """The result as the caller gets it (its codegen's say)."""
        return self._codegen.process_outputs(out)

    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False) -> PythonCode:
        """The source of this graph's function and the globals it needs; `root_module` is the
        name the code gives the module that owns the attributes and submodules (`self`).
        `verbose` adds source comments and the tensor metadata nodes carry ("f32[2, 8]",
        with strides and devices where asked)."""
        # A fresh namespace holds both the locals (node names) and the globals, so that no
        # global shadows a value.
        namespace = _Namespace()

        def node_repr(n: Node) -> str:
            return namespace.create_name(n.name, n)

        saved = {node: node._repr_fn for node in self.nodes}
        for node in saved:
            node._repr_fn = node_repr
        try:
            return self._codegen._gen_python_code(self.nodes, root_module, namespace,
                                                  verbose=verbose,
                                                  include_stride=include_stride,
                                                  include_device=include_device)
        finally:
            for node, repr_fn in saved.items():
                node._repr_fn = repr_fn

    def __str__(self) -> str:
        # As torch's: the return annotation is not passed down, so it never prints, and the
        # placeholders list stays empty (format_node appends only to a non-empty one), so
        # placeholders print as lines.
        placeholder_names: list[str] = []
        lines = [node.format_node(placeholder_names) for node in self.nodes]
        text = f"graph({', '.join(placeholder_names)}):"
        for line in lines:
            if line:
                text += "\n    " + line
        return text

    def print_tabular(self) -> None:
        """Print the nodes as a table (opcode, name, target, args, kwargs)."""
        rows = [[n.op, n.name, str(n.target), str(n.args), str(n.kwargs)] for n in self.nodes]
        header = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(5)]
        for row in [header, ["-" * w for w in widths], *rows]:
            print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths,
                                                                          strict=True)))
