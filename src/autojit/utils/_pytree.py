"""autojit.utils._pytree: torch.utils._pytree's functions over nested containers (pytrees), which
libraries use beside the functional transforms: tree_flatten, tree_unflatten, tree_map (over
several trees), tree_leaves, tree_structure, tree_map_only, tree_any and tree_all, and
register_pytree_node for a container class of the program's own; with key paths,
tree_flatten_with_path, tree_map_with_path and keystr over MappingKey, SequenceKey and
GetAttrKey.

A pytree is a leaf or a list, tuple, namedtuple, dict (OrderedDict, defaultdict), deque or
registered class of pytrees; None and every other object is a leaf, dicts keep their order, as
in torch. The transforms of autojit.func read their arguments with autograd/pytree.py's
simpler flattening.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable
from typing import Any, NamedTuple

from ..tensor.tensor import Size

__all__ = ["GetAttrKey", "LeafSpec", "MappingKey", "SequenceKey", "TreeSpec", "keystr",
           "register_pytree_node", "tree_all", "tree_any", "tree_flatten",
           "tree_flatten_with_path", "tree_leaves", "tree_map", "tree_map_only",
           "tree_map_with_path", "tree_structure", "tree_unflatten"]


class _Node(NamedTuple):
    flatten: Callable  # container -> (children, context)
    unflatten: Callable  # (children, context) -> container
    # container -> ([(key, child), ...], context); None: keys by position (SequenceKey)
    flatten_with_keys: Callable | None = None


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The key of a list's or tuple's child: its position, printed `[0]`."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a dict's child, printed `['name']`."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The key of a child held as an attribute (a namedtuple's field), printed `.name`."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as text: `[0]['weight'].bias`."""
    return "".join(str(key) for key in kp)


def _dict_flatten_with_keys(d) -> tuple[list, Any]:
    """A dict's (MappingKey, child) pairs and its context, torch's name that libraries register
    their dict-like classes with."""
    children, context = SUPPORTED_NODES[dict].flatten(d)
    return [(MappingKey(key), child) for key, child in zip(context, children)], context


def _list_flatten_with_keys(sequence) -> tuple[list, Any]:
    return [(SequenceKey(i), child) for i, child in enumerate(sequence)], None


_tuple_flatten_with_keys = _list_flatten_with_keys


def _namedtuple_flatten(tree):
    return list(tree), type(tree)


