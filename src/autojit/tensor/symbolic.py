"""Symbolic sizes for dynamic shapes: SymInt, SymFloat and the ShapeEnv that guards them.

A compiled function traced with dynamic dimensions (compiler/api.py, `dynamic=True` or automatically
after a dimension took a second size) gives each such dimension of an argument a symbol
(`s0`, `s1`, ...). Shapes in the traced graph then hold SymInts: polynomials over the symbols,
each carrying its `hint`, the value it has in the call being traced. Arithmetic on sizes
(`x.shape[0] * 3`, `x.numel() // 2`, `1.0 / n`) stays symbolic; anything that needs a decision
(a comparison, `bool`) is decided with the hints and recorded in the ShapeEnv as a guard (a
Python condition on the symbols), and anything that needs a real int (`int(n)`, `range(n)`,
`np.zeros(n)`) specializes: it records the guard `n == hint` and returns the hint. So a trace is
valid for every binding of the symbols that satisfies its guards, and for no other.

compiler/api.py turns the recorded guards into call-time checks (compiler/guards.py), and
ir/instantiate.py substitutes a concrete binding into the traced graph before optimizing and
compiling it for those sizes. Nothing here imports the rest of autojit.
"""

from __future__ import annotations

import numbers
import operator
import os
import re
import sys

# A polynomial is a sorted tuple of (monomial, coefficient) with nonzero coefficients; a
# monomial is a sorted tuple of atoms (repeated for powers); an atom is a symbol name, or
# (operation, polynomial, polynomial) for what polynomials cannot express (floor division,
# modulo, min, max).


def _poly(terms: dict) -> tuple:
    return tuple(sorted(((monomial, coefficient) for monomial, coefficient in terms.items()
                         if coefficient), key=repr))


def _constant_poly(value: int) -> tuple:
    return _poly({(): value})


def _add(left: tuple, right: tuple, sign: int = 1) -> tuple:
    terms = dict(left)
    for monomial, coefficient in right:
        terms[monomial] = terms.get(monomial, 0) + sign * coefficient
    return _poly(terms)


def _multiply(left: tuple, right: tuple) -> tuple:
    terms: dict = {}
    for left_monomial, left_coefficient in left:
        for right_monomial, right_coefficient in right:
            monomial = tuple(sorted(left_monomial + right_monomial, key=repr))
            terms[monomial] = terms.get(monomial, 0) + left_coefficient * right_coefficient
    return _poly(terms)


def _constant_of(poly: tuple):
    """The value of a constant polynomial, else None."""
    if not poly:
        return 0
    if len(poly) == 1 and poly[0][0] == ():
        return poly[0][1]
    return None


def _evaluate_atom(atom, binding: dict) -> int:
    if isinstance(atom, str):
        return binding[atom]
    operation, left, right = atom
    return _ATOM_OPERATIONS[operation](evaluate_poly(left, binding), evaluate_poly(right, binding))


_ATOM_OPERATIONS = {"floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max}


def evaluate_poly(poly: tuple, binding: dict) -> int:
    total = 0
    for monomial, coefficient in poly:
        term = coefficient
        for atom in monomial:
            term *= _evaluate_atom(atom, binding)
        total += term
    return total


def _atom_source(atom, symbol_source) -> str:
    if isinstance(atom, str):
        return symbol_source(atom)
    operation, left, right = atom
    left_text, right_text = poly_source(left, symbol_source), poly_source(right, symbol_source)
    if operation == "floordiv":
        return f"(({left_text}) // ({right_text}))"
    if operation == "mod":
        return f"(({left_text}) % ({right_text}))"
    return f"{operation}({left_text}, {right_text})"


def poly_source(poly: tuple, symbol_source=str) -> str:
    """The polynomial as a Python expression; `symbol_source(name)` spells each symbol."""
    if not poly:
        return "0"
    terms = []
    for monomial, coefficient in poly:
        factors = [_atom_source(atom, symbol_source) for atom in monomial]
        if coefficient != 1 or not factors:
            factors.insert(0, str(coefficient))
        terms.append("*".join(factors))
    return " + ".join(terms).replace("+ -", "- ")


def _as_poly(value):
    if isinstance(value, SymInt):
        return value.poly
    if isinstance(value, int) and not isinstance(value, bool):
        return _constant_poly(value)
    if isinstance(value, bool):
        return _constant_poly(int(value))
    return None


def _hint(value):
    return value.hint if isinstance(value, (SymInt, SymFloat)) else value


_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                ">": operator.gt, ">=": operator.ge}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


