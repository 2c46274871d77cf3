"""The expressions symbolic scalars are made of: polynomials (SymInt) and float trees (SymFloat).

tensor/symbolic.py builds them; this module evaluates them under a binding (symbol name ->
value) and spells them as Python source, which the guards and the value checks compile.

A polynomial is a sorted tuple of (monomial, coefficient) with nonzero coefficients; a
monomial is a sorted tuple of atoms (repeated for powers); an atom is a symbol name, or
(operation, polynomial, polynomial) for what polynomials cannot express (floor division,
modulo, min, max).

A float tree is ("constant", value), ("runtime", name) for a symbol whose value is read when
the graph runs (a runtime float or int `f0`/`i0`, a graph value `g0`), ("int", polynomial),
(operator, left, right) for Python's binary float arithmetic, or ("call", name, arguments) for
a function of the math module (and `round`), evaluated by Python exactly as eager calls it.

Symbol names say where a value comes from: `s0` a dynamic size, `f0` and `i0` a Python float or
int read before each call (runtime scalars), `g0` a value the graph computes (`t.item()`).
Nothing here imports the rest of autojit.
"""

from __future__ import annotations

import math
import operator
import re

# A hint not computed yet: a graph value's, until a decision needs it.
UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "<unknown>"})()


def make_poly(terms: dict) -> tuple:
    return tuple(sorted(((monomial, coefficient) for monomial, coefficient in terms.items()
                         if coefficient), key=repr))


def constant_poly(value: int) -> tuple:
    return make_poly({(): value})


def add_poly(left: tuple, right: tuple, sign: int = 1) -> tuple:
    terms = dict(left)
    for monomial, coefficient in right:
        terms[monomial] = terms.get(monomial, 0) + sign * coefficient
    return make_poly(terms)


def multiply_poly(left: tuple, right: tuple) -> tuple:
    terms: dict = {}
    for left_monomial, left_coefficient in left:
        for right_monomial, right_coefficient in right:
            monomial = tuple(sorted(left_monomial + right_monomial, key=repr))
            terms[monomial] = terms.get(monomial, 0) + left_coefficient * right_coefficient
    return make_poly(terms)


def constant_of(poly: tuple):
    """The value of a constant polynomial, else None."""
    if not poly:
        return 0
    if len(poly) == 1 and poly[0][0] == ():
        return poly[0][1]
    return None


def _evaluate_atom(atom, binding) -> int:
    if isinstance(atom, str):
        return binding[atom]
    operation, left, right = atom
    return ATOM_OPERATIONS[operation](evaluate_poly(left, binding), evaluate_poly(right, binding))


ATOM_OPERATIONS = {"floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max}


def evaluate_poly(poly: tuple, binding) -> int:
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


def poly_names(poly: tuple) -> set:
    """The symbol names a polynomial reads."""
    names = set()
    for monomial, _ in poly:
        for atom in monomial:
            if isinstance(atom, str):
                names.add(atom)
            else:
                names |= poly_names(atom[1]) | poly_names(atom[2])
    return names


FLOAT_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                    "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
                    "**": operator.pow}

# The functions a float tree may call: the math module's (math.exp(loss.item()) stays
# symbolic while tracing, compiler/intercept.py) and round.
MATH_FUNCTIONS = {name: getattr(math, name) for name in (
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "fabs", "erf", "erfc", "atan2", "pow", "hypot",
    "copysign", "fmod")}
MATH_FUNCTIONS["round"] = round
MATH_FUNCTIONS["abs"] = abs


def evaluate_tree(tree: tuple, binding):
    kind = tree[0]
    if kind == "constant":
        return tree[1]
    if kind == "runtime":
        return binding[tree[1]]
    if kind == "int":
        return evaluate_poly(tree[1], binding)
    if kind == "call":
        return MATH_FUNCTIONS[tree[1]](*(evaluate_tree(argument, binding)
                                         for argument in tree[2]))
    return FLOAT_OPERATIONS[kind](evaluate_tree(tree[1], binding),
                                  evaluate_tree(tree[2], binding))


def tree_source(tree: tuple) -> str:
    kind = tree[0]
    if kind == "constant":
        return repr(tree[1])
    if kind == "runtime":
        return tree[1]
    if kind == "int":
        return f"({poly_source(tree[1])})"
    if kind == "call":
        return f"{tree[1]}({', '.join(tree_source(argument) for argument in tree[2])})"
    return f"({tree_source(tree[1])} {kind} {tree_source(tree[2])})"


def tree_names(tree: tuple) -> set:
    """The symbol names a float tree reads."""
    kind = tree[0]
    if kind == "constant":
        return set()
    if kind == "runtime":
        return {tree[1]}
    if kind == "int":
        return poly_names(tree[1])
    if kind == "call":
        return set().union(*(tree_names(argument) for argument in tree[2]))
    return tree_names(tree[1]) | tree_names(tree[2])


def digest(array) -> str:
    """An array's shape, dtype and bytes as a short text: what a check on a whole array read
    in Python (`t.numpy()` while tracing) compares."""
    import hashlib

    import numpy as np

    array = np.ascontiguousarray(array)
    text = f"{array.shape}{array.dtype}".encode()
    return hashlib.blake2b(text + array.tobytes(), digest_size=16).hexdigest()


def close(value, expected, tolerance: float) -> bool:
    """Whether a float (or array) the compiled graph computed is the traced one to rounding:
    within `tolerance` of it, relative to the largest magnitude (NaN where it was NaN)."""
    import numpy as np

    value, expected = np.asarray(value), np.asarray(expected)
    if value.shape != expected.shape:
        return False
    if not tolerance or expected.dtype.kind not in "fc":
        return bool(np.array_equal(value, expected, equal_nan=expected.dtype.kind in "fc"))
    finite = np.isfinite(expected)
    scale = float(np.abs(expected[finite]).max()) if finite.any() else 0.0
    return bool(np.allclose(value, expected, rtol=tolerance, atol=tolerance * scale,
                            equal_nan=True))


# The names the source of a guard or a value check may use besides its symbols.
EVAL_GLOBALS = {"__builtins__": {"min": min, "max": max, "round": round, "abs": abs,
                                 "isinstance": isinstance, "format": format, "bool": bool},
                "nan": math.nan, "inf": math.inf, "digest": digest, "close": close,
                **MATH_FUNCTIONS,
                "isfinite": math.isfinite, "isnan": math.isnan, "isinf": math.isinf,
                "int": int, "float": float, "floor": math.floor, "ceil": math.ceil}

SIZE_SYMBOL = re.compile(r"\bs\d+\b")
RUNTIME_SYMBOL = re.compile(r"\b[fi]\d+\b")
LEAF_SYMBOL = re.compile(r"\bg\d+\b")


def is_size_name(name: str) -> bool:
    return name[:1] == "s"


def is_value_name(name: str) -> bool:
    """A symbol whose value is read when the graph runs: a runtime scalar or a graph value."""
    return name[:1] in ("f", "i", "g")
