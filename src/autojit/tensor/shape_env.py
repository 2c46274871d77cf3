"""ShapeEnv: the symbols of one trace, their hints, and what the trace decided on them.

tensor/symbolic_scalars.py's SymInt and SymFloat record each decision here: a guard on sizes
(`guards`), on runtime scalars read before each call (`runtime_guards`), or a *value check* on
graph values, evaluated once the graph has computed them (`value_checks`, ValueCheck). The
environment also gives a graph value its hint, its value in the traced call, when a decision
first needs it (`evaluate_leaf`, set by ir/scalars.py). See docs/notes/symbolic-scalars.md.
Nothing here imports the rest of autojit.
"""

from __future__ import annotations

import os
import re
import sys

from .symbolic_expr import EVAL_GLOBALS, LEAF_SYMBOL, RUNTIME_SYMBOL, UNKNOWN, poly_source

# A data-dependent size (`u0`), and a condition's text outside its string literals (a check on
# formatted text compares with one): u-symbols there are spelt as the graph values they are.
UNBACKED_SYMBOL = re.compile(r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|\b(u\d+)\b")


class ValueCheck:
    """A decision the trace made on graph values, checked on every run once the graph has
    computed them: `condition` (Python source over the symbols) held when traced. `kind` is
    "branch" (a comparison or bool(): the branch taken) or "value" (a value Python needed as a
    real number, or as text: the trace specialized on it, a graph break compiled as a split);
    "size" is a data-dependent size bound to a symbol (ShapeEnv.size_from_value): the range
    its trace holds for, a graph break compiled as a split too; `where` is the user's
    (filename, line)."""

    __slots__ = ("condition", "kind", "where", "names", "code", "what", "namespace")

    def __init__(self, condition: str, kind: str, where, what: str = "",
                 constants: dict | None = None):
        self.condition, self.kind, self.where, self.what = condition, kind, where, what
        self.names = set(LEAF_SYMBOL.findall(condition)) | set(RUNTIME_SYMBOL.findall(condition))
        self.code = compile(condition, "<autojit value check>", "eval")
        # What the condition names besides symbols: an array it compares with, say.
        self.namespace = {**EVAL_GLOBALS, **constants} if constants else EVAL_GLOBALS

    def holds(self, binding) -> bool:
        return bool(eval(self.code, self.namespace, binding))  # noqa: S307

    def __repr__(self) -> str:
        return f"ValueCheck({self.condition!r}, {self.kind})"


class Leaf:
    """A graph value read in Python (`t.item()`): its graph output, the Python type of its
    value (float, int or bool; "tolist" for a nested list), and its hint once computed."""

    __slots__ = ("output", "kind", "hint", "tolerance")

    def __init__(self, output: str, kind, tolerance: float = 0.0):
        self.output, self.kind, self.hint = output, kind, UNKNOWN
        # How far the compiled graph's value may lie from the traced (eager) one: kernels sum
        # in another order than NumPy, so a float read back is eager's only to rounding.
        self.tolerance = tolerance


class UnbackedSize:
    """A size the graph computes (`u0`, the count nonzero finds): `poly`, the polynomial over
    graph values it equals, `hint` its value in the traced call, and `condition`, the text of
    the check of its range, by which the segment boundary that binds it is found."""

    __slots__ = ("poly", "hint", "condition", "what")

    def __init__(self, poly: tuple, hint: int, condition: str, what: str):
        self.poly, self.hint, self.condition, self.what = poly, hint, condition, what


class _Binding:
    """The values of an env's symbols in the traced call, a graph value's computed on first
    use."""

    __slots__ = ("env",)

    def __init__(self, env):
        self.env = env

    def __getitem__(self, name):
        return self.env.hint_of(name)


class ShapeEnv:
    """The symbols of one trace, their hints, and the guards the trace relied on."""

    def __init__(self):
        self.hints: dict = {}  # size symbol name -> its value in the traced call
        self.sources: dict = {}  # size symbol name -> (argument position, dimension)
        self.guards: list = []  # Python conditions over the size symbols, in recorded order
        self._guard_set: set = set()
        self.specializations: list = []  # (symbol text, value, where) for the log
        # Runtime scalars (`f0`, `i0`, ...): Python floats and ints the function reads that
        # change from call to call, read again before every call rather than baked in.
        # name -> (hint, source); conditions over them are kept apart from the size guards.
        self.runtime: dict = {}
        self.runtime_guards: list = []
        # Graph values read in Python (`g0`, ...): name -> Leaf, and the decisions on them.
        self.leaves: dict = {}
        self.value_checks: list[ValueCheck] = []
        # Sizes the graph computes (`u0`, ...): name -> UnbackedSize. Set `unbacked_sizes`
        # False to specialize on them instead (dynamic=False).
        self.unbacked: dict = {}
        self.unbacked_sizes = True
        self.evaluate_leaf = None  # name -> its value in the traced call (ir/trace.py)
        self.on_value_check = None  # called with each ValueCheck as it is recorded
        self.binding = _Binding(self)

    def create_runtime_float(self, hint: float, source):
        """A symbol for a float read afresh on every call (compiler/tracing.py)."""
        from .symbolic_scalars import SymFloat

        name = f"f{sum(1 for key in self.runtime if key[0] == 'f')}"
        self.runtime[name] = (hint, source)
        return SymFloat(("runtime", name), hint, self)

    def create_runtime_int(self, hint: int, source):
        """A symbol for an int read afresh on every call (a step counter, an int argument)."""
        from .symbolic_scalars import SymInt

        name = f"i{sum(1 for key in self.runtime if key[0] == 'i')}"
        self.runtime[name] = (hint, source)
        return SymInt((((name,), 1),), hint, self)

    def create_leaf(self, output: str, kind, tolerance: float = 0.0):
        """A symbol for the graph output `output` read as a Python number of type `kind`."""
        name = f"g{len(self.leaves)}"
        self.leaves[name] = Leaf(output, kind, tolerance)
        from .symbolic_scalars import SymFloat, SymInt

        if kind is float:
            return SymFloat(("runtime", name), UNKNOWN, self)
        if kind in (int, bool):
            return SymInt((((name,), 1),), UNKNOWN, self)
        return None  # a nested list: tensor/traced_scalar.py's TracedList

    def create_symbol(self, hint: int, source: tuple):
        from .symbolic_scalars import SymInt

        name = f"s{len(self.hints)}"
        self.hints[name] = hint
        self.sources[name] = source
        return SymInt((((name,), 1),), hint, self)

    def size_from_value(self, value, why: str):
        """A size Python needs from a graph value (the count `nonzero` or a boolean mask
        finds, a SymInt over `g` symbols): a fresh size symbol `u0` that later ops trace with,
        bound when a run has computed the value (compiler/unbacked_sizes.py), with a value
        check that it is at least 2, where broadcasting and empty tensors behave as for any
        larger size. A value of 0 or 1 in the traced call, or one over other symbols,
        specializes instead (`g0 == 0`, checked on every run), as every value does with
        `unbacked_sizes` False. See docs/notes/segments.md."""
        from .symbolic_scalars import SymInt

        if not isinstance(value, SymInt):
            return value
        names = value.names()
        hint = value.hint
        if not self.unbacked_sizes or hint < 2 or not names or \
                not all(LEAF_SYMBOL.fullmatch(name) for name in names):
            return value.specialize(why)
        for name, size in self.unbacked.items():
            if size.poly == value.poly:  # the same count again: the same symbol
                return SymInt((((name,), 1),), hint, self)
        name = f"u{len(self.unbacked)}"
        condition = f"{poly_source(value.poly)} >= 2"
        self.unbacked[name] = UnbackedSize(value.poly, hint, condition, why)
        self.record(condition, "size", why)
        return SymInt((((name,), 1),), hint, self)

    def size_hints(self) -> dict:
        """The traced call's values of every size symbol: dynamic dimensions and the sizes
        the graph computes."""
        if not self.unbacked:
            return self.hints
        return {**self.hints, **{name: size.hint for name, size in self.unbacked.items()}}

    def hint_of(self, name: str):
        if name in self.hints:
            return self.hints[name]
        if name in self.unbacked:
            return self.unbacked[name].hint
        if name in self.runtime:
            return self.runtime[name][0]
        leaf = self.leaves[name]
        if leaf.hint is UNKNOWN:
            leaf.hint = self.evaluate_leaf(name)
        return leaf.hint

    def tolerance(self, names) -> float:
        """The rounding a check of a value made of the graph values `names` allows (see
        Leaf.tolerance): the loosest of theirs."""
        return max((self.leaves[name].tolerance for name in names if name in self.leaves),
                   default=0.0)

    def record(self, condition: str, kind: str = "branch", what: str = "",
               constants: dict | None = None) -> None:
        if self.unbacked and "u" in condition:
            if _within_range(condition):
                return  # what the size's range check (at least 2) decides already
            # A decision on a size the graph computes is one on the graph values it is.
            condition = UNBACKED_SYMBOL.sub(self._unbacked_source, condition)
        if condition in self._guard_set:
            return
        self._guard_set.add(condition)
        if LEAF_SYMBOL.search(condition):
            check = ValueCheck(condition, kind, _user_line(), what, constants)
            self.value_checks.append(check)
            if self.on_value_check is not None:
                self.on_value_check(check)
        elif RUNTIME_SYMBOL.search(condition):
            self.runtime_guards.append(condition)
        else:
            self.guards.append(condition)

    def _unbacked_source(self, match) -> str:
        if match.group(2) is None:  # a string literal
            return match.group(0)
        return f"({poly_source(self.unbacked[match.group(2)].poly)})"

    def dims_of(self, position: int) -> set:
        """The dimensions of argument `position` that have a symbol."""
        return {dim for source_position, dim in self.sources.values()
                if source_position == position}

    def check(self, binding: dict) -> bool:
        """Whether every recorded size guard holds for `binding` (symbol name -> int)."""
        namespace = dict(binding)
        return all(eval(condition, EVAL_GLOBALS, namespace)  # noqa: S307
                   for condition in self.guards)


_COMPARED = re.compile(r"^(?:(\d+)\*)?u\d+ (!=|>|>=) (-?\d+)$")


def _within_range(condition: str) -> bool:
    """Whether a comparison of a size the graph computes (or a multiple of it) with a
    constant holds for every size its range check admits (2 and more): `u0 != 1`, `u0 > 0`,
    and a mean's divisor `16*u0 != 1`, which the passes compare with 1."""
    match = _COMPARED.match(condition)
    if match is None:
        return False
    factor = int(match.group(1) or 1)
    operation, constant = match.group(2), int(match.group(3))
    if operation == "!=":
        return constant < 2 * factor or constant % factor != 0
    return constant <= 2 * factor if operation == ">=" else constant < 2 * factor


def _user_line():
    """(filename, line) of the innermost frame outside autojit, or None."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)
