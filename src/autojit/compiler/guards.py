"""Guards: the conditions under which a compiled executable still means what was traced.

A compiled function's executable is valid only while everything the trace depended on is the
same (a compiled function is never silently wrong; docs/notes/guards.md): argument shapes,
dtypes and requires_grad flags, Python scalar arguments, grad mode, the captured tensors (which
object the function reaches, its shape, dtype, requires_grad, .grad and hooks), and all the
Python state the function can reach through its closure, globals and arguments (reachability.py
walks it: scalars, container lengths, classes, functions' code, library objects' identity). The
guard set is written as Python source, one condition per line, compiled into a function, so
that checking it costs a few attribute reads and comparisons per call, and `str(guards)` shows
exactly what is checked. Conditions on the same object share the reads that reach it: the
source keeps each intermediate object in a local variable (`v3 = v2._modules`), so a deep path
costs one read per step, once.
"""

from __future__ import annotations

import math
import operator
import re

import numpy as np

from ..ir.eager_layout import layout_signature
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.symbolic_expr import EVAL_GLOBALS
from ..tensor.tensor import Tensor
from .guard_code import canonical, compiled

# The names GuardSet.constant gives values (a prefix and a number), and the walk's root names.
# Containers whose subscript never adds what it looks up.
_PLAIN = frozenset({dict, list, tuple})


def item(container, key):
    """`container[key]` as a guard reads it: of a dict subclass with a `__missing__` (a
    defaultdict, an optimizer's state), a missing key raises KeyError (the guard fails) instead
    of being added to the user's dict."""
    if isinstance(container, dict) and key not in container:
        raise KeyError(key)
    return container[key]


def step(parent: str, fragment: str) -> str:
    """The expression for one fragment of a path read from `parent`."""
    if fragment.startswith("[") and fragment.endswith("]"):
        key = fragment[1:-1]
        return f"({parent}[{key}] if {parent}.__class__ in PLAIN else item({parent}, {key}))"
    return parent + fragment


def expression(path: tuple) -> str:
    """A path's expression for the guards' namespace, read as `step` reads it."""
    text = path[0]
    for fragment in path[1:]:
        text = step(f"({text})" if fragment.startswith("[") else text, fragment)
    return text


def reader(path: tuple, constants: dict):
    """A function reading the object at `path` from a call's arguments, as the guards read it
    (`constants`: the walk's names for the objects it holds)."""
    namespace = {**constants, "PLAIN": _PLAIN, "item": item}
    return eval(f"lambda args: {expression(path)}", namespace)  # noqa: S307


_PLACEHOLDER = re.compile(r"\b[A-Z]+\d+\b")


_SOURCE_NAMES = {name: value for name, value in EVAL_GLOBALS.items() if name != "__builtins__"}


