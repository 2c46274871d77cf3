"""The symbolic scalars: SymInt (a polynomial over a trace's symbols) and SymFloat (a tree of
Python float arithmetic), each with its hint, the value in the call being traced.

Arithmetic stays symbolic; a decision (a comparison, `bool`) is made with the hints and recorded
in the scalar's environment (a ShapeEnv, shape_env.py, which makes the symbols); what needs a
real Python number specializes. symbolic.py describes the whole and re-exports these.
"""

from __future__ import annotations

import math
import numbers
import operator
import os
import sys

from .symbolic_expr import (
    FLOAT_OPERATIONS,
    UNKNOWN,
    add_poly,
    constant_of,
    constant_poly,
    evaluate_poly,
    evaluate_tree,
    is_value_name,
    make_poly,
    multiply_poly,
    poly_names,
    poly_source,
    tree_names,
    tree_source,
)
from .symbolic_text import PRINTING, _format, _from_autojit, user_text


def _as_poly(value):
    if isinstance(value, SymInt):
        return value.poly
    if isinstance(value, bool):
        return constant_poly(int(value))
    if isinstance(value, int):
        return constant_poly(value)
    return None


def _hint(value):
    return value.hint if isinstance(value, (SymInt, SymFloat)) else value


def _raw(value):
    """The hint if known (UNKNOWN for a graph value not evaluated yet), or the number."""
    return value._hint if isinstance(value, (SymInt, SymFloat)) else value


def _combine(function, left, right):
    """function(left hint, right hint), or UNKNOWN while either is."""
    left, right = _raw(left), _raw(right)
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    return function(left, right)


_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                ">": operator.gt, ">=": operator.ge}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


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

    @property
    def hint(self):
        hint = self._hint
        if hint is UNKNOWN:
            hint = self._hint = self.evaluate(self.env.binding)
        return hint

    def specialize_text(self, spec: str) -> str:
        """The text of this call's value formatted with `spec`, which Python then decides on:
        recorded as a check on the text (a graph value's) or a guard (a runtime scalar's)."""
        text = format(self.hint, spec)
        source = tree_source(_tree(self))
        self.env.record(f"format({source}, {spec!r}) == {text!r}", "value", "formatting")
        return text

    @property
    def is_value(self) -> bool:
        """Whether it is read at run time (a runtime scalar or a graph value): such a scalar
        becomes a graph value when it reaches an op, never a literal."""
        value = self._value
        if value is None:
            value = self._value = any(is_value_name(name) for name in self.names())
        return value


