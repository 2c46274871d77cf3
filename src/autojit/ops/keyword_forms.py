"""torch's keyword names for the parameters autojit names otherwise: `torch.exp(input=x)`,
`x.new_zeros(size=(2, 3))`, `x.split(split_size=2)`, `torch.mm(x, mat2=y)`.

torch's argument parser takes every parameter by keyword, under the names of its signatures
(its .pyi stubs and docs); many of autojit's ops call their tensors x and y, and take sizes as
`*size`. The tables below map torch's keyword to autojit's parameter, one table per namespace,
and `accepting` wraps a function so that it takes them: a renamed keyword is passed under
autojit's name, and a keyword whose parameter is autojit's `*size` is passed as positional
arguments. A call without keywords goes straight through. The tables were read from torch
2.13's signatures, and tests/test_ecosystem_keywords.py checks against torch that every keyword
it takes is taken here.

Applied where each namespace is complete: autojit/__init__.py (FUNCTIONS), tensor_names.py
(METHODS), linalg/namespace.py (LINALG), nn/functional/__init__.py (NN_FUNCTIONAL) and special.py
(SPECIAL).
"""

from __future__ import annotations

import functools
import inspect

_INPUT = {"input": "x"}
_INPUT_OTHER = {"input": "x", "other": "y"}
_SECTIONS = {"sections": "indices_or_sections", "indices": "indices_or_sections"}

FUNCTIONS = {
    **dict.fromkeys((
        "abs", "absolute", "all", "amax", "amin", "any", "argmax", "argmin", "argsort",
        "bincount", "chunk", "clamp", "clip", "cos", "cummax", "cummin", "cumprod", "cumsum",
        "diag", "diag_embed", "diagflat", "diagonal", "empty_like", "erf", "exp", "exp2",
        "expm1", "flatten", "flip", "fliplr", "flipud", "floor", "full_like", "gather", "histc",
        "index_add", "index_copy", "index_fill", "index_put", "index_select", "isnan",
        "kthvalue", "log", "log10", "log1p", "log2", "logcumsumexp", "logical_not", "logsumexp",
        "masked_fill", "masked_scatter", "masked_select", "max", "mean", "median", "min",
        "moveaxis", "movedim", "msort", "nanmedian", "narrow", "neg", "negative", "nonzero",
        "nonzero_static", "ones_like", "prod", "put", "rand_like", "randint_like", "randn_like",
        "reciprocal", "repeat_interleave", "roll", "rot90", "round", "rsqrt", "scatter",
        "scatter_add", "scatter_reduce", "select", "sgn", "sigmoid", "sign", "sin", "sort",
        "sqrt", "square", "squeeze", "std", "sum", "swapdims", "t", "take", "take_along_dim",
        "tan", "tanh", "tile", "topk", "trace", "transpose", "tril", "triu", "unbind",
        "unflatten", "unsqueeze", "var", "zeros_like"), _INPUT),
    **dict.fromkeys((
        "eq", "floor_divide", "ge", "greater", "greater_equal", "gt", "le", "less", "less_equal",
        "logical_and", "logical_or", "logical_xor", "lt", "matmul", "maximum", "minimum", "mul",
        "multiply", "ne", "not_equal", "remainder", "true_divide"), _INPUT_OTHER),
    **dict.fromkeys(("dsplit", "hsplit", "vsplit"), _SECTIONS),
    **dict.fromkeys(("empty", "ones", "rand", "randn", "zeros"), {"size": "*size"}),
    "bmm": {"input": "x", "mat2": "y"},
    "broadcast_to": {"input": "x", "size": "shape"},
    "cholesky_inverse": {"input": "L"},
    "cholesky_solve": {"input": "B", "input2": "L"},
    "dot": {"input": "x", "tensor": "y"},
    "from_dlpack": {"ext_tensor": "obj"},
    "ger": {"input": "x", "vec2": "y"},
    "isin": {"element": "elements", "test_element": "test_elements"},
    "lu_solve": {"input": "b"},
    "matrix_exp": {"input": "A"},
    "matrix_power": {"input": "A"},
    "mm": {"input": "x", "mat2": "y"},
    "outer": {"input": "x", "vec2": "y"},
    "permute": {"input": "x", "dims": "*dims"},
    "pow": {"input": "x", "exponent": "y"},
    "reshape": {"input": "x", "shape": "*shape"},
    "result_type": {"tensor": "tensor1", "other": "tensor2", "scalar": "tensor1",
                    "scalar1": "tensor1", "scalar2": "tensor2"},
    "set_default_device": {"device": "requested"},
    "split": {"tensor": "x"},
    "spmm": {"input": "mat1"}, "dsmm": {"input": "mat1"},
    "swapaxes": {"input": "x", "axis0": "dim0", "axis1": "dim1"},
    "triangular_solve": {"input": "b"},
}

