"""A compiled function's result template (result_template.py) made into one builder, once.

executable.py rebuilds a call's result from its template after every run. Walking the template
(a tuple of tagged leaves) costs about 0.5 us per leaf; most templates hold only new tensors,
.grad reads, arguments and constants, in tuples, lists and dicts, and those are turned here into
nested closures when the executable's recipe is made, so that a call only calls them. Any other
leaf (a view remade on its base, a symbolic scalar, text, an instance), or the same output twice
(which must be the same tensor object twice), keeps the template walk: `builder` returns None.
"""

from __future__ import annotations


class _Unsupported(Exception):
    """A template the walk in executable.py must rebuild."""


def builder(template, output, grad_owners: dict):
    """`build(arrays, node, args)` making the result `template` describes, or None.

    `output(index, arrays, node)` makes the tensor of graph output `index`; `grad_owners` maps
    a "grad" leaf's name to its (captured tensor, or None and the argument's position)."""
    try:
        return _builder(template, output, grad_owners, set())
    except _Unsupported:
        return None


def _builder(template, output, grad_owners: dict, seen: set):
    kind = template[0]
    if kind == "tensor":
        index = template[1]
        if index in seen:
            raise _Unsupported
        seen.add(index)
        return lambda arrays, node, args: output(index, arrays, node)
    if kind in ("constant", "object"):
        value = template[1]
        return lambda arrays, node, args: value
    if kind == "argument object":
        read = template[1]
        return lambda arrays, node, args: read(args)
    if kind == "held grad":
        owner = template[1]
        return lambda arrays, node, args: owner._grad
    if kind == "arg":
        position = template[1]
        return lambda arrays, node, args: args[position]
    if kind == "grad":
        tensor, position = grad_owners[template[1]]
        if position is None:
            return lambda arrays, node, args: tensor._grad
        return lambda arrays, node, args: args[position]._grad
    if kind in ("tuple", "list"):
        items = [_builder(item, output, grad_owners, seen) for item in template[1]]
        if kind == "list":
            return lambda arrays, node, args: [item(arrays, node, args) for item in items]
        if len(template) > 2:  # a named tuple, made by its type
            made = template[2]
            return lambda arrays, node, args: made(*[item(arrays, node, args)
                                                     for item in items])
        if len(items) == 1:
            (only,) = items
            return lambda arrays, node, args: (only(arrays, node, args),)
        if len(items) == 2:
            first, second = items
            return lambda arrays, node, args: (first(arrays, node, args),
                                               second(arrays, node, args))
        return lambda arrays, node, args: tuple([item(arrays, node, args) for item in items])
    if kind == "dict":
        entries = [(key, _builder(item, output, grad_owners, seen)) for key, item in template[1]]
        if len(template) > 2:  # a mapping of another type, made by its maker
            made = template[2]
            return lambda arrays, node, args: made([(key, item(arrays, node, args))
                                                    for key, item in entries])
        return lambda arrays, node, args: {key: item(arrays, node, args)
                                           for key, item in entries}
    raise _Unsupported
