"""autojit.fx.node: torch.fx's Node, one operation of a Graph, and map_arg/map_aggregate over
the nested arguments that refer to other nodes.

A Node has an opcode (placeholder, get_attr, call_function, call_method, call_module, output),
a target (a callable for call_function, a string otherwise), args and kwargs in which other
Nodes stand for their values, and `users`, the nodes that read it. Nodes form a doubly linked
list whose sentinel is the graph's root (graph.py keeps it), so that inserting and erasing are
O(1). Assigning `args`/`kwargs` keeps every node's `users` right; the arguments are kept in
immutable containers so that nothing edits them behind that bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor.device import device as _device
from ..tensor.dtypes import DType
from ..tensor.layouts import layout as _layout
from ..tensor.memory_format import memory_format as _memory_format
from ..tensor.tensor import Tensor
from . import _names
from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Argument", "Node", "Target", "has_side_effect", "map_aggregate", "map_arg"]

Target = Callable[..., Any] | str
Argument = Any  # a Node, a base value, or a tuple/list/dict/slice of Arguments

# The values a node argument holds as they are, besides nodes and containers.
base_types = (str, int, float, bool, complex, DType, Tensor, _device, _memory_format, _layout)

_legal_ops = frozenset(("placeholder", "call_method", "call_module", "call_function",
                        "get_attr", "output", "root"))

# Functions whose call nodes dead code elimination keeps even when nothing reads them.
_side_effectful_functions: set = set()


def has_side_effect(fn):
    """Register `fn` as having effects, so that Graph.eliminate_dead_code keeps its calls."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply `fn` to every leaf of `a` (through tuples, namedtuples, lists, dicts, slices);
    lists and dicts come back immutable, as a Node stores them."""
    if isinstance(a, tuple):
        items = tuple(map_aggregate(item, fn) for item in a)
        return type(a)(*items) if hasattr(a, "_fields") else items
    if isinstance(a, list):
        return immutable_list(map_aggregate(item, fn) for item in a)
    if isinstance(a, dict):
        result = immutable_dict()
        for key, value in a.items():
            dict.__setitem__(result, key, map_aggregate(value, fn))
        return result
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply `fn` to every Node in the nested argument `a`, leaving other leaves as they are."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg, max_list_len: float = float("inf")) -> str:
    """An argument as a graph listing prints it (%name for a node)."""
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    text = _names.constant_text(arg)
    return text if text is not None else str(arg)


class Node:
    """One operation of a Graph (torch.fx.Node)."""

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple,
                 kwargs: dict, return_type: Any = None) -> None:
        if op not in _legal_ops:
            raise AssertionError(f"Unknown op {op!r}; expected one of {sorted(_legal_ops)}")
        if op == "call_function":
            if not callable(target):
                raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} "
                                 f"has type {type(target).__name__} but a Callable is expected")
        elif not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target).__name__} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = immutable_dict()
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._sort_key: tuple = ()
        self._repr_fn: Callable[[Node], str] | None = None
        self.meta: dict[str, Any] = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list ------------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The node after this one in the graph (the root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one in the graph."""
        return self._prev

    def _remove_from_list(self) -> None:
        before, after = self._prev, self._next
        before._next, after._prev = after, before

    def prepend(self, x: Node) -> None:
        """Move (or insert) node `x` to just before this one."""
        if self is x:
            raise AssertionError("Cannot prepend a node to itself")
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        before = self._prev
        before._next, x._prev = x, before
        x._next, self._prev = self, x
        # A sort key between the neighbours' (the root's is ()), so that nodes compare by
        # position without renumbering: a longer key extends a shorter one it falls after.
        low, high = before._sort_key, self._sort_key
        if len(low) > len(high):
            x._sort_key = (*low[:-1], low[-1] + 1)
        elif len(low) < len(high):
            x._sort_key = (*high[:-1], high[-1] - 1)
        else:
            x._sort_key = (*low, 0)

    def append(self, x: Node) -> None:
        """Move (or insert) node `x` to just after this one."""
        self._next.prepend(x)

    # Nodes order by their position in the graph, as torch's do (sorted(nodes)).
    def __lt__(self, other: Node) -> bool:
        return self._sort_key < other._sort_key

    def __gt__(self, other: Node) -> bool:
        return self._sort_key > other._sort_key

    def __le__(self, other: Node) -> bool:
        return self._sort_key <= other._sort_key

    def __ge__(self, other: Node) -> bool:
        return self._sort_key >= other._sort_key

    # ---- arguments and users --------------------------------------------------------------

    @property
    def args(self) -> tuple:
        """The positional arguments; assigning them updates the users of the nodes involved."""
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._update_args_kwargs(value, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments; assigning them updates the users of the nodes involved."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._update_args_kwargs(self._args, value)

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes among args and kwargs, in the order they appear."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, new_args, new_kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}

        def collect(value):
            if isinstance(value, Node):
                if value.graph is not self.graph:
                    raise AssertionError(
                        f"Argument '{value}' of Node '{self}' does not belong to its Graph")
                self._input_nodes.setdefault(value)
            return value

        self._args = map_aggregate(tuple(new_args), collect)
        self._kwargs = map_aggregate(dict(new_kwargs), collect)
        for node in self._input_nodes:
            node.users.setdefault(self)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Replace positional argument `idx`."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Argument) -> None:
        """Insert a positional argument at `idx`."""
        if not 0 <= idx <= len(self.args):
            raise AssertionError("insert_args index must be between 0 and len(self.args)")
        self.args = (*self.args[:idx], arg, *self.args[idx:])

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set keyword argument `key`."""
        self.kwargs = {**self.kwargs, key: arg}

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] | None = None, *,
                              propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node (those `delete_user_cb` accepts) read `replace_with`
        instead; returns the users changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     ".meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if delete_user_cb is not None and not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read `new_input` wherever this node's arguments read `old_input`."""
        # The owning module's replace hooks see (old node, new node's name, user).
        for hook in getattr(self.graph.owning_module, "_replace_hooks", None) or ():
            hook(old=old_input, new=new_input.name, user=self)

        def swap(node):
            return new_input if node is old_input else node

        self._update_args_kwargs(map_arg(self.args, swap), map_arg(self.kwargs, swap))

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead code elimination must keep this node even without users: placeholders,
        the output, calls of functions registered with has_side_effect, and calls of modules
        marked `_is_impure`."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            module = self.graph.owning_module
            if module is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return getattr(module.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_function":
            # A function recorded through autojit's __torch_function__ protocol is its
            # dispatching wrapper: the registry holds what it wraps.
            return (self.target in _side_effectful_functions
                    or _names.unwrap(self.target) in _side_effectful_functions)
        return False

    @property
    def stack_trace(self) -> str | None:
        """The source location recorded for this node, when the tracer recorded one."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    def _rename(self, candidate: str) -> None:
        if candidate == self.name:
            return
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)

    # ---- printing ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        if self._repr_fn is not None:
            return self._repr_fn(self)
        return self.name

    @staticmethod
    def _pretty_print_target(target) -> str:
        return _names.pretty_target(target)

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None, *,
                    include_tensor_metadata: bool = False) -> str | None:
        """This node as a line of the graph listing; a placeholder goes to `placeholder_names`
        instead where that list is given (Graph.__str__'s signature)."""
        typename = f"{_names.type_repr(self.type)} " if self.type is not None else ""
        users = f"[num_users={len(self.users)}]"
        if self.op == "placeholder":
            if placeholder_names:
                text = self.target
                if self.type:
                    text += f": {_names.type_repr(self.type)}"
                placeholder_names.append(text)
                return None
            default = f"(default={_format_arg(self.args[0])})" if self.args else ""
            return f"%{self.name} : {typename}{users} = {self.op}[target={self.target}]{default}"
        if self.op == "get_attr":
            return (f"%{self.name} : {typename}{users} = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_names.type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}{users} = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __getstate__(self) -> dict:
        return dict(self.__dict__)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)



# torch.fx.node's helpers of the same names, which libraries import.
_get_qualified_name = _names.qualified_name
_type_repr = _names.type_repr