class ShapeEnv:
    """The symbols of one trace, their hints, and the guards the trace relied on."""

    def __init__(self):
        self.hints: dict = {}  # symbol name -> its value in the traced call
        self.sources: dict = {}  # symbol name -> (argument position, dimension)
        self.guards: list = []  # Python conditions over the symbol names, in recorded order
        self._guard_set: set = set()
        self.specializations: list = []  # (symbol text, value, where) for the log
        # Runtime floats (`f0`, `f1`, ...): Python floats the function reads that change from
        # call to call (a learning rate a scheduler sets), read again on every call and fed
        # to the graph as inputs rather than baked in. name -> (hint, source); conditions
        # over them are kept apart from the size guards.
        self.runtime: dict = {}
        self.runtime_guards: list = []

    def create_runtime_float(self, hint: float, source) -> SymFloat:
        """A symbol for a float read afresh on every call (compiler/tracing.py)."""
        name = f"f{len(self.runtime)}"
        self.runtime[name] = (hint, source)
        return SymFloat(("runtime", name), hint, self)

    def create_symbol(self, hint: int, source: tuple) -> SymInt:
        name = f"s{len(self.hints)}"
        self.hints[name] = hint
        self.sources[name] = source
        return SymInt(((( name,), 1),), hint, self)

    def record(self, condition: str) -> None:
        if condition not in self._guard_set:
            self._guard_set.add(condition)
            if self.runtime and _RUNTIME_SYMBOL.search(condition):
                self.runtime_guards.append(condition)
            else:
                self.guards.append(condition)

    def dims_of(self, position: int) -> set:
        """The dimensions of argument `position` that have a symbol."""
        return {dim for source_position, dim in self.sources.values()
                if source_position == position}

    def check(self, binding: dict) -> bool:
        """Whether every recorded guard holds for `binding` (symbol name -> int)."""
        namespace = dict(binding)
        return all(eval(condition, {"__builtins__": {"min": min, "max": max}},  # noqa: S307
                        namespace) for condition in self.guards)


class _Comparisons:
    """The six comparisons through `_compare(symbol, other)`, which decides and records."""

    __slots__ = ()

    def __eq__(self, other):
        return self._compare("==", other)

    def __ne__(self, other):
        return self._compare("!=", other)

    def __lt__(self, other):
        return self._compare("<", other)

    def __le__(self, other):
        return self._compare("<=", other)

    def __gt__(self, other):
        return self._compare(">", other)

    def __ge__(self, other):
        return self._compare(">=", other)


