"""Products and distances written from matmul and elementwise ops: addmm, addmv, addbmm,
baddbmm, mv, kron, cross, cdist and cosine_similarity.

Composites, with torch's argument checks and messages: the scaled products are
`beta * input + alpha * (product)` around linalg/__init__.py's matmul (the input broadcast to the
product's shape, and ignored when beta is 0, as torch does: its NaN does not propagate);
kron multiplies interleaved unit dims; cross combines the components picked along `dim`;
cdist is the p-norm of the broadcast differences (composite.norm, whose gradient at a zero
distance is 0 as torch's; for p = inf the largest difference, whose ties each get the whole
gradient, as torch's); cosine_similarity divides by norms clamped to eps the way torch
clamps them (in place under no_grad: the value is clamped, the gradient is the norm's).
"""

from __future__ import annotations

import math
import warnings

from ...tensor import dtypes
from ...tensor.tensor import Tensor, normalize_dim
from .. import elementwise as ew
from ..autocast import FP32, LOWER, PROMOTE, autocast_op, float32_inside
from ..composite import norm
from ..elementwise.math_primitives import SCALAR_TYPE_NAMES, tensor_argument
from ..layout import cat, expand, narrow, reshape, unsqueeze
from ..limited_rules import refuse_limited
from ..reduction import amax, sum_
from ..registry import share_node
from ..shape_rules import broadcast_shapes
from . import bmm, matmul, mm


def _type_name(tensor: Tensor) -> str:
    return SCALAR_TYPE_NAMES[tensor.dtype.name]


def _scalar(value, dtype):
    """alpha or beta meeting an integer product: torch truncates a float to the integer."""
    if dtype.category < dtypes.FLOATING and isinstance(value, float):
        return int(value)
    return value


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha) -> Tensor:
    """beta * input + alpha * product, input broadcast to product's shape (torch's expand
    error where it does not fit); beta == 0 ignores input's values."""
    input = expand(input, tuple(product.shape))
    beta, alpha = _scalar(beta, product.dtype), _scalar(alpha, product.dtype)
    if alpha != 1:
        product = alpha * product
    if beta == 0:
        return product
    return (input if beta == 1 else beta * input) + product


def _matrix(tensor, function: str, name: str, position: int) -> Tensor:
    tensor = tensor_argument(tensor, function, name, position)
    if tensor.ndim != 2:
        raise RuntimeError(f"{name} must be a matrix, got {tensor.ndim}-D tensor")
    return tensor


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002 - torch's names
    """`beta * input + alpha * (mat1 @ mat2)` for matrices, input broadcast to the product."""
    input = tensor_argument(input, "addmm", "input", 1)
    mat1 = _matrix(mat1, "addmm", "mat1", 2)
    mat2 = _matrix(mat2, "addmm", "mat2", 3)
    check_addmm_dtypes(input, mat1, mat2)
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


def check_addmm_dtypes(input, mat1, mat2) -> None:  # noqa: A002 - torch's names
    """torch's errors for addmm's operands of different dtypes, in its order (F.linear with a
    bias, which torch runs as addmm, raises them too)."""
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(input)} and {_type_name(mat2)}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_type_name(mat1)} "
                           f"and {_type_name(mat2)}")


def _matrix_vector(input, mat, vec, dtypes_message: str) -> None:
    # torch expands a 0-d input to the result's length first, as it does one of length 1
    length = input.shape[0] if input.ndim else 1
    if input.ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or mat.shape[0] != length and length != 1:
        raise RuntimeError(f"size mismatch, got input ({length}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not (mat.dtype is vec.dtype and input.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{dtypes_message}")


@autocast_op(cuda=LOWER, round_once=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    """`beta * input + alpha * (mat @ vec)` for a matrix and a vector."""
    input = tensor_argument(input, "addmv", "input", 1)
    mat = tensor_argument(mat, "addmv", "mat", 2)
    vec = tensor_argument(vec, "addmv", "vec", 3)
    _matrix_vector(input, mat, vec, f"{_type_name(input)}, {_type_name(mat)}, and "
                                    f"{_type_name(vec)}")
    return _scaled_sum(input, matmul(mat, vec), beta, alpha)


@autocast_op(cuda=LOWER, round_once=True)
def mv(input, vec):  # noqa: A002
    """The product of a matrix and a vector."""
    mat = tensor_argument(input, "mv", "input", 1)
    vec = tensor_argument(vec, "mv", "vec", 2)
    # torch checks mv as addmv into a result of vec's dtype and mat's row count.
    rows = mat.shape[0] if mat.ndim == 2 else 1
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_type_name(vec)}, {_type_name(mat)}, and {_type_name(vec)}")
    return matmul(mat, vec)


