"""torch's functions on Python numbers that may be symbolic (`torch.sym_max`, `sym_min`,
`sym_int`, `sym_float`, `sym_not`, `sym_ite`, `sym_sum`, `sym_sqrt`, `sym_fresh_size`,
`sym_constrain_range`, `sym_constrain_range_for_size`), and torch's control-flow operators
`torch.cond` and `torch.while_loop`.

Shape code written for torch.export calls them where a size may be a SymInt. On plain numbers
they give torch's results (a float from sym_max when either argument is one). On autojit's
symbolic scalars (tensor/symbolic_scalars.py) they are Python's own operations: a comparison
inside max, min or a condition is decided while tracing with the hints and guarded, as any
comparison of sizes is, so the compiled function is specialized on the branch taken rather
than carrying a symbolic max.

`cond` and `while_loop` run their functions in Python, which is what torch's eager mode does:
inside autojit.compile the branch taken on a graph value is a decision the trace checks on every
run (docs/notes/symbolic-scalars.md), and the loop is unrolled on the trace's values, checked
likewise. Gradients flow through the operations the branches ran.
"""

from __future__ import annotations

import builtins
import math

from .tensor.tensor import Tensor

__all__ = ["cond", "sym_constrain_range", "sym_constrain_range_for_size", "sym_float",
           "sym_fresh_size", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt",
           "sym_sum", "while_loop"]


def _either_float(a, b) -> bool:
    return isinstance(a, float) or isinstance(b, float)


def sym_max(a, b):
    """max(a, b) for sizes that may be symbolic; a float where either is one."""
    result = builtins.max(a, b)
    return builtins.float(result) if _either_float(a, b) else result


def sym_min(a, b):
    """min(a, b) for sizes that may be symbolic; a float where either is one."""
    result = builtins.min(a, b)
    return builtins.float(result) if _either_float(a, b) else result


def sym_int(a):
    """int(a), truncating toward zero, for numbers that may be symbolic."""
    if type(a) is builtins.int:
        return a
    return builtins.int(math.trunc(a))  # (a bool too: torch gives 1, not True)


def sym_float(a):
    """float(a) for numbers that may be symbolic."""
    return a if isinstance(a, builtins.float) else builtins.float(a)


def sym_not(a):
    """`not a` for booleans that may be symbolic."""
    return not a


def sym_ite(b, t, f):
    """t if b else f."""
    return t if b else f


def sym_sum(args):
    """The sum of `args`, left to right from 0."""
    return builtins.sum(args)


def sym_sqrt(a):
    """math.sqrt(a)."""
    return math.sqrt(a)


def sym_fresh_size(expr):
    """The size `expr` itself (torch.export gives it a fresh symbol)."""
    return expr


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def sym_constrain_range(size, min=None, max=None):  # noqa: A002
    """Check an int against the range torch.export would constrain it to."""
    _check_range(size, _INT64_MIN if min is None else min, _INT64_MAX if max is None else max)


def sym_constrain_range_for_size(size, min=None, max=None):  # noqa: A002
    """As sym_constrain_range, for a size: at least 0."""
    _check_range(size, 0 if min is None else min, _INT64_MAX if max is None else max)


def _check_range(a, low: int, high: int) -> None:
    # A symbolic size is checked as torch.export would when the traced function is exported:
    # autojit exports none, so only a plain int is checked.
    if type(a) is builtins.int and not low <= a <= high:
        raise RuntimeError(f"Invalid value range for {a} between [{low}, {high}].")


# ---- control flow ----------------------------------------------------------------------------

def _predicate(pred) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError("Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return builtins.bool(pred)
    return builtins.bool(pred)


def _operands(operands, where: str) -> tuple:
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect {where} to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return tuple(operands)


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands) (torch.cond): `pred` a bool or a
    one-element tensor."""
    branch = true_fn if _predicate(pred) else false_fn
    return branch(*_operands(operands, "operands"))


def while_loop(cond_fn, body_fn, carried_inputs):
    """Apply body_fn to the carried values while cond_fn(*carried) holds (torch.while_loop):
    the body's last output as it returned it (a tuple, a list, or one tensor for one carried
    value), or the carried values as a tuple when the loop never ran."""
    carried = _operands(carried_inputs, "carried_inputs")
    result = carried
    while _predicate(cond_fn(*carried)):
        result = body_fn(*carried)
        outputs = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(outputs) != len(carried):
            raise RuntimeError("Expected body_fn_output and carried_inputs to have same number "
                               f"of outputs but got lhs:{list(outputs)} and rhs:{list(carried)}")
        carried = outputs
    return result
