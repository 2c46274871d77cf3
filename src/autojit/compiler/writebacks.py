"""Python state a traced call wrote, and how every run of its executable writes it again.

The walk before a trace and one after it (reachability.py) are compared (StateChanges):

- a *write*: a place that holds another value after the trace. A scalar (`model.eval()` inside
  the step, `self.steps += 1`), a symbolic scalar (`self.total += loss.item()`,
  `ctx["loss"] = loss.item()`, a runtime float the function updates), a traced tensor that
  needs no autograd history (`self.last = loss.detach()`), text formatted from traced values
  (`self.message = f"loss {loss.item():.3f}"`), or a container the trace made holding any of
  those (`self._last_lr = [lr * 0.5]`): each run writes that run's value there, built from a
  result template (result_template.py) as returned values are;
- an *append*: a list that grew by values appended at its end, which the user's code only
  ever appends to (ir/source_uses.append_only: `losses.append(loss.item())` as a statement
  and no other use): each run appends that run's values, and the list's length and items are
  not guarded, since the trace read neither;
- a write to a place the user's code only ever assigns (ir/source_uses.write_only:
  `self.message = text`, never read nor `+=`): what it held before is not guarded either;
- a *store* the record of the call's reads saw (recorder.py), of the value the place held
  already (`stats["seen"] = len(history)`, unchanged): a write all the same, since eager
  stores it again on a call that finds the entry gone;
- a *structural* change (a container grown otherwise, an entry or attribute added, an object
  replaced): the trace serves its own call only (api.py);
- a *leak*: a symbolic value stored where no run can write it (a list read as well as
  appended to, a slot): a graph break.

The guards hold the values from before the call, and every write is a function of what the
guards and the graph's values give, so wherever the guards pass, eager would write these very
values. The trace itself leaves the state as it found it (Walk.restore), and the executable's
first run does the writes of the traced call. See docs/notes/symbolic-scalars.md.
"""

from __future__ import annotations

import re

from ..ir.source_uses import append_only, write_only
from ..tensor.symbolic import is_symbolic
from ..tensor.traced_scalar import TracedList
from .array_values import same_array
from .reachability import Walk

_NAME = re.compile(r"(?:\.|\['|\[\")([A-Za-z_]\w*)(?:'\]|\"\])?$")


def _symbolic_value(value) -> bool:
    """Whether a value found in state was made by the trace and changes from run to run."""
    return is_symbolic(value) or isinstance(value, TracedList) or (
        hasattr(value, "_payload") and hasattr(value, "_value") and value._payload is None)


