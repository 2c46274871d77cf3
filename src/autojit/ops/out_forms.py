"""The top-level forms of the ops whose `out=` is more than a write of their result: the
reductions sum, prod, max, min, aminmax and norm, round (torch.special's too), matmul,
where and nonzero.

torch takes out= on sum and prod only with a dim, and runs them in out's dtype (a float
tensor summed into an int64 out is cast first, then summed); max and min take three kinds of
out, one per form; aminmax takes a pair; norm checks out under the name of torch's kernel,
linalg_vector_norm; round checks out's dtype before it finds that an integer tensor has no
rounding kernel (to decimals, or at all in torch.special.round); matmul checks out as the
product it runs does (dot, mv or mm); where takes out only with two tensors, nonzero only
without as_tuple. The ops whose out= only receives their result (amax, argmax, logsumexp,
std, clamp, cat, ...) are wrapped by out_argument.with_out in functional.py, which also
imports these forms; the Tensor methods stay the plain ops, without out.
"""

from __future__ import annotations

import functools
import inspect

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from .composite import norm as _norm
from .composite import round as _round
from .elementwise import where as _where
from .elementwise.math_primitives import not_implemented
from .indexing import max as _max
from .indexing import min as _min
from .indexing import nonzero as _nonzero
from .linalg import matmul as _matmul
from .masks import aminmax as _aminmax
from .masks import aminmax_return
from .out_argument import (
    check_no_grad,
    check_out_dtype,
    check_out_type,
    check_same_dtype,
    with_out,
    write_out,
    write_result,
    write_results,
)
from .reduction import prod_, sum_

# torch's forms of sum and prod, as its argument parser lists them when none matches.
_FORMS = {
    "sum": ("Tensor input, *, torch.dtype dtype = None",
            "Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = "
            "None, Tensor out = None"),
    "prod": ("Tensor input, *, torch.dtype dtype = None",
             "Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, "
             "Tensor out = None"),
    "where": ("Tensor condition", "Tensor condition, Tensor input, Tensor other, *, Tensor "
              "out = None", "Tensor condition, Number self, Tensor other",
              "Tensor condition, Tensor input, Number other",
              "Tensor condition, Number self, Number other"),
}


def _type_name(value) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, dtypes.DType):
        return "autojit.dtype"
    return type(value).__name__


def _no_matching_form(name: str, args: tuple, kwargs: dict) -> TypeError:
    got = ", ".join([_type_name(value) for value in args]
                    + [f"{key}={_type_name(value)}" for key, value in kwargs.items()])
    forms = "".join(f" * ({form})\n" for form in _FORMS[name])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{forms}")


