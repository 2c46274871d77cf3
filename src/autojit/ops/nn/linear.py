"""The affine map of nn.Linear as a primitive: `linear(x, weight, bias) = x @ weight^T + bias`,
torch's addmm for a batch of rows, with its backward written out.

For x of shape (*, in), weight (out, in) and bias (out,) or the number 0.0 for none. The
composite it stands for is a transpose, a matmul (x's leading dims folded into its rows) and
an add: three dispatches and three autograd nodes where torch's linear is one. Eagerly the
primitive is one np.matmul and an add in place, the composite's calls, so the values are its
bits; traced it is the composite (a Decomposition, ops/lowering.py), so compiled graphs hold
the same matmul and add as before. Its VJP is torch's:

    dx = g @ weight,    dweight = g^T x,    dbias = sum(g over the rows),

with x and g folded to matrices, in autojit ops (matmul, sum), so it differentiates again.
vmap runs the composite (ops/batching.py), whose matmul folds a batch into rows.

nn.functional.linear (nn/layer_functions.py) calls it for float32 and float64 operands of one
dtype and a matrix weight; other dtypes keep the composite, whose rounding after each step
(bfloat16) or product dtype rules they follow.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..layout import reshape, t
from ..linalg import matmul
from ..lowering import Decomposition
from ..reduction import sum_
from ..registry import bind, define_op

_FAST_DTYPES = (dtypes.float32, dtypes.float64)


def _shape(shape, weight, bias):
    if len(weight) != 2 or not shape or shape[-1] != weight[1]:
        rows = math.prod(shape[:-1]) if shape else 0
        raise ValueError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                         f"{shape[-1] if shape else 0} and {weight[1] if weight else 0}x"
                         f"{weight[0] if weight else 0})")
    if tuple(bias) not in ((), (weight[0],)):
        raise ValueError(f"a bias of shape {list(bias)} for {weight[0]} outputs")
    return tuple(shape[:-1]) + (weight[0],)


def _dtype(inputs, attrs):
    dtype = inputs[0]._dtype
    return dtype, dtype


def _composite(x: Tensor, weight: Tensor, bias) -> Tensor:
    output = matmul(x, t(weight))
    if bias.__class__ is not float:
        output = output + bias
    return output


def _impl(x: np.ndarray, weight: np.ndarray, bias) -> np.ndarray:
    if x.ndim > 2:  # the leading dims folded into rows: one product, as matmul's composite
        rows = np.matmul(x.reshape(-1, x.shape[-1]), weight.T)
        result = rows.reshape(x.shape[:-1] + (weight.shape[0],))
    else:
        result = np.matmul(x, weight.T)
    if bias.__class__ is not float:
        np.add(result, bias, out=result)
    return result


def _rows(value: Tensor) -> Tensor:
    """A tensor of (*, n) as the matrix of its rows (a vector as one row)."""
    return reshape(value, -1, value.shape[-1]) if value.ndim != 2 else value


def _vjp(ctx, g):
    x, weight, _ = ctx.inputs
    needs = ctx.needs_input_grad
    grad_x = grad_weight = grad_bias = None
    if needs[0]:
        grad_x = matmul(g, weight)
    if needs[1]:
        grad_weight = matmul(t(_rows(g)), _rows(x))
    if needs[2]:
        grad_bias = sum_(g, tuple(range(g.ndim - 1))) if g.ndim > 1 else g
    return grad_x, grad_weight, grad_bias


def _jvp(inputs, tangents, out, attrs):
    x, weight, _ = inputs
    x_tangent, weight_tangent, bias_tangent = tangents
    terms = []
    if x_tangent is not None:
        terms.append(matmul(x_tangent, t(weight)))
    if weight_tangent is not None:
        terms.append(matmul(x, t(weight_tangent)))
    if bias_tangent is not None:
        terms.append(bias_tangent)
    if not terms:
        return None
    result = terms[0]
    for term in terms[1:]:
        result = result + term
    return result


LINEAR = define_op(
    name="linear", arity=3, shape=_shape, dtype=_dtype, impl=_impl, vjp=_vjp,
    saves=((0, 1), (1, 0)), lowering=Decomposition(_composite), jvp=_jvp,
    grad_name="AddmmBackward0")


def linear_map(x: Tensor, weight: Tensor, bias) -> Tensor:
    """x @ weight^T + bias for nn.functional.linear, which has checked the shapes (weight a
    matrix) and the dtypes: the primitive where the operands are float32 or float64 tensors
    of one dtype, else the composite."""
    dtype = x._dtype
    if dtype in _FAST_DTYPES and weight._dtype is dtype and (
            bias is None or (isinstance(bias, Tensor) and bias._dtype is dtype)):
        return bind(LINEAR, (x, weight, 0.0 if bias is None else bias), {})
    return _composite(x, weight, 0.0 if bias is None else bias)