SUPPORTED_NODES: dict[type, _Node] = {
    list: _Node(lambda tree: (list(tree), None), lambda children, context: list(children)),
    tuple: _Node(lambda tree: (list(tree), None), lambda children, context: tuple(children)),
    dict: _Node(lambda tree: (list(tree.values()), list(tree)),
                lambda children, context: dict(zip(context, children))),
    OrderedDict: _Node(lambda tree: (list(tree.values()), list(tree)),
                       lambda children, context: OrderedDict(zip(context, children))),
    defaultdict: _Node(lambda tree: (list(tree.values()), (tree.default_factory, list(tree))),
                       lambda children, context: defaultdict(context[0],
                                                             zip(context[1], children))),
    deque: _Node(lambda tree: (list(tree), tree.maxlen),
                 lambda children, context: deque(children, maxlen=context)),
    # a shape is a container of its extents, as torch registers torch.Size
    Size: _Node(lambda tree: (list(tree), None), lambda children, context: Size(children)),
}


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable, *,
                         serialized_type_name: str | None = None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None) -> None:
    """Make `cls` a container: flatten_fn(obj) gives (children, context) and
    unflatten_fn(children, context) rebuilds it. The serialization and key-path arguments are
    accepted for torch's signature; autojit has no treespec serialization."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = _Node(flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _keyed_children(node: _Node, tree) -> tuple[list, Any]:
    """([(key, child), ...], context) of a container, with torch's keys for the built-in
    ones (MappingKey for a mapping's, GetAttrKey for a namedtuple's, SequenceKey else)."""
    if node.flatten_with_keys is not None:
        return node.flatten_with_keys(tree)
    children, context = node.flatten(tree)
    if isinstance(tree, dict):
        return [(MappingKey(key), child) for key, child in zip(tree, children)], context
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return [(GetAttrKey(name), child) for name, child in zip(tree._fields, children)], \
            context
    return [(SequenceKey(i), child) for i, child in enumerate(children)], context


def _node(tree) -> tuple[type, _Node] | None:
    kind = type(tree)
    if kind in SUPPORTED_NODES:
        return kind, SUPPORTED_NODES[kind]
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return kind, _Node(_namedtuple_flatten, lambda children, context: context(*children))
    return None


class TreeSpec:
    """The structure of a pytree: the container type, its context (a dict's keys) and the
    children's specs; `num_leaves` counts the leaves."""

    def __init__(self, type: Any, context: Any, children_specs: list):  # noqa: A002
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_leaves = sum(child.num_leaves for child in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self) -> bool:
        return False

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.is_leaf() == other.is_leaf()
                and self.type == other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __repr__(self) -> str:
        name = getattr(self.type, "__name__", str(self.type))
        return f"TreeSpec({name}, {self.context}, {self.children_specs})"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "*"


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """(the leaves in order, the spec that tree_unflatten rebuilds the tree from)."""
    leaves: list = []

    def flatten(node) -> TreeSpec:
        found = None if is_leaf is not None and is_leaf(node) else _node(node)
        if found is None:
            leaves.append(node)
            return LeafSpec()
        kind, rules = found
        children, context = rules.flatten(node)
        return TreeSpec(kind, context, [flatten(child) for child in children])

    spec = flatten(tree)
    return leaves, spec


def tree_flatten_with_path(tree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """([(key path, leaf), ...], the spec): tree_flatten with each leaf's path of keys."""
    pairs: list = []

    def flatten(node, path: tuple) -> TreeSpec:
        found = None if is_leaf is not None and is_leaf(node) else _node(node)
        if found is None:
            pairs.append((path, node))
            return LeafSpec()
        kind, rules = found
        keyed, context = _keyed_children(rules, node)
        return TreeSpec(kind, context, [flatten(child, (*path, key)) for key, child in keyed])

    spec = flatten(tree, ())
    return pairs, spec


def tree_map_with_path(func: Callable, tree, *rests, is_leaf: Callable | None = None):
    """`tree` with each leaf x replaced by func(its key path, x, *the leaves of `rests`)."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [tree_flatten(rest, is_leaf)[0] for rest in rests]
    return tree_unflatten([func(path, leaf, *items) for (path, leaf), *items in
                           zip(pairs, *others)], spec)


def tree_unflatten(leaves, treespec: TreeSpec):
    """The pytree of `treespec`'s structure with these leaves."""
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but "
                         f"the spec refers to a pytree that holds {treespec.num_leaves} items "
                         f"({treespec}).")
    iterator = iter(leaves)

    def build(spec: TreeSpec):
        if spec.is_leaf():
            return next(iterator)
        children = [build(child) for child in spec.children_specs]
        found = _node_of_type(spec.type)
        return found.unflatten(children, spec.context)

    return build(treespec)


def _node_of_type(kind) -> _Node:
    if kind in SUPPORTED_NODES:
        return SUPPORTED_NODES[kind]
    return _Node(_namedtuple_flatten, lambda children, context: context(*children))


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable, tree, *rests, is_leaf: Callable | None = None):
    """`tree` with each leaf x replaced by func(x, *the leaves of `rests` at its place)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_flatten(rest, is_leaf)[0] for rest in rests]
    return tree_unflatten([func(*items) for items in zip(leaves, *others)], spec)


def _matcher(type_or_types_or_pred) -> Callable:
    if isinstance(type_or_types_or_pred, type | tuple) or hasattr(type_or_types_or_pred,
                                                                  "__args__"):
        return lambda leaf: isinstance(leaf, type_or_types_or_pred)
    return type_or_types_or_pred


def tree_map_only(type_or_types_or_pred, /, func: Callable, tree,
                  is_leaf: Callable | None = None):
    """tree_map of `func` over the leaves of the given type(s) (or that the predicate holds
    for); the other leaves stay."""
    matches = _matcher(type_or_types_or_pred)
    return tree_map(lambda leaf: func(leaf) if matches(leaf) else leaf, tree, is_leaf=is_leaf)


def tree_any(pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all(pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    return all(map(pred, tree_leaves(tree, is_leaf)))
