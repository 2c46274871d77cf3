"""The schemas of autojit.library's custom operators: the text torch writes an operator's
signature in (`nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor`), parsed into
its arguments (Schema, Argument: type, alias and mutation, optional, default), and written
from a typed Python function's annotations (`infer_schema`, torch.library.infer_schema, which
library.py re-exports with torch's name).

library.py defines operators from these (Library.define, custom_op) and binds a call's
arguments by them; nothing here dispatches or runs an operator.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
import typing

from .tensor import dtypes
from .tensor.device import device as Device
from .tensor.tensor import Tensor

__all__ = ["Argument", "Schema", "infer_schema"]

_ARGUMENT = re.compile(r"^(?P<type>[\w\[\]?]+)(?P<alias>\(\w+!?\))?(?P<optional>\?)?\s+"
                       r"(?P<name>\w+)(?:\s*=\s*(?P<default>.+))?$")


class Argument:
    """One argument of a schema: its type ("Tensor", "SymInt[]", ...), name, default (the
    schema's text, or None), whether it is keyword-only and whether the op writes it."""

    def __init__(self, type_: str, name: str, default, keyword: bool, mutated: bool):
        self.type, self.name, self.default = type_, name, default
        self.keyword, self.mutated = keyword, mutated

    def __str__(self) -> str:
        shown = self.type
        if self.mutated:
            base, optional = (shown[:-1], "?") if shown.endswith("?") else (shown, "")
            shown = f"{base}({self.alias}!){optional}"
        return f"{shown} {self.name}" + ("" if self.default is None else f"={self.default}")


def _split(text: str) -> list:
    """`text` split at its top-level commas."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


class Schema:
    """A parsed operator schema: `name.overload(arguments) -> returns`."""

    def __init__(self, text: str):
        match = re.fullmatch(r"\s*([\w:]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*", text)
        if match is None:
            raise RuntimeError(f"Invalid schema: {text!r}: expected name(arguments) -> returns")
        self.name, self.overload = match.group(1), match.group(2) or "default"
        self.arguments, keyword = [], False
        for part in _split(match.group(3)):
            if part == "*":
                keyword = True
                continue
            found = _ARGUMENT.match(part)
            if found is None:
                raise RuntimeError(f"Invalid argument {part!r} in schema {text!r}")
            type_ = found.group("type") + ("?" if found.group("optional") else "")
            alias = found.group("alias")
            argument = Argument(type_, found.group("name"), found.group("default"), keyword,
                                alias is not None and alias.endswith("!)"))
            argument.alias = alias[1:-2] if argument.mutated else None
            self.arguments.append(argument)
        returns = match.group(4)
        self.returns = _split(returns[1:-1]) if returns.startswith("(") else [returns]

    def text(self, qualified: str | None = None) -> str:
        returns = self.returns[0] if len(self.returns) == 1 else \
            f"({', '.join(self.returns)})"
        arguments, keyword = [], False
        for argument in self.arguments:
            if argument.keyword and not keyword:
                arguments.append("*")
                keyword = True
            arguments.append(str(argument))
        name = qualified or self.name
        overload = "" if self.overload == "default" else f".{self.overload}"
        return f"{name}{overload}({', '.join(arguments)}) -> {returns}"

    def mutated(self) -> list:
        return [index for index, argument in enumerate(self.arguments) if argument.mutated]


# Python annotations and the schema types torch infers from them.
_TYPES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str",
          dtypes.DType: "ScalarType", Device: "Device"}


def _schema_type(annotation, name: str, fail):
    origin, parts = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        others = [part for part in parts if part is not type(None)]
        if len(others) == 1 and len(parts) == 2:
            inner = _schema_type(others[0], name, fail)
            if not inner.endswith("?"):
                return inner + "?"
        if set(parts) == {int, float, bool} or set(parts) == {int, float, bool, type(None)}:
            return "Scalar" + ("?" if type(None) in parts else "")
        fail(f"Parameter {name} has unsupported type {annotation}.")
    if origin in (list, collections.abc.Sequence, typing.List, typing.Sequence):  # noqa: UP006
        if len(parts) == 1:
            item = _schema_type(parts[0], name, fail)
            if item in ("Tensor", "Tensor?", "SymInt", "float", "bool", "Scalar"):
                return f"{item}[]"
        fail(f"Parameter {name} has unsupported type {annotation}.")
    found = _TYPES.get(annotation)
    if found is None:
        fail(f"Parameter {name} has unsupported type {annotation}.")
    return found


def _default_text(value, name: str, fail) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dtypes.DType):
        return value.name
    fail(f"Parameter {name} has an unsupported default value type {type(value)}.")
    return ""


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None) -> str:
    """The schema of a function from its annotations, as torch infers it: `(Tensor x, SymInt n)
    -> Tensor`; the arguments named in `mutates_args` (or all, "unknown") are written."""
    signature = inspect.signature(prototype_function)

    def fail(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {signature})")

    try:
        hints = typing.get_type_hints(prototype_function)
    except (NameError, TypeError):  # an annotation naming a local: read as written
        hints = {}
    arguments, keyword = [], False
    for position, (name, parameter) in enumerate(signature.parameters.items()):
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            fail("Parameters of type *args and **kwargs are not supported.")
        if parameter.annotation is inspect.Parameter.empty:
            fail(f"Parameter {name} must have a type annotation.")
        type_ = _schema_type(hints.get(name, parameter.annotation), name, fail)
        if parameter.kind == parameter.KEYWORD_ONLY and not keyword:
            arguments.append("*")
            keyword = True
        mutated = mutates_args == "unknown" or name in (mutates_args or ())
        if mutated and not type_.startswith("Tensor"):
            fail(f"Parameter {name} is in mutable_args but only Tensors or collections of "
                 "Tensors can be mutated")
        if mutated:  # aliased as a<its position>, as torch numbers them
            base, optional = (type_[:-1], "?") if type_.endswith("?") else (type_, "")
            type_ = f"{base}(a{position}!){optional}"
        default = "" if parameter.default is inspect.Parameter.empty else \
            "=" + _default_text(parameter.default, name, fail)
        arguments.append(f"{type_} {name}{default}")
    if mutates_args not in ("unknown",) and mutates_args is not None:
        unknown = set(mutates_args) - set(signature.parameters)
        if unknown:
            fail(f"{sorted(unknown)} in mutates_args were not found in the custom op's "
                 "signature.")
    returned = hints.get("return", signature.return_annotation)
    if returned is inspect.Parameter.empty:
        fail("No return type annotation was provided. Please add one.")
    if returned is None or returned is type(None):
        returns = "()"
    elif typing.get_origin(returned) is tuple:
        items = [_schema_type(part, "return", fail) for part in typing.get_args(returned)]
        returns = f"({', '.join(items)})"
    else:
        returns = _schema_type(returned, "return", fail)
    name = op_name or ""
    return f"{name}({', '.join(arguments)}) -> {returns}"