def _reduction_in_out_dtype(function, name: str):
    """sum or prod with torch's out=: in the form with a dim only, computed in out's dtype
    (or in `dtype`, which out must then have)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def wrapper(x, *args, out=None, **kwargs):
        if out is None:
            return function(x, *args, **kwargs)
        bound = signature.bind(x, *args, **kwargs)
        if "dim" not in bound.arguments:
            raise _no_matching_form(name, (x, *args), {**kwargs, "out": out})
        bound.apply_defaults()
        dim, keepdim, dtype = (bound.arguments[key] for key in ("dim", "keepdim", "dtype"))
        if name == "prod" and (isinstance(dim, bool) or not isinstance(dim, int)):
            raise TypeError(f"prod(): argument 'dim' (position 2) must be int, not "
                            f"{type(dim).__name__}")
        check_out_type(name, out)
        check_no_grad(name, (x, out))
        if dtype is not None:
            check_same_dtype(out, dtypes.to_dtype(dtype))
        return write_out(name, out, function(x, dim, keepdim, dtype=out.dtype))

    wrapper.__signature__ = _with_out_parameter(signature)
    return wrapper


def _with_out_parameter(signature: inspect.Signature) -> inspect.Signature:
    parameters = list(signature.parameters.values())
    parameters.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=parameters)


sum = _reduction_in_out_dtype(sum_, "sum")  # noqa: A001 - torch's name
prod = _reduction_in_out_dtype(prod_, "prod")


def _extreme_with_out(function, name: str, elementwise: str):
    """max or min with torch's out= on each form: over all elements, a tensor out of any dtype
    the result casts to; with a dim, a (values, indices) pair of exactly the results' dtypes;
    against another tensor, maximum's or minimum's out."""
    @functools.wraps(function)
    def wrapper(x, dim=None, keepdim: bool = False, *, other=None, out=None):
        result = function(x, dim, keepdim, other=other)
        if out is None:
            return result
        if isinstance(dim, Tensor) or other is not None:
            return write_result(elementwise, out, result, inputs=(x, dim, other))
        if dim is None:
            return write_result(name, out, result, "can_cast", inputs=(x,))
        values, indices = write_results(name, out, tuple(result), ("expected", "expected"),
                                        inputs=(x,))
        return type(result)(values, indices)

    wrapper.__signature__ = _with_out_parameter(inspect.signature(function))
    return wrapper


max = _extreme_with_out(_max, "max", "maximum")  # noqa: A001 - torch's name
min = _extreme_with_out(_min, "min", "minimum")  # noqa: A001 - torch's name


@functools.wraps(_aminmax)
def aminmax(input, *, dim=None, keepdim: bool = False, out=None):  # noqa: A002
    result = _aminmax(input, dim=dim, keepdim=keepdim)
    if out is None:
        return result
    return aminmax_return(*write_results("aminmax", out, tuple(result),
                                         ("expected", "expected"), inputs=(input,)))


aminmax.__signature__ = inspect.signature(aminmax, follow_wrapped=False)


def _round_with_out(name: str, integers: bool):
    """round with torch's out=, named `name` in its argument errors; `integers`: whether
    integer tensors come back unchanged (torch.round) or are refused (torch.special.round,
    whose kernel has no loop for them)."""
    @functools.wraps(_round)
    def wrapper(x, *, decimals: int = 0, out=None):
        if out is not None:
            check_out_type(name, out)
            check_no_grad("round", (x, out))
            # torch checks out's dtype before finding that a dtype has no rounding kernel.
            check_out_dtype("round", x.dtype, out, "found")
        if not integers and x.dtype in (dtypes.int32, dtypes.int64):
            raise not_implemented("round_cpu" if decimals else "round_vml_cpu", x.dtype)
        result = _round(x, decimals=decimals)
        return result if out is None else write_out("round", out, result)

    wrapper.__signature__ = inspect.signature(wrapper, follow_wrapped=False)
    return wrapper


round = _round_with_out("round", integers=True)  # noqa: A001 - torch's name
special_round = _round_with_out("special_round", integers=False)


norm = with_out(_norm, "expected", name="linalg_vector_norm")


@functools.wraps(_matmul)
def matmul(x: Tensor, y: Tensor, *, out=None) -> Tensor:
    result = _matmul(x, y)
    if out is None:
        return result
    # torch's matmul runs dot, mv or mm, and out's dtype is checked as theirs is.
    check = "dot" if x.ndim == 1 and y.ndim == 1 else "addmv" if y.ndim == 1 else "expected"
    return write_result("matmul", out, result, check, inputs=(x, y))


matmul.__signature__ = inspect.signature(matmul, follow_wrapped=False)


@functools.wraps(_where)
def where(condition, input=None, other=None, *, out=None):  # noqa: A002 - torch's names
    if out is None:
        return _where(condition, input, other)
    if input is None and other is None:
        raise _no_matching_form("where", (condition,), {"out": out})
    # torch's form with out takes tensors only.
    for position, (name, value) in enumerate((("input", input), ("other", other)), 2):
        if not isinstance(value, Tensor):
            raise TypeError(f"where(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    return write_result("where", out, _where(condition, input, other), "where",
                        inputs=(input, other))


where.__signature__ = inspect.signature(where, follow_wrapped=False)


@functools.wraps(_nonzero)
def nonzero(x: Tensor, *, as_tuple: bool = False, out=None):
    if out is None:
        return _nonzero(x, as_tuple=as_tuple)
    if as_tuple:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    return write_result("nonzero", out, _nonzero(x), "nonzero")


nonzero.__signature__ = inspect.signature(nonzero, follow_wrapped=False)
