"""autojit.fx.immutable_collections: the list and dict types a Node keeps its arguments in
(torch.fx.immutable_collections), so that a pass edits a node's arguments by assigning new ones
(`node.args = ...`), which keeps the users of every node right, never by mutating them in place.
They sit below node.py; pytree treats them as the list and dict they are.
"""

from __future__ import annotations

from ..utils import _pytree

__all__ = ["immutable_dict", "immutable_list"]

_HELP = ("If you are attempting to modify the kwargs or args of a torch.fx.Node object,\n"
         "instead create a new copy of it and assign the copy to the node:\n"
         "    new_args = ...  # copy and mutate args\n"
         "    node.args = new_args")


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"{type(self).__name__!r} object does not support mutation. {_HELP}")


class immutable_list(list):  # noqa: N801 - torch's name
    """A list that refuses mutation; hashable, as its items are."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __reduce__(self):
        return (type(self), (tuple(self),))


class immutable_dict(dict):  # noqa: N801 - torch's name
    """A dict that refuses mutation; hashable, as its items are."""

    __delitem__ = __ior__ = __setitem__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self) -> int:
        return hash(frozenset(self.items()))

    def __reduce__(self):
        return (type(self), (tuple(self.items()),))


# pytree flattens them as a list and a dict and rebuilds the immutable form.
_pytree.register_pytree_node(
    immutable_list, lambda tree: (list(tree), None),
    lambda children, context: immutable_list(children))
_pytree.register_pytree_node(
    immutable_dict, lambda tree: (list(tree.values()), list(tree)),
    lambda children, context: immutable_dict(zip(context, children)))