class StateChanges:
    """What a traced call did to the Python state the walk before it saw (see the module
    docstring).

    writes: (path, value, display) for each place to write on every run (the path's last
    fragment is the attribute, key or item written); appends: (path of the list, appended
    values, display); structural: displays of everything else that changed; leaks:
    (display, value) for each place that now holds a symbolic value no run can write."""

    def __init__(self, before: Walk, after: Walk, codes=(), unguarded=frozenset(),
                 appended_only=None, stored=frozenset()):
        self.writes, self.appends, self.structural, self.leaks = [], [], [], []
        self.aliases: list = []  # (path, the path of the object stored there too, display)
        self.appended_paths: list = []  # paths of the lists appended to (not guarded)
        # Paths the user's code only ever assigns (ir/source_uses.write_only), written with
        # each run's value: what they held before is not guarded. `unguarded` holds those
        # earlier traces found, which the walk before this one did not observe.
        self.unguarded_paths: list = []
        self._before, self._after = before, after
        # The names the paths use for objects held as constants (the walk after the trace
        # names those it met first).
        self.constants = {**before.constants, **after.constants}
        skipped = self._appended_lists(before, codes, appended_only)
        fresh = _fresh_paths(before, after)
        symbolic = [observation for observation in after.observations
                    if (observation.kind == "symbolic" or observation.kind == "tensor" and
                        observation.value._payload is None) and
                    not _under(observation.path, skipped)]
        for observation in after.observations:
            if observation.kind == "keys":
                for key in observation.value:
                    if _symbolic_value(key):  # `stats[x.shape[0]] = ...` with a size
                        self.leaks.append((f"a key of {observation.display}", key))
        written: dict = {}  # path written as a whole -> display
        for observation in symbolic:
            path = _whole_tuple(after, _outermost_fresh(observation.path, fresh))
            if len(path) < 2 or _past_end(before, after, path) or \
                    _entry(before, after, path) is None:
                # Nowhere a run can write, or nothing to put back before it does: a root,
                # an item of a list the call grew (other than by appends the code only
                # makes), a slot.
                self.leaks.append((observation.display, observation.value))
                continue
            written.setdefault(path, (observation.display if path == observation.path else
                                      _display_of(after, path, observation.display)))
        for path, display in written.items():
            self.writes.append((path, after.objects.get(path, _value_at(after, path)),
                                display))
            if appended_only is None and path not in unguarded and \
                    _write_only(path, display, codes):
                # Without a record of reads, the source says what is only ever assigned (with
                # one, what the trace did not read is not guarded anyway).
                self.unguarded_paths.append(path)
        # A container the trace made, written as a whole, that the state also holds by
        # another path (SequentialLR's `_last_lr` is its current scheduler's list): each run
        # stores the one it builds at that path too, as eager shares the one object.
        for observation in after.observations:
            first = after.object_paths.get(id(observation.value)) \
                if observation.kind == "is" else None
            if first is None or not _under(first, tuple(written)) or \
                    _under(observation.path, tuple(written)):
                continue
            if len(observation.path) < 2 or _entry(before, after, observation.path) is None:
                self.leaks.append((observation.display, observation.value))
                continue
            self.aliases.append((observation.path, first, observation.display))
        done = tuple(written) + tuple(path for path, _, _ in self.aliases)
        tuples: set = set()  # paths of the tuples written as a whole
        old = before.by_path()
        for observation in after.observations:
            if _under(observation.path, skipped) or _under(observation.path, done):
                old.pop((observation.path, observation.kind), None)
                continue
            if _under(observation.path, unguarded):
                # Not observed before: written with a constant, if the function wrote it.
                entry = _entry(before, after, observation.path)
                if observation.path in unguarded and observation.kind == "scalar" and \
                        entry is not None and (entry[1] not in entry[2] or
                                               entry[2][entry[1]] is not observation.value):
                    self.writes.append((observation.path, observation.value,
                                        observation.display))
                continue
            previous = old.pop((observation.path, observation.kind), None)
            if previous is None and observation.kind == "scalar":
                # The same path held an object before: replaced by a scalar.
                previous = next((old.pop(key) for key in list(old) if key[0] ==
                                 observation.path), None)
            if previous is not None and previous.same(observation):
                if observation.path in stored and observation.kind == "scalar" and \
                        len(observation.path) > 1:
                    # Stored, of the value already there: eager stores it on every call
                    # (again after the caller cleared the dict).
                    self.writes.append((observation.path, observation.value,
                                        observation.display))
                continue
            if previous is not None and previous.kind == observation.kind == "scalar" and \
                    len(observation.path) > 1:
                path = _whole_tuple(after, observation.path)
                if path == observation.path:
                    self.writes.append((path, observation.value, observation.display))
                elif path not in tuples:  # a tuple replaced by one with another item
                    tuples.add(path)
                    self.writes.append((path, after.objects[path],
                                        _display_of(after, path, observation.display)))
            else:
                self.structural.append(observation.display)
        self.structural += [observation.display for key, observation in old.items()
                            if not _under(key[0], skipped) and not _under(key[0], done)]
        self.structural += [display for _, display, array_, copy in before.arrays.values()
                            if not same_array(array_, copy)]
        self.key_orders = _key_orders(after, [path for path, _, _ in self.writes])

    def _appended_lists(self, before: Walk, codes, appended_only=None) -> tuple:
        """The lists grown by appends only, which the user's code only appends to (by the
        record of the call's reads, `appended_only`: ids of the lists it appended to and read
        nothing of; else by the source of `codes`): recorded in `appends`; returns the paths
        under which nothing else is compared (the list's length and its items)."""
        skipped = []
        for key, (container, contents) in before.snapshots.items():
            if not isinstance(container, list) or len(container) <= len(contents) or any(
                    mine is not theirs for mine, theirs in zip(container, contents)):
                continue
            path, display = before.container_paths[key]
            name = _place_name(path, display)
            if appended_only is not None:
                if key not in appended_only:
                    continue
            elif name is None or not append_only(name, codes):
                continue
            self.appends.append((path, container[len(contents):], display))
            self.appended_paths.append(path)
            skipped.append(path)
        return tuple(skipped)

    def undo(self) -> None:
        """Take out of Python state what the trace stored there that is symbolic (the appends,
        the writes of traced values): each run writes its own values instead."""
        for path, items, _ in self.appends:
            container = self._after.objects.get(path)
            if isinstance(container, list):
                del container[len(container) - len(items):]
        for path, value, _ in self.writes:
            if not _symbolic_value(value) and not isinstance(value, (list, tuple, dict)) and \
                    not _plain_instance(value) and not isinstance(value, str):
                continue
            _undo_entry(self._before, self._after, path)

    def __bool__(self) -> bool:
        return bool(self.writes or self.appends or self.structural or self.leaks or
                    self.aliases)


