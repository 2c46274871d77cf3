"""autojit.fx._pytree: torch.fx._pytree, flattening a pytree along a given TreeSpec (the spec
of a traced function's inputs), with `register_pytree_flatten_spec` for container types of a
library's own. Specs and flattening are autojit.utils._pytree's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..utils._pytree import TreeSpec, tree_flatten

__all__ = ["register_pytree_flatten_spec", "tree_flatten_spec"]

FlattenFnSpec = Callable[[Any, TreeSpec], list]
FlattenFnExactMatchSpec = Callable[[Any, TreeSpec], bool]
FlattenFuncSpec = FlattenFnSpec  # torch's older names
FlattenFuncExactMatchSpec = FlattenFnExactMatchSpec

SUPPORTED_NODES: dict[type, FlattenFnSpec] = {}
SUPPORTED_NODES_EXACT_MATCH: dict[type, FlattenFnExactMatchSpec | None] = {}


def register_pytree_flatten_spec(cls: type, flatten_fn_spec: FlattenFnSpec,
                                 flatten_fn_exact_match_spec: FlattenFnExactMatchSpec | None
                                 = None) -> None:
    """How to flatten an instance of `cls` along a spec: `flatten_fn_spec(obj, spec)` gives
    the children in the spec's order."""
    SUPPORTED_NODES[cls] = flatten_fn_spec
    SUPPORTED_NODES_EXACT_MATCH[cls] = flatten_fn_exact_match_spec


def _deregister_pytree_flatten_spec(cls: type) -> None:
    del SUPPORTED_NODES[cls]
    del SUPPORTED_NODES_EXACT_MATCH[cls]


def tree_flatten_spec(pytree, spec: TreeSpec) -> list:
    """The leaves of `pytree` in the order `spec` lays them out (a dict by the spec's keys,
    not its own order); a type without a registered flattener must match the spec exactly."""
    if spec.is_leaf():
        return [pytree]
    flatten = SUPPORTED_NODES.get(spec.type)
    if flatten is not None:
        result = []
        for child, child_spec in zip(flatten(pytree, spec), spec.children_specs, strict=False):
            result += tree_flatten_spec(child, child_spec)
        return result
    leaves, real_spec = tree_flatten(pytree)
    if spec != real_spec:
        raise RuntimeError(f"Real spec {real_spec} of object {pytree} is different from "
                           f"expected spec {spec}.")
    return leaves


def _dict_flatten_spec(d: dict, spec: TreeSpec) -> list:
    return [d[k] for k in spec.context]


def _list_flatten_spec(d: list, spec: TreeSpec) -> list:
    return [d[i] for i in range(spec.num_children)]


def _tuple_flatten_spec(d: tuple, spec: TreeSpec) -> list:
    return [d[i] for i in range(spec.num_children)]


def _dict_flatten_spec_exact_match(d: dict, spec: TreeSpec) -> bool:
    return len(d) == spec.num_children


def _list_flatten_spec_exact_match(d: list, spec: TreeSpec) -> bool:
    return len(d) == spec.num_children


def _tuple_flatten_spec_exact_match(d: tuple, spec: TreeSpec) -> bool:
    return len(d) == spec.num_children


register_pytree_flatten_spec(dict, _dict_flatten_spec, _dict_flatten_spec_exact_match)
register_pytree_flatten_spec(list, _list_flatten_spec, _list_flatten_spec_exact_match)
register_pytree_flatten_spec(tuple, _tuple_flatten_spec, _tuple_flatten_spec_exact_match)