class SymInt(_Comparisons):
    """A symbolic integer: a polynomial over the trace's symbols, with its hint."""

    __slots__ = ("poly", "_hint", "env", "_value")

    def __init__(self, poly: tuple, hint, env):
        self.poly, self._hint, self.env, self._value = poly, hint, env, None

    @property
    def __class__(self):
        # A value read at run time is an int to `isinstance` (as `t.item()` is in eager);
        # type() still tells it apart.
        return int if self.is_value else SymInt

    def names(self) -> set:
        return poly_names(self.poly)

    # ---- building -------------------------------------------------------------------------------

    def _make(self, poly: tuple, hint):
        constant = constant_of(poly)
        return constant if constant is not None else SymInt(poly, hint, self.env)

    def _atom(self, operation: str, other, hint):
        other_poly = _as_poly(other)
        atom = (operation, self.poly, other_poly)
        return self._make((((atom,), 1),), hint)

    def __add__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("+", self, other)
        return self._make(add_poly(self.poly, other_poly), _combine(operator.add, self, other))

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("-", self, other)
        return self._make(add_poly(self.poly, other_poly, -1),
                          _combine(operator.sub, self, other))

    def __rsub__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("-", other, self)
        return self._make(add_poly(other_poly, self.poly, -1),
                          _combine(operator.sub, other, self))

    def __mul__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("*", self, other)
        return self._make(multiply_poly(self.poly, other_poly),
                          _combine(operator.mul, self, other))

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
        divisor = constant_of(other_poly)
        hint = _combine(operator.floordiv, self, other)
        if divisor and all(coefficient % divisor == 0 for _, coefficient in self.poly):
            return self._make(make_poly({monomial: coefficient // divisor
                                         for monomial, coefficient in self.poly}), hint)
        return self._atom("floordiv", other, hint)

    def __rfloordiv__(self, other):
        return _sym_int_of(other, self.env).__floordiv__(self)

    def __mod__(self, other):
        other_poly = _as_poly(other)
        if other_poly is None:
            return _float_operation("%", self, other)
        divisor = constant_of(other_poly)
        hint = _combine(operator.mod, self, other)
        if divisor and all(coefficient % divisor == 0 for monomial, coefficient in self.poly
                           if monomial):
            return (constant_of(tuple(term for term in self.poly if not term[0])) or 0) % \
                divisor
        return self._atom("mod", other, hint)

    def __rmod__(self, other):
        return _sym_int_of(other, self.env).__mod__(self)

    def __truediv__(self, other):
        return _float_operation("/", self, other)

    def __rtruediv__(self, other):
        return _float_operation("/", other, self)

    def __pow__(self, exponent):
        if isinstance(exponent, int) and not isinstance(exponent, (bool, SymInt)) and \
                exponent >= 0:
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
                return SymFloat(("int", self.poly), self._hint, self.env)._compare(symbol, other)
            return NotImplemented
        result = _COMPARISONS[symbol](self.hint, _hint(other))
        difference = constant_of(add_poly(self.poly, other_poly, -1))
        if difference is None:  # not decided by the expressions alone
            recorded = symbol if result else _NEGATED[symbol]
            self.env.record(f"{poly_source(self.poly)} {recorded} {poly_source(other_poly)}")
        return result

    def __bool__(self):
        return self._compare("!=", 0)

    def __hash__(self):
        if self.is_value:  # a dict key or set member: its value decides
            return hash(self.specialize("hash() was called"))
        return hash(("SymInt", self.poly))

    # ---- specializing: a real int was needed -----------------------------------------------------

    def specialize(self, why: str = "") -> int:
        hint = self.hint
        self.env.record(f"{poly_source(self.poly)} == {hint!r}", "value", why)
        self.env.specializations.append((poly_source(self.poly), hint, f"{why} at {_caller()}"))
        return hint

    def __index__(self):
        return self.specialize("a Python int was needed")

    def __int__(self):
        return self.specialize("int() was called")

    def __float__(self):
        return float(self.specialize("float() was called"))

    def __abs__(self):
        return self if self >= 0 else -self

    def __round__(self, ndigits=None):
        return self if ndigits is None else _call("round", self, ndigits)

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __trunc__

    def __format__(self, spec: str) -> str:
        if PRINTING[0]:
            return user_text(self, spec)
        if not self.is_value and _from_autojit():
            return format(poly_source(self.poly), spec)
        return _format(self, spec)

    def evaluate(self, binding) -> int:
        return evaluate_poly(self.poly, binding)

    def __str__(self):
        if PRINTING[0]:
            return user_text(self)
        return poly_source(self.poly) if not self.is_value and _from_autojit() else \
            _format(self, "")

    __repr__ = __str__


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


def _sym_int_of(value, env) -> SymInt:
    return SymInt(_as_poly(value), value, env)