class SymInt(_Comparisons):
    """A symbolic integer size: a polynomial over the trace's symbols, with its hint."""

    __slots__ = ("poly", "hint", "env")

    def __init__(self, poly: tuple, hint: int, env: ShapeEnv):
        self.poly, self.hint, self.env = poly, hint, env

    # ---- building -------------------------------------------------------------------------------

    def _make(self, poly: tuple, hint):
        constant = _constant_of(poly)
        return constant if constant is not None else SymInt(poly, hint, self.env)

    def _atom(self, operation: str, other, hint):
        other_poly = _as_poly(other)
        atom = (operation, self.poly, other_poly)
        return self._make((((atom,), 1),), hint)

    def __add__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("+", self, other)
        return self._make(_add(self.poly, other_poly), self.hint + _hint(other))

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("-", self, other)
        return self._make(_add(self.poly, other_poly, -1), self.hint - _hint(other))

    def __rsub__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("-", other, self)
        return self._make(_add(other_poly, self.poly, -1), _hint(other) - self.hint)

    def __mul__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("*", self, other)
        return self._make(_multiply(self.poly, other_poly), self.hint * _hint(other))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __neg__(self):
        return self * -1

    def __pos__(self):
        return self

    def __floordiv__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("//", self, other)
        divisor = _constant_of(other_poly)
        hint = self.hint // _hint(other)
        if divisor and all(coefficient % divisor == 0 for _, coefficient in self.poly):
            return self._make(_poly({monomial: coefficient // divisor
                                     for monomial, coefficient in self.poly}), hint)
        return self._atom("floordiv", other, hint)

    def __rfloordiv__(self, other):
        return _sym_int_of(other, self.env).__floordiv__(self)

    def __mod__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("%", self, other)
        divisor = _constant_of(other_poly)
        hint = self.hint % _hint(other)
        if divisor and all(coefficient % divisor == 0 for monomial, coefficient in self.poly
                           if monomial):
            return (_constant_of(tuple(term for term in self.poly if not term[0])) or 0) % \
                divisor
        return self._atom("mod", other, hint)

    def __rmod__(self, other):
        return _sym_int_of(other, self.env).__mod__(self)

    def __truediv__(self, other):
        return _float_operation("/", self, other)

    def __rtruediv__(self, other):
        return _float_operation("/", other, self)

    def __pow__(self, exponent):
        if isinstance(exponent, int) and not isinstance(exponent, bool) and exponent >= 0:
            result = 1
            for _ in range(exponent):
                result = result * self
            return result
        return _float_operation("**", self, exponent)

    def __rpow__(self, base):
        return _float_operation("**", base, self)

    # ---- decisions: recorded as guards ---------------------------------------------------------

    def _compare(self, symbol: str, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            if isinstance(other, (float, SymFloat)):
                return _COMPARISONS[symbol](float(self), _hint(other))
            return NotImplemented
        result = _COMPARISONS[symbol](self.hint, _hint(other))
        difference = _constant_of(_add(self.poly, other_poly, -1))
        if difference is None:  # not decided by the expressions alone
            recorded = symbol if result else _NEGATED[symbol]
            self.env.record(f"{poly_source(self.poly)} {recorded} {poly_source(other_poly)}")
        return result

    def __bool__(self):
        return self._compare("!=", 0)

    def __hash__(self):
        return hash(("SymInt", self.poly))

    # ---- specializing: a real int was needed -----------------------------------------------------

    def specialize(self, why: str = "") -> int:
        self.env.record(f"{poly_source(self.poly)} == {self.hint}")
        self.env.specializations.append((str(self), self.hint, f"{why} at {_caller()}"))
        return self.hint

    def __index__(self):
        return self.specialize("a Python int was needed")

    def __int__(self):
        return self.specialize("int() was called")

    def __float__(self):
        return float(self.specialize("float() was called"))

    def __abs__(self):
        return self if self >= 0 else -self

    def evaluate(self, binding: dict) -> int:
        return evaluate_poly(self.poly, binding)

    def __str__(self):
        return poly_source(self.poly)

    def __repr__(self):
        return poly_source(self.poly)


numbers.Integral.register(SymInt)


def _caller() -> str:
    """Where a size was specialized: the innermost frame outside this module, and the user's
    line when that frame is inside autojit."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return "an unknown line"
    inner = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    if frame is None or f"{frame.f_code.co_filename}:{frame.f_lineno}" == inner:
        return inner
    return f"{inner} (from {frame.f_code.co_filename}:{frame.f_lineno})"


def _sym_int_of(value, env: ShapeEnv) -> SymInt:
    return SymInt(_as_poly(value), value, env)


class SymFloat(_Comparisons):
    """A float computed from sizes (`1.0 / n`, `n / 2`): an expression tree with its hint.

    Its evaluation repeats the Python float arithmetic of the traced call in the same order,
    so an instantiated literal equals what eager would have computed.
    """

    __slots__ = ("tree", "hint", "env")

    def __init__(self, tree: tuple, hint: float, env: ShapeEnv):
        self.tree, self.hint, self.env = tree, hint, env

    def __add__(self, other):
        return _float_operation("+", self, other)

    def __radd__(self, other):
        return _float_operation("+", other, self)

    def __sub__(self, other):
        return _float_operation("-", self, other)

    def __rsub__(self, other):
        return _float_operation("-", other, self)

    def __mul__(self, other):
        return _float_operation("*", self, other)

    def __rmul__(self, other):
        return _float_operation("*", other, self)

    def __truediv__(self, other):
        return _float_operation("/", self, other)

    def __rtruediv__(self, other):
        return _float_operation("/", other, self)

    def __pow__(self, other):
        return _float_operation("**", self, other)

    def __rpow__(self, other):
        return _float_operation("**", other, self)

    def __neg__(self):
        return _float_operation("*", self, -1.0)

    def _compare(self, symbol, other):
        result = _COMPARISONS[symbol](self.hint, _hint(other))
        recorded = symbol if result else _NEGATED[symbol]
        self.env.record(f"{tree_source(self.tree)} {recorded} {tree_source(_tree(other))}")
        return result

    def __bool__(self):
        return self._compare("!=", 0.0)

    def __hash__(self):
        return hash(("SymFloat", self.tree))

    def __float__(self):
        self.env.record(f"{tree_source(self.tree)} == {self.hint!r}")
        self.env.specializations.append((tree_source(self.tree), self.hint,
                                         f"float() was called at {_caller()}"))
        return self.hint

    def evaluate(self, binding: dict) -> float:
        return evaluate_tree(self.tree, binding)

    def __str__(self):
        return tree_source(self.tree)

    def __repr__(self):
        return tree_source(self.tree)


numbers.Real.register(SymFloat)

_FLOAT_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                     "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
                     "**": operator.pow}


def _tree(value) -> tuple:
    if isinstance(value, SymFloat):
        return value.tree
    if isinstance(value, SymInt):
        return ("int", value.poly)
    return ("constant", value)


def _float_operation(symbol: str, left, right):
    if not isinstance(_hint(left), (int, float)) or not isinstance(_hint(right), (int, float)):
        return NotImplemented
    env = next(value.env for value in (left, right) if isinstance(value, (SymInt, SymFloat)))
    hint = _FLOAT_OPERATIONS[symbol](_hint(left), _hint(right))
    return SymFloat((symbol, _tree(left), _tree(right)), hint, env)


def evaluate_tree(tree: tuple, binding: dict):
    kind = tree[0]
    if kind == "constant":
        return tree[1]
    if kind == "runtime":
        return binding[tree[1]]
    if kind == "int":
        return evaluate_poly(tree[1], binding)
    return _FLOAT_OPERATIONS[kind](evaluate_tree(tree[1], binding),
                                   evaluate_tree(tree[2], binding))


def tree_source(tree: tuple) -> str:
    kind = tree[0]
    if kind == "constant":
        return repr(tree[1])
    if kind == "runtime":
        return tree[1]
    if kind == "int":
        return f"({poly_source(tree[1])})"
    return f"({tree_source(tree[1])} {kind} {tree_source(tree[2])})"


_RUNTIME_SYMBOL = re.compile(r"\bf\d+\b")


def is_runtime(value) -> bool:
    """Whether `value` is a SymFloat computed from a runtime float (read on every call): such a
    value becomes a graph value when it reaches an op, never a literal."""
    return isinstance(value, SymFloat) and _has_runtime(value.tree)


def _has_runtime(tree: tuple) -> bool:
    kind = tree[0]
    if kind == "runtime":
        return True
    if kind in ("constant", "int"):
        return False
    return _has_runtime(tree[1]) or _has_runtime(tree[2])


def is_symbolic(value) -> bool:
    return isinstance(value, (SymInt, SymFloat))


def substitute(value, binding: dict):
    """`value` with every SymInt and SymFloat in it (through tuples, lists, dicts and slices)
    replaced by its value under `binding`."""
    if isinstance(value, (SymInt, SymFloat)):
        return value.evaluate(binding)
    if isinstance(value, tuple):
        items = tuple(substitute(item, binding) for item in value)
        return items if any(a is not b for a, b in zip(items, value)) else value
    if isinstance(value, list):
        return [substitute(item, binding) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, binding) for key, item in value.items()}
    if isinstance(value, slice):
        return slice(substitute(value.start, binding), substitute(value.stop, binding),
                     substitute(value.step, binding))
    return value


def contains_symbolic(value) -> bool:
    if isinstance(value, (SymInt, SymFloat)):
        return True
    if isinstance(value, (tuple, list)):
        return any(contains_symbolic(item) for item in value)
    if isinstance(value, dict):
        return any(contains_symbolic(item) for item in value.values())
    if isinstance(value, slice):
        return any(contains_symbolic(item) for item in (value.start, value.stop, value.step))
    return False


def as_size(value):
    """An extent as given by a user or a shape: an int (NumPy ints and other integer types
    converted), or a SymInt left symbolic."""
    return value if isinstance(value, SymInt) else int(value)


def same_shape(first, second) -> bool:
    """Whether two shapes are equal, comparing lengths first: a tuple comparison would compare
    a symbolic extent with an unrelated one of a longer shape, and guard on the outcome."""
    return len(first) == len(second) and all(a == b for a, b in zip(first, second))


def size_product(extents) -> int:
    """The product of extents, symbolic if any of them is."""
    total = 1
    for extent in extents:
        total = total * extent
    return total
