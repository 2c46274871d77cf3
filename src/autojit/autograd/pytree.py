"""Nested containers of tensors (pytrees), as the functional transforms take and return them.

A pytree is a tensor or any other leaf, or a tuple, list, dict or namedtuple of pytrees.
`tree_flatten` gives its leaves in order and a spec that `tree_unflatten` rebuilds it from;
the transforms in transforms.py and vmap.py work on the leaves.
"""

from __future__ import annotations

from collections.abc import Callable


class TreeSpec:
    """The shape of a pytree: its container kind, keys and children's specs."""

    __slots__ = ("kind", "keys", "children", "rebuild")

    def __init__(self, kind: str, keys=None, children=(), rebuild=None):
        self.kind, self.keys, self.children, self.rebuild = kind, keys, tuple(children), rebuild

    @property
    def leaf_count(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.leaf_count for child in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.keys == other.keys and self.children == other.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{key!r}: {child!r}" for key, child in zip(self.keys, self.children))
            return "{" + inner + "}"
        return f"{self.kind}({inner})"


LEAF = TreeSpec("leaf")


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list) -> TreeSpec:
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        children = [_flatten(item, leaves) for item in tree]
        kind = type(tree)
        return TreeSpec("namedtuple", kind, children, lambda items: kind(*items))
    if isinstance(tree, (tuple, list)):
        children = [_flatten(item, leaves) for item in tree]
        return TreeSpec(type(tree).__name__, None, children, type(tree))
    if isinstance(tree, dict):
        keys, kind = tuple(tree), type(tree)
        children = [_flatten(tree[key], leaves) for key in keys]
        return TreeSpec("dict", keys, children, lambda items: kind(zip(keys, items)))
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    iterator = iter(leaves)
    return _unflatten(iterator, spec)


def _unflatten(iterator, spec: TreeSpec):
    if spec.kind == "leaf":
        return next(iterator)
    return spec.rebuild([_unflatten(iterator, child) for child in spec.children])


def tree_map(function: Callable, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([function(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, describe: Callable[[], str]) -> list:
    """One entry of `prefix` (a pytree whose leaves apply to whole subtrees of `tree`, as
    vmap's in_dims do) per leaf of `tree`."""
    out: list = []
    _broadcast(prefix, tree, out, describe)
    return out


def _broadcast(prefix, tree, out: list, describe) -> None:
    if isinstance(prefix, (tuple, list, dict)):
        if isinstance(prefix, dict) != isinstance(tree, dict) or not isinstance(
                tree, (tuple, list, dict)) or len(prefix) != len(tree):
            raise ValueError(describe())
        if isinstance(prefix, dict):
            if set(prefix) != set(tree):
                raise ValueError(describe())
            for key in tree:
                _broadcast(prefix[key], tree[key], out, describe)
        else:
            for item_prefix, item in zip(prefix, tree):
                _broadcast(item_prefix, item, out, describe)
        return
    out.extend([prefix] * len(tree_flatten(tree)[0]))