def _key_orders(after: Walk, written: list) -> list:
    """(path of a dict, its keys in the order the traced call left them) for each dict a
    write goes into: a run that writes a key the dict lost (the trace's own write was taken
    out, `undo`) must leave it where eager's call puts it, among the others."""
    keys = {observation.path: observation.value for observation in after.observations
            if observation.kind == "keys"}
    orders, seen = [], set()
    for path in written:
        if not path[-1].startswith("["):
            continue
        owner = path[:-1]
        if owner in keys and owner not in seen and all(
                isinstance(key, (str, int, float, bool, bytes, type(None)))
                for key in keys[owner]):
            seen.add(owner)
            orders.append((owner, tuple(keys[owner])))
    return orders


def reorder(mapping: dict, order: tuple) -> None:
    """Put `mapping`'s keys in `order` (keys not in it last, as they were)."""
    items = [(key, mapping[key]) for key in order if key in mapping]
    rest = [(key, value) for key, value in mapping.items() if key not in order]
    mapping.clear()
    mapping.update(items + rest)


def _place_name(path: tuple, display: str) -> str | None:
    """The name the user's code reaches a place by: an attribute's, a string key's, a global
    or closure variable's."""
    match = _NAME.search(path[-1]) if len(path) > 1 and path[-1] != ".cell_contents" else None
    name = match.group(1) if match else display.rsplit(".", 1)[-1]
    return name if name.isidentifier() else None


def _write_only(path: tuple, display: str, codes) -> bool:
    name = _place_name(path, display)
    return name is not None and write_only(name, codes)


def _entry(before: Walk, after: Walk, path: tuple):
    """(container, key, its contents before the trace) of the attribute, key or item at
    `path`, or None where the walk before it kept no copy to put back (a slot, a class
    attribute)."""
    owner = after.objects.get(path[:-1])
    if owner is None and len(path) == 2:  # an object the paths hold as a constant (globals)
        owner = after.constants.get(path[0])
    fragment = path[-1]
    if owner is None or fragment.startswith(".__dict__["):
        return None
    container = owner.__dict__ if fragment.startswith(".") and hasattr(owner, "__dict__") \
        else owner
    found = before.snapshots.get(id(container))
    if found is None:
        return None
    key = fragment[1:] if fragment.startswith(".") else _literal(fragment[1:-1])
    return container, key, found[1]


def _undo_entry(before: Walk, after: Walk, path: tuple) -> None:
    """Put back the attribute, key or item at `path` as the walk before the trace saw it."""
    entry = _entry(before, after, path)
    if entry is None:
        return
    container, key, contents = entry
    if isinstance(container, dict):
        if key in contents:
            container[key] = contents[key]
        else:
            container.pop(key, None)
    elif isinstance(container, list) and isinstance(key, int) and key < len(contents):
        container[key] = contents[key]


def _literal(text: str):
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _past_end(before: Walk, after: Walk, path: tuple) -> bool:
    """Whether `path` is an item of a list past the length it had before the trace."""
    owner = after.objects.get(path[:-1])
    if not isinstance(owner, list):
        return False
    found = before.snapshots.get(id(owner))
    index = _literal(path[-1][1:-1]) if path[-1].startswith("[") else None
    return found is None or not isinstance(index, int) or index >= len(found[1])