class SymFloat(_Comparisons):
    """A symbolic float: an expression tree with its hint.

    Its evaluation repeats the Python float arithmetic of the traced call in the same order,
    so an instantiated literal equals what eager would have computed.
    """

    __slots__ = ("tree", "_hint", "env", "_value")

    def __init__(self, tree: tuple, hint, env):
        self.tree, self._hint, self.env, self._value = tree, hint, env, None

    @property
    def __class__(self):
        return float if self.is_value else SymFloat

    def names(self) -> set:
        return tree_names(self.tree)

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

    def __floordiv__(self, other):
        return _float_operation("//", self, other)

    def __rfloordiv__(self, other):
        return _float_operation("//", other, self)

    def __mod__(self, other):
        return _float_operation("%", self, other)

    def __rmod__(self, other):
        return _float_operation("%", other, self)

    def __pow__(self, other):
        return _float_operation("**", self, other)

    def __rpow__(self, other):
        return _float_operation("**", other, self)

    def __neg__(self):
        return _float_operation("*", self, -1.0)

    def __pos__(self):
        return self

    def __abs__(self):
        return _call("abs", self)

    def __round__(self, ndigits=None):
        if ndigits is None:
            return self._to_int("round", "round() was called")
        return _call("round", self, ndigits)

    def _to_int(self, function: str, why: str) -> int:
        """An int made from the value (`int(x)`, `round(x)`, `math.floor(x)`): specialized on
        that int, exactly, so that a value within rounding of the traced one but on the other
        side of an integer is never taken for it."""
        value = _INT_FUNCTIONS[function](self.hint)
        self.env.record(f"{function}({tree_source(self.tree)}) == {value!r}", "value", why)
        self.env.specializations.append((tree_source(self.tree), value, f"{why} at {_caller()}"))
        return value

    def _compare(self, symbol, other):
        if not isinstance(_raw(other), (int, float)) and _raw(other) is not UNKNOWN:
            return NotImplemented
        result = _COMPARISONS[symbol](self.hint, _hint(other))
        condition = f"{tree_source(self.tree)} {symbol} {tree_source(_tree(other))}"
        # Not `a <= b` for a false `a > b`: with a NaN both are false.
        self.env.record(condition if result else f"not ({condition})")
        return result

    def __bool__(self):
        return self._compare("!=", 0.0)

    def __hash__(self):
        if self.is_value:
            return hash(self.specialize("hash() was called"))
        return hash(("SymFloat", self.tree))

    def specialize(self, why: str) -> float:
        hint = self.hint
        literal = repr(hint) if math.isfinite(hint) else f"float({str(hint)!r})"
        source = tree_source(self.tree)
        tolerance = self.env.tolerance(self.names())
        if tolerance:  # a value the compiled graph computes: eager's to rounding
            condition = f"close({source}, {literal}, {tolerance!r})"
        else:
            condition = f"{source} == {literal}" if hint == hint else f"isnan({source})"
        self.env.record(condition, "value", why)
        self.env.specializations.append((tree_source(self.tree), hint, f"{why} at {_caller()}"))
        return hint

    def __float__(self):
        return self.specialize("float() was called")

    def __int__(self):
        return self._to_int("int", "int() was called")

    def __trunc__(self):
        return self._to_int("int", "math.trunc() was called")

    def __floor__(self):
        return self._to_int("floor", "math.floor() was called")

    def __ceil__(self):
        return self._to_int("ceil", "math.ceil() was called")

    def __format__(self, spec: str) -> str:
        if PRINTING[0]:
            return user_text(self, spec)
        if not self.is_value and _from_autojit():
            return format(tree_source(self.tree), spec)
        return _format(self, spec)

    def evaluate(self, binding) -> float:
        return evaluate_tree(self.tree, binding)

    def __str__(self):
        if PRINTING[0]:
            return user_text(self)
        return tree_source(self.tree) if not self.is_value and _from_autojit() else \
            _format(self, "")

    __repr__ = __str__


numbers.Real.register(SymFloat)

_INT_FUNCTIONS = {"int": int, "round": round, "floor": math.floor, "ceil": math.ceil}

def _tree(value) -> tuple:
    if isinstance(value, SymFloat):
        return value.tree
    if isinstance(value, SymInt):
        return ("int", value.poly)
    return ("constant", value)


def _float_operation(symbol: str, left, right):
    if not all(isinstance(_raw(value), (int, float)) or _raw(value) is UNKNOWN
               for value in (left, right)):
        return NotImplemented
    env = next(value.env for value in (left, right) if isinstance(value, (SymInt, SymFloat)))
    hint = _combine(FLOAT_OPERATIONS[symbol], left, right)
    return SymFloat((symbol, _tree(left), _tree(right)), hint, env)


def _call(name: str, *arguments):
    """`name(*arguments)` (a math function, round, abs) of symbolic scalars, kept symbolic."""
    from .symbolic_expr import MATH_FUNCTIONS

    env = next(value.env for value in arguments if isinstance(value, (SymInt, SymFloat)))
    hints = [_raw(value) for value in arguments]
    hint = UNKNOWN if any(value is UNKNOWN for value in hints) else \
        MATH_FUNCTIONS[name](*hints)
    return SymFloat(("call", name, tuple(_tree(value) for value in arguments)), hint, env)


def is_runtime(value) -> bool:
    """Whether `value` is a symbolic scalar read at run time (a runtime scalar or a graph value):
    such a value becomes a graph value when it reaches an op, never a literal."""
    return isinstance(value, (SymInt, SymFloat)) and value.is_value


def is_symbolic(value) -> bool:
    return isinstance(value, (SymInt, SymFloat))


class SymBool:
    """torch.SymBool, the type of a symbolic boolean: autojit decides each comparison of
    symbolic scalars while tracing, with the hints, and records it as a guard, so no value is
    ever one; the class is there for the isinstance checks libraries make."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("autojit makes no SymBool: comparisons of symbolic scalars are decided "
                        "while tracing and guarded")
