"""torch's `out=` argument: an op's result written into a given tensor, which is returned.

An op computes its result out of place as usual; the helpers here then check the `out=`
tensor as torch does and write the result into it. Every op refuses what torch's argument
parser refuses (an out that is not a Tensor, or not a pair of them for an op returning two),
and, while grad mode is on, inputs or an out that require grad: a call with `out` records no
autograd history. The dtype torch asks of `out` differs from op to op, with messages of its
own: OUT_CHECKS names the usual rules, and an op with another one checks it itself. The result
is then cast to out's dtype and copied into out's storage (inplace.write_storage, so a write to
a captured tensor inside a compiled function becomes an update of that tensor); an out of
another shape is resized first, with torch's deprecation warning unless it was empty (a
resize inside a compiled function is a graph break, and a view is not resized), and out's
version counter is bumped, as an in-place op's.

`with_out(function, check)` gives a top-level op function torch's keyword-only `out`, which
the Tensor methods do not take, as in torch. Ops whose out= changes the computation (a sum
runs in out's dtype) call the helpers themselves.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings

import numpy as np

from ..tensor.dtypes import C_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..tensor.graph_break import graph_break
from ..tensor.state import TANGENT_OF, state
from ..tensor.tensor import Tensor
from .inplace import check_inplace, check_no_overlap, write_storage

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does "
            "not match the required output shape {}. This behavior is deprecated, and in a "
            "future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0).")


def _scalar(dtype) -> str:
    return SCALAR_TYPE_NAMES[dtype.name]


def _unless_same(message):
    return lambda name, result, out: None if out is result else message(result, out)


# The rules torch has for out's dtype beyond its casting rule, by kind: kind -> (op name,
# result dtype, out dtype) -> the RuntimeError's message or another exception, or None where
# out is accepted. Most want the result's dtype exactly; a reduction computes in out's dtype,
# where torch's kernels may have no loop. Without a kind, out may have any dtype the result
# casts to within torch's casting rule (no float into an integer tensor).
OUT_CHECKS = {
    "expected": _unless_same(lambda result, out: (
        f"Expected out tensor to have dtype {C_TYPE_NAMES[result.name]}, but got "
        f"{C_TYPE_NAMES[out.name]} instead")),
    "found": _unless_same(lambda result, out: (
        f"Found dtype {_scalar(out)} but expected {_scalar(result)}")),
    "input": _unless_same(lambda result, out: (
        f"Expected the dtype for input and out to match, but got {_scalar(result)} for "
        f"input's dtype and {_scalar(out)} for out's dtype.")),
    "mat2": _unless_same(lambda result, out: (
        f"self and mat2 must have the same dtype, but got {_scalar(out)} and "
        f"{_scalar(result)}")),
    "heaviside": _unless_same(lambda result, out: (
        "heaviside is not yet implemented for tensors with different dtypes.")),
    "nan_to_num": _unless_same(lambda result, out: (
        f"nan_to_num: dtype of out: {_scalar(out)} should be same as input: {_scalar(result)}")),
    "boolean": lambda name, result, out: (
        None if out.category == 0 else f"{name} does not support non-boolean outputs."),
    "bool_result": lambda name, result, out: (
        None if out.category == 0 else
        f"{name} only supports bool tensor for result, got: {_scalar(out)}"),
    "addmv": _unless_same(lambda result, out: (
        f"addmv input tensors must have the same dtype, but got {_scalar(out)}, "
        f"{_scalar(result)}, and {_scalar(result)}")),
    "where": _unless_same(lambda result, out: (
        f"Expected out type to be {_scalar(result)} but got {_scalar(out)}")),
    "nonzero": _unless_same(lambda result, out: (
        f"nonzero: Expected out tensor to have scalar type {_scalar(result)} but got scalar "
        f"type{_scalar(out)}")),
    # torch.cat's out may be of any dtype of the result's category or above.
    "cat": lambda name, result, out: (
        None if result.category <= out.category else
        TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                  f"{_scalar(out)}")),
    "scalar_type": _unless_same(lambda result, out: (
        f"Expected object of scalar type {_scalar(result)} but got scalar type {_scalar(out)} "
        "for argument 'out'")),
    "values output": _unless_same(lambda result, out: (
        f"expected scalar type '{_scalar(result)}' but got '{_scalar(out)}' for values output")),
    "indices output": _unless_same(lambda result, out: (
        f"expected scalar type '{_scalar(result)}' but got '{_scalar(out)}' for indices "
        "output")),
    "hash": _unless_same(lambda result, out: (
        f"Expected result to be of dtype {result.name}, but got {_scalar(out)}")),
    "dot": _unless_same(lambda result, out: (
        f"result dtype {_scalar(out)} does not match input dtype {_scalar(result)}")),
    "floating": lambda name, result, out: (
        None if out.is_floating_point else
        f"{name}(): Expected floating point type for result tensor, but got: {_scalar(out)}"),
    "reduction": lambda name, result, out: (
        None if out.is_floating_point or not result.is_floating_point
        else NotImplementedError(f'"{name}_cpu" not implemented for \'{_scalar(out)}\'')),
    # torch's max() and min() over all elements word the casting rule as its internal check.
    "can_cast": lambda name, result, out: (
        None if result.category <= out.category else
        "Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType("
        "out.dtype())) to be true, but got false.  (Could this error message be improved?  "
        "If so, please report an enhancement request to PyTorch.)"),
}


# ---- the checks, in torch's order ---------------------------------------------------------------

def check_out_type(name: str, out) -> None:
    """TypeError, as torch's argument parser gives it, unless `out` is a Tensor."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def check_out_pair(name: str, out, count: int = 2) -> tuple:
    """The (values, indices) pair of an op returning both (or the `count` results of one
    returning more), as a tuple of Tensors."""
    if not isinstance(out, (tuple, list)) or not all(isinstance(item, Tensor) for item in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != count:
        raise TypeError(f"expected tuple of {count} elements but got {len(out)}")
    return tuple(out)


def check_no_grad(name: str, tensors) -> None:
    """torch refuses out= where autograd would have to record the write, or forward AD
    propagate a tangent through it."""
    if state.forward_levels and any(isinstance(x, Tensor) and TANGENT_OF[0](x) is not None
                                    for x in tensors):
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support "
                                  "it because it is an out= function")
    if not state.grad_enabled:
        return
    if any(isinstance(x, Tensor) and x.requires_grad for x in tensors):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def check_same_dtype(out: Tensor, dtype) -> None:
    """torch's check of an out tensor whose dtype must be the result's own."""
    refusal = OUT_CHECKS["expected"]("", dtype, out.dtype)
    if refusal:
        raise RuntimeError(refusal)


