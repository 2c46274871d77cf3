"""Symbolic scalars: SymInt, SymFloat and the ShapeEnv that records what a trace decided on them.

A trace (compiler/tracing.py) puts symbols where values change from call to call, so that one
trace serves them all (docs/notes/symbolic-scalars.md):

- `s0`, `s1`, ...: the dynamic dimensions of tensor arguments (compiler/dynamic_shapes.py);
- `f0`, `i0`, ...: *runtime scalars*, Python floats and ints read before every call from where
  the function finds them (a learning rate, a step counter, an int argument);
- `g0`, `g1`, ...: *graph values* the function reads in Python, `t.item()` and `bool(t)` of a
  traced tensor, known only once the graph has run.

A SymInt is a polynomial over symbols and a SymFloat a tree of Python float arithmetic
(tensor/symbolic_expr.py), each with its `hint`, its value in the call being traced (a graph
value's hint is computed only when a decision needs it: `env.evaluate_leaf`). Arithmetic stays
symbolic. A decision (a comparison, `bool`) is made with the hints and recorded: on sizes and
runtime scalars as a guard checked before each call (compiler/guards.py), on graph values as a
*value check* the executable evaluates once the graph has computed them, before anything is
written back (ShapeEnv.value_checks). What needs a real Python number (`int(n)`, `range(n)`,
`float(x)`) *specializes*: it records `symbol == hint` and returns the hint.

compiler/api.py turns the guards into call-time checks, ir/instantiate.py substitutes a binding of
the sizes into the traced graph, and ir/trace.py turns a symbolic scalar that reaches a tensor op
into a graph value. Nothing here imports the rest of autojit.

This module is the symbolic scalars' public face, with the functions of them that
compiler/intercept.py calls (call_symbolic, predicate); the parts, bottom to top:
symbolic_expr.py (polynomials and float trees), symbolic_text.py (a scalar's text),
symbolic_scalars.py (SymInt and SymFloat), shape_env.py (ShapeEnv), symbolic_structures.py
(scalars inside shapes and attributes).
"""

from __future__ import annotations

import math

from .shape_env import Leaf, ShapeEnv, ValueCheck
from .symbolic_expr import (  # noqa: F401 - digest is re-exported
    ATOM_OPERATIONS,
    FLOAT_OPERATIONS,
    UNKNOWN,
    add_poly,
    constant_of,
    constant_poly,
    digest,
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
from .symbolic_scalars import (  # noqa: F401 - SymBool is re-exported
    SymBool,
    SymFloat,
    SymInt,
    _call,
    _tree,
    is_runtime,
    is_symbolic,
)
from .symbolic_structures import (
    as_size,
    contains_runtime,
    contains_symbolic,
    same_shape,
    size_product,
    specialize_values,
    substitute,
    symbols_in,
)
from .symbolic_text import FORMATTER, PRINTING, user_text  # noqa: F401 - ir/ reads them here


def call_symbolic(name: str, *arguments):
    """A math function of symbolic scalars as a symbolic scalar (compiler/intercept.py)."""
    return _call(name, *arguments)


def predicate(name: str, value) -> bool:
    """`math.isfinite(x)`, `math.isnan(x)`, `math.isinf(x)` of a symbolic scalar: decided with
    the hint and recorded, as a comparison is."""
    function = {"isfinite": math.isfinite, "isnan": math.isnan, "isinf": math.isinf}[name]
    result = function(value.hint)
    source = tree_source(_tree(value))
    value.env.record(f"{name}({source})" if result else f"not {name}({source})")
    return result


__all__ = ["ATOM_OPERATIONS", "UNKNOWN", "Leaf", "ShapeEnv", "SymFloat", "SymInt", "ValueCheck",
           "as_size", "call_symbolic", "contains_runtime", "contains_symbolic", "evaluate_poly",
           "evaluate_tree", "is_runtime", "is_symbolic", "poly_source", "predicate",
           "same_shape", "size_product", "specialize_values", "substitute", "symbols_in",
           "tree_source"]