class GuardSet:
    """A compiled predicate over a call's arguments; `str()` gives its conditions."""

    def __init__(self):
        # (subject path or None, condition, reason): a condition on a subject path (a tuple
        # of expression fragments, see reachability.Observation) names it "$".
        self._items: list = []
        # the names a symbolic condition's source may use (math.isfinite(eps), sqrt, floor,
        # ...: a float read on every call that reached clamp(min=eps) failed every guard
        # check with a NameError, and retraced each call), then the guards' own
        self._constants: dict = {**_SOURCE_NAMES, "Tensor": Tensor, "state": state,
                                 "dtypes": dtypes, "isnan": math.isnan,
                                 "copysign": math.copysign, "separate": separate,
                                 "is_": operator.is_, "layout_signature": layout_signature,
                                 "item": item, "PLAIN": _PLAIN}
        self._names: dict = {}  # (prefix, id(value)) -> constant name
        self._displays: dict = {}  # constant name -> how str() shows it (a source path)
        self._tags: list = []  # per condition: what it is about (require's tag), or None
        # per condition: whether it is on autojit's own state (shown with detail=True only)
        self._internal: list = []
        # per condition: (label, value when traced, reader) or None; the reader gives the
        # value now from the object at the subject path, for the reason a recompile reports
        self._compared: list = []
        self._check = None
        self._float_checks = None  # [(check, tag)] of the float conditions, made when needed

    def constant(self, value, prefix: str = "C", display: str | None = None) -> str:
        """The name the conditions use for `value`; `display` is how str() shows it."""
        key = (prefix, id(value))
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = f"{prefix}{len(self._constants)}"
            self._constants[name] = value
        if display is not None:
            self._displays[name] = display
        return name

    def add_constants(self, constants: dict) -> None:
        """Names a walk's paths refer to (reachability.Walk.constants)."""
        self._constants.update(constants)

    def require(self, condition: str, reason: str, subject: tuple | None = None,
                display: str | None = None, tag=None, compared: tuple | None = None,
                internal: bool = False) -> None:
        """Add `condition`, on the object at the `subject` path ("$") when there is one;
        `display` is that object's source path (`model.fc1.weight`), for str(); `tag` says
        what the condition is about, for `changed_float_tags` (("float", path): the
        value of a Python float or int at that path); `compared` is (label, the value when traced,
        a function reading the value now from the subject), for `changed`."""
        self._items.append((subject, condition, reason, display))
        self._tags.append(tag)
        self._internal.append(internal or _internal(subject, display))
        self._compared.append(compared if subject is not None else None)

    def source(self) -> str:
        lines, names = [], {}

        def local(path: tuple) -> str:
            if len(path) == 1:
                return path[0]
            name = names.get(path)
            if name is None:
                parent = local(path[:-1])
                name = names[path] = f"v{len(names)}"
                lines.append(f"    {name} = {step(parent, path[-1])}")
            return name

        for index, (subject, condition, _, _) in enumerate(self._items):
            text = condition if subject is None else condition.replace("$", local(subject))
            lines.append(f"    if not ({text}):\n        return {index}")
        body = "\n".join(lines)
        return f"def check(args):\n{body or '    pass'}\n    return None\n"

    def build(self) -> None:
        """The conditions are complete. The predicate is compiled when first checked: a
        trace that serves its own call only (compiler/stages.py, interpret_once) never is,
        and compiling thousands of conditions (a model's hook registries, an optimizer's
        state) costs a tenth of a second."""
        self._check = None

    def _checker(self):
        if self._check is None:
            source, roots = canonical(self.source(), self._constants)
            namespace = {**self._constants, **roots}
            exec(compiled(source, "<autojit guards>"), namespace)  # noqa: S102
            self._check = namespace["check"]
        return self._check

    def failure(self, args: tuple) -> str | None:
        """None when every guard holds, else the reason of the first that fails."""
        check = self._checker()
        try:
            index = check(args)
        except Exception as error:  # a path that no longer resolves fails the guard
            return f"a guarded path raised {type(error).__name__}: {error}"
        return None if index is None else self._items[index][2]

    def changed(self, args: tuple) -> str | None:
        """None when every guard holds, else what changed, as the first failing guard reads
        in the user's terms: its source path with the value when traced and the value now
        (`optimizer.param_groups[0]['lr']: 0.0031 -> 0.0029`), or its reason where the guard
        compares no single value."""
        check = self._checker()
        try:
            index = check(args)
        except Exception as error:  # noqa: BLE001 - a path that no longer resolves
            return f"a guarded path raised {type(error).__name__}: {error}"
        if index is None:
            return None
        subject, _, reason, _ = self._items[index]
        compared = self._compared[index]
        if compared is None:
            return reason
        label, before, read = compared
        try:
            now = read(eval(expression(subject), dict(self._constants),  # noqa: S307
                            {"args": args}))
        except Exception:  # noqa: BLE001 - the path went away: the reason says what
            return reason
        return f"{label}: {_short(before)} -> {_short(now)}"

    def changed_float_tags(self, args: tuple) -> list:
        """The tags of every float condition that fails for `args`: the first failure hides
        the others, and floats often change together (a scheduler sets an optimizer's lr and
        its momentum on the same step), so each is checked on its own."""
        if self._float_checks is None:
            namespace = dict(self._constants)
            checks = []
            for (subject, condition, _, _), tag in zip(self._items, self._tags, strict=True):
                if tag is None or tag[0] != "float" or subject is None:
                    continue
                text = condition.replace("$", "(" + expression(subject) + ")")
                checks.append((eval(f"lambda args: {text}", namespace), tag))  # noqa: S307
            self._float_checks = checks
        failed = []
        for check, tag in self._float_checks:
            try:
                if not check(args):
                    failed.append(tag)
            except Exception:  # noqa: BLE001, S112 - a path that no longer resolves: not a float
                continue
        return failed

    def __str__(self) -> str:
        return self.text()

    def text(self, detail: bool = False) -> str:
        """One condition per line as the user would read it: objects by their source paths
        (`model[0].weight.shape == (8, 4)`), constants by name or value, and the reason the
        condition reports when it fails. Conditions on autojit's own state (the modes, a
        module's hook registries, an instance's `__dict__`) only with `detail`; a last line
        counts them otherwise."""
        lines = []
        hidden = 0
        for (subject, condition, reason, display), internal in zip(self._items,
                                                                   self._internal):
            if internal and not detail:
                hidden += 1
                continue
            parts = [self._readable(part) for part in condition.split("$")]
            if subject is not None:
                where = display if display is not None else self._readable("".join(subject))
                text = where.join(parts)
            elif display is not None:  # the condition as the user names what it reads
                text = self._readable(display)
            else:
                text = "$".join(parts)
            lines.append(f"{text}  # {reason}")
        if hidden:
            lines.append(f"# and {hidden} conditions on autojit's own state (modes, hook "
                         "registries, instance dicts): guards(detail=True) shows them")
        return "\n".join(lines)

    def _readable(self, text: str) -> str:
        return _PLACEHOLDER.sub(lambda match: self._constant_text(match.group(0)), text)

    def _constant_text(self, name: str) -> str:
        if name in self._displays:
            return self._displays[name]
        if name not in self._constants:
            return name
        value = self._constants[name]
        if isinstance(value, type):
            return value.__qualname__
        if isinstance(value, dtypes.DType):
            return f"autojit.{value.name}"
        if isinstance(value, Tensor):
            return f"<tensor {list(value.shape)}>"
        if isinstance(value, (list, tuple, set, frozenset)) and all(
                isinstance(item, _KEY_SCALARS) for item in value) or \
                isinstance(value, (*_KEY_SCALARS, np.dtype)):
            return _short(value)
        return f"<{type(value).__name__}>"

    def __len__(self) -> int:
        return len(self._items)


_PUBLIC_PRIVATE = ("_payload", "_grad", "_dtype", "_requires_grad")


def _internal(subject, display) -> bool:
    """Whether a condition on `subject` is about autojit's own state rather than the
    program's: the modes, a path whose last step is a private attribute
    (`model._forward_hooks`), an instance's `__dict__`."""
    if subject is None:
        return False
    if subject[0] == "state":
        return True
    last = subject[-1]
    if last == ".__dict__" or (display or "").endswith(".__dict__"):
        return True
    return last.startswith("._") and last[1:] not in _PUBLIC_PRIVATE


_KEY_SCALARS = (str, int, float, bool, bytes, type(None))


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def separate(written: tuple, others: tuple) -> bool:
    """No array of `written` shares memory with one of `others` (two arrays that each own
    their memory and are not the same object cannot overlap: the common case costs no
    bounds test)."""
    for array in written:
        for other in others:
            if array is other:
                return False
            if array.__class__ is np.ndarray and other.__class__ is np.ndarray:
                if (array.base is not None or other.base is not None) and \
                        np.may_share_memory(array, other):
                    return False
            elif array.__class__ is other.__class__ and array._root() is other._root():
                return False  # device arrays (cuda/array.py) over the same allocation
    return True