def check_out_dtype(name: str, result_dtype, out: Tensor, check: str | None = None) -> None:
    """torch's rule for out's dtype: the OUT_CHECKS entry `check`, then the casting rule."""
    refusal = check and OUT_CHECKS[check](name, result_dtype, out.dtype)
    if refusal:
        raise refusal if isinstance(refusal, Exception) else RuntimeError(refusal)
    if result_dtype.category > out.dtype.category:
        raise RuntimeError(f"result type {_scalar(result_dtype)} can't be cast to the desired "
                           f"output type {_scalar(out.dtype)}")


# ---- the write ----------------------------------------------------------------------------------

def write_out(name: str, out: Tensor, result: Tensor) -> Tensor:
    """Write `result` (cast to out's dtype) into `out`, resized to the result's shape where it
    differs, and return out; the caller has checked out as torch does."""
    check_inplace(out, name)
    result = result.detach()
    if result.dtype is not out.dtype:
        result = result.to(out.dtype)
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        resize_out(name, out, shape)
    write_storage(out, result)
    return out


def resize_out(name: str, out: Tensor, shape: tuple) -> None:
    """Give `out` the result's shape, as torch resizes an out= tensor (its warning unless out
    was empty; a view cannot grow here, and inside a trace it is a graph break)."""
    if state.tracer is not None or out._payload is None:
        graph_break(f"{name}(out=...) resizing its output tensor", needs_data=False)
    if out._base is not None:
        # torch resizes a view within its base's storage; autojit's views cannot grow.
        raise RuntimeError(f"{name}(): out= is a view of shape {list(out.shape)} where the "
                           f"result has shape {list(shape)}; a view cannot be resized")
    if out.numel() != 0:
        warnings.warn(_RESIZED.format(list(out.shape), list(shape)), UserWarning,
                      stacklevel=_user_stacklevel())
    data = out._payload
    if isinstance(data, np.ndarray):
        out._payload = np.empty(shape, dtype=data.dtype)
    else:  # device memory: a fresh buffer on the same device
        out._payload = type(data)(shape, data.dtype, device_index=data.device_index)


def _user_stacklevel() -> int:
    """The stacklevel that points a warning raised in resize_out at the innermost frame outside
    the autojit package (the user's line)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def write_result(name: str, out, result: Tensor, check: str | None = None,
                 inputs: tuple = ()) -> Tensor:
    """`result` written into `out` after all of torch's checks (see check_out_dtype for
    `check`); `inputs`: tensors of the call besides result that must not require grad."""
    check_out_type(name, out)
    check_no_grad(name, (result, out, *inputs))
    check_out_dtype(name, result.dtype, out, check)
    return write_out(name, out, result)


def write_results(name: str, out, results: tuple, checks: tuple, inputs: tuple = ()) -> tuple:
    """The results of an op returning several tensors (values and indices, min and max)
    written into the tuple `out`, each after its check; returns the written tensors."""
    outs = check_out_pair(name, out, len(results))
    check_no_grad(name, (*results, *outs, *inputs))
    for target, result, check in zip(outs, results, checks):
        check_out_dtype(name, result.dtype, target, check)
    return tuple(write_out(name, target, result) for target, result in zip(outs, results))


def _tensors_in(args) -> list:
    tensors = []
    for value in args:
        if isinstance(value, (list, tuple)):
            tensors += [item for item in value if isinstance(item, Tensor)]
        elif isinstance(value, Tensor):
            tensors.append(value)
    return tensors


def with_out(function, check: str | None = None, name: str | None = None,
             no_overlap: bool = False):
    """`function` with a keyword-only `out=None`; its signature shows it. `check`: see
    check_out_dtype; `name`: the op's name in torch's messages, where it is not the
    function's (torch.special's own functions are special_entr, ...); `no_overlap`: out may
    not share memory with a tensor argument, or one in a sequence argument (cat's)."""
    name = name or function.__name__

    @functools.wraps(function)
    def wrapper(*args, out=None, **kwargs):
        # Without keywords, a plain call: passing an empty dict on costs more than the op.
        result = function(*args, **kwargs) if kwargs else function(*args)
        if out is None:
            return result
        if no_overlap and isinstance(out, Tensor):
            check_no_overlap(out, _tensors_in(args))
        return write_result(name, out, result, check)

    parameters = list(inspect.signature(function).parameters.values())
    parameters.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    wrapper.__signature__ = inspect.Signature(parameters)
    wrapper.keywords_only_wrapper_of = (wrapper, function)  # aliases.numpy_keywords reads it
    return wrapper
