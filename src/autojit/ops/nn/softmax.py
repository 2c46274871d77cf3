"""The softmax family: softmax and log_softmax over a dim (autojit.softmax, Tensor.softmax, ...),
with an optional dtype the input is converted to first, as primitives with torch's backward
formulas.

Each is computed around the maximum along `dim` (the result does not depend on the shift), so
exp never overflows; a dim with no entries gives an empty result. Five primitives, each with a
Decomposition (ops/lowering.py):

- softmax and log_softmax run eagerly as one NumPy routine, the max, shift, exp, sum and
  divide (or log and subtract) of the composite, in place where the composite allocated a
  result per step, so the values are the composite's bits. Traced, they are that composite.
  softmax, log_softmax and their backwards over the last dim of row-major float32 and float64
  arrays run as one native loop over the rows instead (NATIVE: codegen/cpu/eager_softmax.py),
  whose sums accumulate in float64 as compiled kernels' do: the composite's values to float32's
  rounding, not its bits.
- safe_softmax is aten's _safe_softmax, attention's softmax: zeros in a row of all -inf
  (fully masked), where softmax gives NaN; one node, with softmax's backward formula.
- Their VJPs are torch's: `y (g - sum(g y))` and `g - exp(y) sum(g)` from the saved result y,
  as the primitives softmax_backward and log_softmax_backward (torch's _softmax_backward_data),
  one routine each eagerly, and differentiable again: softmax's Jacobian is symmetric, so the
  VJP of softmax_backward in g and softmax's JVP are softmax_backward itself.

nn.functional (softmax, log_softmax, softmin, cross_entropy) and attention build on these,
adding the implicit-dim rule of its older signature.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor, normalize_dim
from .. import batching
from .. import elementwise as ew
from ..autocast import FP32_SET_OPT_DTYPE, autocast_op, float32_inside
from ..composite import reduces_nothing
from ..dtype_rules import rule_first, rule_promote
from ..elementwise.math_primitives import not_implemented, tensor_argument
from ..lowering import Decomposition
from ..reduction import amax, sum_
from ..registry import bind, define_op


def _floating_input(name: str, input, dim: int, dtype) -> Tensor:  # noqa: A002 - torch's names
    input = tensor_argument(input, name, "input", 1)
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    if not input.dtype.is_floating_point:
        last = input.ndim == 0 or normalize_dim(dim, input.ndim) == input.ndim - 1
        raise not_implemented(f"{name}_{'lastdim_' if last else ''}kernel_impl", input.dtype)
    return input


def _along(shape, *others, dim):
    """The shape rule: the input's shape (a backward's gradient and result have one shape)."""
    if not 0 <= dim < len(shape):
        raise ValueError(f"dim {dim} is out of range for a tensor of {len(shape)} dims")
    if others and tuple(others[0]) != tuple(shape):
        raise ValueError(f"the gradient's shape {list(shape)} is not the result's "
                         f"{list(others[0])}")
    return shape


def _total(x: Tensor, dim: int) -> Tensor:
    return sum_(x, dim, keepdim=True)


# ---- the composites compiled code runs ----------------------------------------------------------

def _shifted(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    # The max is detached: softmax does not depend on the shift, so no gradient flows through it.
    if reduces_nothing(input, (dim,)):
        return input  # no entries along dim: the result is empty, with nothing to shift
    return input - amax(input, dim, keepdim=True).detach()


def _softmax_composite(x: Tensor, dim: int) -> Tensor:
    exponentials = ew.exp(_shifted(x, dim))
    return exponentials / _total(exponentials, dim)


def _safe_softmax_composite(x: Tensor, dim: int) -> Tensor:
    # A row of all -inf: its shift is 0 rather than -inf, so each exp is 0, and its sum, 0, is
    # divided as 1 (no 0 / 0 forward or backward).
    if reduces_nothing(x, (dim,)):
        return x.clone()
    row_max = amax(x, dim, keepdim=True).detach()
    row_max = ew.where(row_max == float("-inf"), 0.0, row_max)
    exponentials = ew.exp(x - row_max)
    total = _total(exponentials, dim)
    return exponentials / ew.where(total == 0, 1.0, total)


def _log_softmax_composite(x: Tensor, dim: int) -> Tensor:
    shifted = _shifted(x, dim)
    return shifted - ew.log(_total(ew.exp(shifted), dim))


def _softmax_backward_composite(grad: Tensor, out: Tensor, dim: int) -> Tensor:
    return out * (grad - _total(grad * out, dim))


def _log_softmax_backward_composite(grad: Tensor, out: Tensor, dim: int) -> Tensor:
    return grad - ew.exp(out) * _total(grad, dim)


# ---- the eager routines: the composites' NumPy calls, in place -----------------------------------

# np.amax and np.sum are these ufuncs' reductions behind a Python wrapper that costs more than
# the reduction of a small batch's rows.
_max, _sum = np.maximum.reduce, np.add.reduce


def _shifted_array(x: np.ndarray, dim: int) -> np.ndarray:
    return np.subtract(x, _max(x, axis=dim, keepdims=True))


# Set by codegen (codegen/cpu/eager_softmax.py, installed by codegen/__init__.py):
# NATIVE(name, arrays, safe) -> softmax (safe: zeros in rows of all -inf) or softmax_backward
# over the last dim of C-contiguous float32 or float64 arrays as one native loop over the rows,
# or None where there is none. NumPy's max and sum along a short last dim cost about 100 ns a
# row: an attention's (4, 4, 64, 64) softmax took 250-320 us, the native loop 57-77 us.
NATIVE = None
_NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _native(name: str, arrays: tuple, dim: int, safe: bool = False):
    """The native routine's result, or None where it does not apply (not the last dim, not
    row-major, another dtype, no routine)."""
    first = arrays[0]
    if NATIVE is None or dim != first.ndim - 1 or first.dtype not in _NATIVE_DTYPES:
        return None
    for array in arrays:
        if not array.flags.c_contiguous or array.dtype != first.dtype or \
                array.shape != first.shape:
            return None  # (NumPy's calls below raise for shapes that do not match)
    return NATIVE(name, list(arrays), safe)


def _softmax_impl(x: np.ndarray, dim: int) -> np.ndarray:
    if x.shape[dim] == 0:
        return x.copy()
    result = _native("softmax", (x,), dim)
    if result is not None:
        return result
    result = _shifted_array(x, dim)
    np.exp(result, out=result)
    return np.true_divide(result, _sum(result, axis=dim, keepdims=True), out=result)


def _safe_softmax_impl(x: np.ndarray, dim: int) -> np.ndarray:
    if x.shape[dim] == 0:
        return x.copy()
    result = _native("softmax", (x,), dim, safe=True)
    if result is not None:
        return result
    # The composite's calls: a row of all -inf is shifted by 0, so each exp is 0, and its sum,
    # 0, is divided as 1.
    largest = _max(x, axis=dim, keepdims=True)
    largest[largest == -np.inf] = 0
    result = np.subtract(x, largest)
    np.exp(result, out=result)
    total = _sum(result, axis=dim, keepdims=True)
    total[total == 0] = 1
    return np.true_divide(result, total, out=result)


def _log_softmax_impl(x: np.ndarray, dim: int) -> np.ndarray:
    if x.shape[dim] == 0:
        return x.copy()
    result = _native("log_softmax", (x,), dim)
    if result is not None:
        return result
    result = _shifted_array(x, dim)
    total = _sum(np.exp(result), axis=dim, keepdims=True)
    return np.subtract(result, np.log(total, out=total), out=result)


def _softmax_backward_impl(grad: np.ndarray, out: np.ndarray, dim: int) -> np.ndarray:
    result = _native("softmax_backward", (grad, out), dim)
    if result is not None:
        return result
    total = _sum(np.multiply(grad, out), axis=dim, keepdims=True)
    result = np.subtract(grad, total)
    return np.multiply(out, result, out=result)


def _log_softmax_backward_impl(grad: np.ndarray, out: np.ndarray, dim: int) -> np.ndarray:
    result = _native("log_softmax_backward", (grad, out), dim)
    if result is not None:
        return result
    total = _sum(grad, axis=dim, keepdims=True)
    result = np.exp(out)
    np.multiply(result, total, out=result)
    return np.subtract(grad, result, out=result)


# ---- the primitives ---------------------------------------------------------------------------

def _backward(op, grad: Tensor, out: Tensor, dim: int) -> Tensor:
    return bind(op, (grad, out), {"dim": dim})


def _softmax_backward_vjp(ctx, u):
    # out = y (g - s) with s = sum(g y): d out / d g is softmax's symmetric Jacobian, and
    # d out_i / d y_k = [i = k] (g_i - s) - y_i g_k.
    grad, out = ctx.inputs
    dim = ctx.attrs["dim"]
    needs = ctx.needs_input_grad
    return (_backward(SOFTMAX_BACKWARD, u, out, dim) if needs[0] else None,
            u * (grad - _total(grad * out, dim)) - grad * _total(u * out, dim)
            if needs[1] else None)


def _softmax_backward_jvp(inputs, tangents, out, attrs):
    grad, y = inputs
    grad_tangent, y_tangent = tangents
    dim = attrs["dim"]
    result = None if grad_tangent is None else _backward(SOFTMAX_BACKWARD, grad_tangent, y, dim)
    if y_tangent is not None:
        moved = y_tangent * (grad - _total(grad * y, dim)) - y * _total(grad * y_tangent, dim)
        result = moved if result is None else result + moved
    return result


def _log_softmax_backward_vjp(ctx, u):
    # out = g - p sum(g) with p = exp(y): d out_i / d g_k = [i = k] - p_i, and
    # d out_i / d y_k = -[i = k] p_i sum(g).
    grad, out = ctx.inputs
    dim = ctx.attrs["dim"]
    needs = ctx.needs_input_grad
    probabilities = ew.exp(out)
    return (u - _total(u * probabilities, dim) if needs[0] else None,
            -(u * probabilities) * _total(grad, dim) if needs[1] else None)


def _log_softmax_backward_jvp(inputs, tangents, out, attrs):
    grad, y = inputs
    grad_tangent, y_tangent = tangents
    dim = attrs["dim"]
    probabilities = ew.exp(y)
    result = None
    if grad_tangent is not None:
        result = grad_tangent - probabilities * _total(grad_tangent, dim)
    if y_tangent is not None:
        moved = -(probabilities * y_tangent) * _total(grad, dim)
        result = moved if result is None else result + moved
    return result


def _softmax_vjp(ctx, g):
    return (_backward(SOFTMAX_BACKWARD, g, ctx.out, ctx.attrs["dim"]),)


def _softmax_jvp(inputs, tangents, out, attrs):
    return None if tangents[0] is None else _backward(SOFTMAX_BACKWARD, tangents[0], out,
                                                      attrs["dim"])


SOFTMAX = define_op(
    name="softmax", arity=1, shape=_along, dtype=rule_first, impl=_softmax_impl,
    vjp=_softmax_vjp, saves=("out",), lowering=Decomposition(_softmax_composite),
    jvp=_softmax_jvp, batch=batching.dim_rule("dim"))
# aten's _safe_softmax (attention's softmax): softmax, but zeros in a row of all -inf (fully
# masked), where softmax gives NaN. Its gradient is softmax's formula on the result, which is 0
# in such a row.
SAFE_SOFTMAX = define_op(
    name="safe_softmax", arity=1, shape=_along, dtype=rule_first, impl=_safe_softmax_impl,
    vjp=_softmax_vjp, saves=("out",), lowering=Decomposition(_safe_softmax_composite),
    jvp=_softmax_jvp, batch=batching.dim_rule("dim"))
LOG_SOFTMAX = define_op(
    name="log_softmax", arity=1, shape=_along, dtype=rule_first, impl=_log_softmax_impl,
    vjp=lambda ctx, g: (_backward(LOG_SOFTMAX_BACKWARD, g, ctx.out, ctx.attrs["dim"]),),
    saves=("out",), lowering=Decomposition(_log_softmax_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        tangents[0] - _total(ew.exp(out) * tangents[0], attrs["dim"])),
    batch=batching.dim_rule("dim"))
SOFTMAX_BACKWARD = define_op(
    name="softmax_backward", arity=2, shape=_along, dtype=rule_promote,
    impl=_softmax_backward_impl, vjp=_softmax_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_softmax_backward_composite), jvp=_softmax_backward_jvp,
    batch=batching.dim_rule("dim"), grad_name="SoftmaxBackwardDataBackward0")
LOG_SOFTMAX_BACKWARD = define_op(
    name="log_softmax_backward", arity=2, shape=_along, dtype=rule_promote,
    impl=_log_softmax_backward_impl, vjp=_log_softmax_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_log_softmax_backward_composite), jvp=_log_softmax_backward_jvp,
    batch=batching.dim_rule("dim"), grad_name="LogSoftmaxBackwardDataBackward0")


def safe_softmax_along(x: Tensor, dim: int) -> Tensor:
    """softmax over `dim` (non-negative, of a floating x with at least one dim) with 0, and
    zero gradients, in the rows whose entries are all -inf (aten's _safe_softmax)."""
    return bind(SAFE_SOFTMAX, (x,), {"dim": dim})


def softmax_along(x: Tensor, dim: int) -> Tensor:
    """softmax over `dim` (non-negative, of a floating x with at least one dim), without the
    public function's argument handling: for composites that have checked their operand."""
    return bind(SOFTMAX, (x,), {"dim": dim})


# ---- the public functions -------------------------------------------------------------------

@autocast_op(cuda=FP32_SET_OPT_DTYPE)
@float32_inside()
def softmax(input, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """Softmax over `dim`, `exp(x) / sum(exp(x))`, computed around the maximum (no overflow)."""
    input = _floating_input("softmax", input, dim, dtype)
    dim = normalize_dim(dim, input.ndim)
    if input.ndim == 0:  # a single element along dim: reduce it as a length-1 vector
        return softmax(input.reshape(1), 0).reshape(())
    return bind(SOFTMAX, (input,), {"dim": dim})


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
def log_softmax(input, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """Log of softmax over `dim`, `x - logsumexp(x)`, computed around the maximum."""
    input = _floating_input("log_softmax", input, dim, dtype)
    dim = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return log_softmax(input.reshape(1), 0).reshape(())
    return bind(LOG_SOFTMAX, (input,), {"dim": dim})