def _batches(batch1, batch2, function: str):
    batch1 = tensor_argument(batch1, function, "batch1", 2)
    batch2 = tensor_argument(batch2, function, "batch2", 3)
    for name, tensor in (("batch1", batch1), ("batch2", batch2)):
        if tensor.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    return batch1, batch2


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """`beta * input + alpha * sum_b (batch1[b] @ batch2[b])`: batched products summed."""
    input = tensor_argument(input, "addbmm", "input", 1)
    batch1, batch2 = _batches(batch1, batch2, "addbmm")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    if input.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(input)} and {_type_name(batch2)}")
    result = _scaled_sum(input, sum_(bmm(batch1, batch2), 0), beta, alpha)
    if result.grad_fn is None:
        return result
    # torch's node and what it shows: each batch is saved where the other needs a gradient
    # (read when asked: no size is read while a function is traced)
    saved = {"alpha": alpha, "beta": beta,
             "batch1": batch1 if batch2.requires_grad else None,
             "batch2": batch2 if batch1.requires_grad else None}
    return share_node((result,), (input, batch1, batch2), "AddbmmBackward0", lambda: {
        **saved, "batch1_sym_argsize_0": int(batch1.shape[0]),
        "batch1_sym_argsize_1": int(batch1.shape[1]),
        "batch2_sym_argsize_2": int(batch2.shape[2])})[0]


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """`beta * input + alpha * (batch1 @ batch2)`: batched products, input broadcast."""
    input = tensor_argument(input, "baddbmm", "input", 1)
    batch1, batch2 = _batches(batch1, batch2, "baddbmm")
    if input.dtype is batch1.dtype and batch1.dtype is not batch2.dtype:
        bmm(batch1, batch2)  # torch's check is then bmm's, with bmm's message
    if not (input.dtype is batch1.dtype is batch2.dtype):
        raise RuntimeError(_baddbmm_dtypes(input, batch1, batch2))
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def _baddbmm_dtypes(input, batch1, batch2) -> str:
    names = dtypes.C_TYPE_NAMES
    return (f"Input dtypes must be the same, got: input {names[input.dtype.name]}, batch1: "
            f"{names[batch1.dtype.name]}, batch2: {names[batch2.dtype.name]}")


def kron(input, other):  # noqa: A002
    """The Kronecker product: every element of input times all of other, in blocks."""
    a = tensor_argument(input, "kron", "input", 1)
    b = tensor_argument(other, "kron", "other", 2)
    ndim = max(a.ndim, b.ndim)
    a_shape = (1,) * (ndim - a.ndim) + tuple(a.shape)
    b_shape = (1,) * (ndim - b.ndim) + tuple(b.shape)
    # a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...): element (i, j, ...) of the
    # product is a[i0, i1 ...] b[j0, j1 ...], and merging each pair of dims lays out the blocks.
    a_interleaved = reshape(a, tuple(v for extent in a_shape for v in (extent, 1)))
    b_interleaved = reshape(b, tuple(v for extent in b_shape for v in (1, extent)))
    product = a_interleaved * b_interleaved
    return reshape(product, tuple(x * y for x, y in zip(a_shape, b_shape)))


_CROSS_WARNING = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                  "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value "
                  "of dim will change to agree with that of linalg.cross in a future release.")


@autocast_op(cuda=PROMOTE)
def cross(input, other, dim=None):  # noqa: A002
    """The cross product of 3-vectors along `dim` (by default the first dim of size 3, with
    torch's deprecation warning), broadcasting the other dims."""
    refuse_limited("cross", input, other)
    a = tensor_argument(input, "cross", "input", 1)
    b = tensor_argument(other, "cross", "other", 2)
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")
    if dim is None:
        warnings.warn(_CROSS_WARNING, UserWarning, stacklevel=2)
        sizes = [extent for extent in a.shape]
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    dim = normalize_dim(dim, a.ndim)
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim]} and {b.shape[dim]}")
    a0, a1, a2 = (narrow(a, dim, k, 1) for k in range(3))
    b0, b1, b2 = (narrow(b, dim, k, 1) for k in range(3))
    return cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                  "donot_use_mm_for_euclid_dist")


@autocast_op(cpu=FP32, cuda=FP32)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 and each row of x2 (batched), (..., P, M)
    and (..., R, M) giving (..., P, R). `compute_mode` is accepted; the distances are always
    computed from the differences, which is at least as accurate as the matrix-product path
    torch may take for p = 2."""
    x1 = tensor_argument(x1, "cdist", "x1", 1)
    x2 = tensor_argument(x2, "cdist", "x2", 2)
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, tensor in (("X1", x1), ("X2", x2)):
        if tensor.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{tensor.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, tensor in (("X1", x1), ("X2", x2)):
        if not tensor.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_type_name(tensor)}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x1)} but found {_type_name(x2)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    difference = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    if x1.shape[-1] == 0:  # no coordinates: every distance is 0
        return sum_(difference, -1)
    if p == math.inf:
        # The largest coordinate distance, with torch's gradient: every coordinate tied for the
        # largest gets all of it (a max would share it); the added term is 0 in value.
        magnitude = ew.abs(difference)
        largest = amax(magnitude.detach(), -1, keepdim=True)
        ties = ew.where(magnitude.detach() == largest, magnitude - magnitude.detach(), 0)
        return largest.squeeze(-1) + sum_(ties, -1)
    return norm(difference, p, dim=-1)


@autocast_op(cuda=FP32)
@float32_inside()
def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """The cosine of the angle between x1 and x2 along `dim` (broadcast), each norm clamped
    to at least eps."""
    x1 = tensor_argument(x1, "cosine_similarity", "x1", 1)
    x2 = tensor_argument(x2, "cosine_similarity", "x2", 2)
    common = dtypes.promote(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{SCALAR_TYPE_NAMES[common.name]}")
    try:
        shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    x1, x2 = expand(x1.to(common), shape), expand(x2.to(common), shape)
    dim = normalize_dim(dim, len(shape))
    quotients = []
    for tensor in (x1, x2):
        length = norm(tensor, 2, dim=dim, keepdim=True)
        # torch clamps the norm in place under no_grad: the value is max(norm, eps) and the
        # gradient the norm's.
        clamped = length + (ew.maximum(length, eps) - length).detach()
        quotients.append(tensor / clamped)
    return sum_(quotients[0] * quotients[1], dim)