METHODS = {
    **dict.fromkeys((
        "eq", "eq_", "floor_divide", "floor_divide_", "ge", "ge_", "greater", "greater_",
        "greater_equal", "greater_equal_", "gt", "gt_", "le", "le_", "less", "less_",
        "less_equal", "less_equal_", "logical_and", "logical_and_", "logical_or",
        "logical_or_", "logical_xor", "logical_xor_", "lt", "lt_", "matmul", "maximum",
        "minimum", "mul", "mul_", "multiply", "multiply_", "ne", "ne_", "not_equal",
        "not_equal_", "remainder", "remainder_", "true_divide", "true_divide_", "where"),
        {"other": "y"}),
    **dict.fromkeys(("dsplit", "hsplit", "vsplit"), _SECTIONS),
    **dict.fromkeys(("new_empty", "new_ones", "new_zeros", "resize_", "sum_to_size"),
                    {"size": "*size"}),
    **dict.fromkeys(("split", "unsafe_split"), {"split_size": "split_size_or_sections"}),
    **dict.fromkeys(("bmm", "mm"), {"mat2": "y"}),
    **dict.fromkeys(("ger", "outer"), {"vec2": "y"}),
    **dict.fromkeys(("pow", "pow_"), {"exponent": "y"}),
    "broadcast_to": {"size": "shape"},
    "cholesky_solve": {"input2": "L"},
    "copy_": {"other": "source"},
    "dot": {"tensor": "y"},
    "expand": {"size": "*shape"},
    "flip": {"dims": "*dims"},
    "permute": {"dims": "*dims"},
    "repeat": {"repeats": "*sizes"},
    "reshape": {"shape": "*shape"},
    "swapaxes": {"axis0": "dim0", "axis1": "dim1"},
    "view": {"size": "*shape"},
}

NN_FUNCTIONAL = dict.fromkeys(("gelu", "sigmoid", "softplus", "tanh"), _INPUT)
LINALG = {"matmul": _INPUT_OTHER, "norm": {"input": "A"}}
SPECIAL = dict.fromkeys(("erf", "exp2", "expit", "expm1", "log1p", "logsumexp", "round"),
                        _INPUT)


def _positional(function) -> tuple[list[str], bool]:
    """The names of `function`'s parameters that come before its *args, and whether it has
    *args."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return [], False
    names = []
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return names, True
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY,
                              inspect.Parameter.POSITIONAL_OR_KEYWORD):
            names.append(parameter.name)
    return names, False


def accepting(function, renames: dict):
    """`function` taking torch's keywords `renames` maps to its parameters ("*size" for its
    *size)."""
    before, _ = _positional(function)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if kwargs:
            args, kwargs = _renamed(renames, before, args, kwargs)
            return function(*args, **kwargs)
        return function(*args)  # a plain call: passing an empty dict on costs more

    return wrapper


def _renamed(renames: dict, before: list, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    spread = None
    for key in [key for key in kwargs if key in renames]:
        target = renames[key]
        value = kwargs.pop(key)
        if target.startswith("*"):
            spread = value
        elif target in kwargs:
            raise TypeError(f"got multiple values for argument '{key}'")
        else:
            kwargs[target] = value
    if spread is not None:
        # The parameters before *size go by position, so that the size can follow them.
        args = list(args)
        for name in before[len(args):]:
            if name not in kwargs:
                break
            args.append(kwargs.pop(name))
        args.append(spread)
    return tuple(args), kwargs


def accept_all(namespace: dict, table: dict) -> None:
    """Wrap each function of `namespace` (a module's globals) that `table` names."""
    for name, renames in table.items():
        if name in namespace:
            namespace[name] = accepting(namespace[name], renames)


def accept_on_class(cls, table: dict) -> None:
    """Wrap each method of `cls` that `table` names (a plain method wrapper of an op function,
    tensor_methods._method, is replaced: the op function is wrapped, one call fewer)."""
    for name, renames in table.items():
        method = cls.__dict__.get(name)
        if method is None:
            continue
        if getattr(method, "plain_method", False):
            method = method.__wrapped__
        wrapper = accepting(method, renames)
        wrapper.__name__ = wrapper.__qualname__ = name
        setattr(cls, name, wrapper)