def _under(path: tuple, prefixes) -> bool:
    return any(path[:len(prefix)] == prefix for prefix in prefixes)


def _fresh_paths(before: Walk, after: Walk) -> set:
    """The paths (walked after the trace) of containers and plain objects the trace made:
    what no path reached before it ran."""
    seen = before._seen
    return {path for path, obj in after.objects.items()
            if id(obj) not in seen and type(obj) in (list, dict, tuple) or
            id(obj) not in seen and _plain_instance(obj)}


def _plain_instance(obj) -> bool:
    """An instance result_template can make again on each run: a `__dict__`, made by
    object.__new__."""
    kind = type(obj)
    return isinstance(getattr(obj, "__dict__", None), dict) and \
        kind.__new__ is object.__new__ and not isinstance(obj, type)


def _outermost_fresh(path: tuple, fresh: set) -> tuple:
    """The path of the outermost object made by the trace that holds `path`'s value (written as a
    whole), else `path` itself. An attribute's path goes through the owner's `__dict__`."""
    for end in range(2, len(path)):
        prefix = path[:end]
        if prefix in fresh:
            return prefix
    return path


def _whole_tuple(after: Walk, path: tuple) -> tuple:
    """Where a write of `path` goes: the outermost tuple holding it, written as a whole (no
    run can assign an item of a tuple: `group["betas"] = (beta1, beta2)` makes a new one),
    else `path` itself."""
    for end in range(2, len(path)):
        if type(after.objects.get(path[:end])) is tuple:
            return path[:end]
    return path


def _display_of(after: Walk, path: tuple, fallback: str) -> str:
    for observation in after.observations:
        if observation.path == path:
            return observation.display
    return fallback


def _value_at(after: Walk, path: tuple):
    return next(observation.value for observation in after.observations
                if observation.path == path)


class PythonWrites:
    """The writes and appends of a traced call (StateChanges), as one function every run
    calls: `writes(args, build)`, `build(template)` giving a template's value in that run."""

    def __init__(self, writes: list, appends: list, constants: dict, orders=(), aliases=()):
        """writes: (path, template); appends: (path, templates), in the trace's order;
        orders: (path of a dict, its keys' order after the traced call); aliases: (path, path
        of the object to store there, once the writes are done)."""
        lines, names, namespace = [], {}, dict(constants)
        namespace["reorder"] = reorder
        self.templates = []

        def local(path: tuple) -> str:
            if len(path) == 1:
                return path[0]
            name = names.get(path)
            if name is None:
                parent = local(path[:-1])
                name = names[path] = f"v{len(names)}"
                lines.append(f"    {name} = {parent}{path[-1]}")
            return name

        def value(template) -> str:
            if template[0] == "constant":
                constant = f"S{len(namespace)}"
                namespace[constant] = template[1]
                return constant
            self.templates.append(template)
            constant = f"T{len(namespace)}"
            namespace[constant] = template
            return f"build({constant})"

        def assign(path: tuple, expression: str) -> None:
            owner, fragment = path[:-1], path[-1]
            if fragment.startswith(".__dict__["):  # a class attribute: mappingproxy is read-only
                lines.append(f"    setattr({local(owner)}, {fragment[10:-1]}, {expression})")
            else:
                lines.append(f"    {local(owner)}{fragment} = {expression}")

        for path, template in writes:
            assign(path, value(template))
        for path, templates in appends:
            target = local(path)
            lines.extend(f"    {target}.append({value(template)})" for template in templates)
        for path, source in aliases:
            assign(path, local(source[:-1]) + source[-1])
        for path, order in orders:
            target = local(path)
            constant = f"K{len(namespace)}"
            namespace[constant] = list(order)
            lines.append(f"    if [*{target}] != {constant}:\n"
                         f"        reorder({target}, {constant})")
        exec(compile("def replay(args, build):\n" + ("\n".join(lines) or "    pass") + "\n",
                     "<autojit state writes>", "exec"), namespace)  # noqa: S102
        self._replay = namespace["replay"]

    def __call__(self, args: tuple, build) -> None:
        self._replay(args, build)
