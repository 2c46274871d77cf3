"""Contractions, products, distances and norms torch's top level has beside matmul:
tensordot, inner, vdot, addr, chain_matmul, dist, renorm, vander (and linalg.vander),
combinations, frobenius_norm, nuclear_norm, and torch.norm with its string orders ('nuc').

Composites of matmul, the reductions and the layout ops, in torch's order of operations (aten's
LinearAlgebra.cpp, Distance.cpp, TensorShape.cpp): tensordot permutes and reshapes both operands
into one matrix product, as torch's does, summing a contracted dim of size 1 against the other
operand first; combinations
indexes the input with the index tuples itertools gives (their number depends only on the
sizes, so it compiles); vander is a cumprod, as torch's is, so its gradient is torch's.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...tensor import dtypes
from ...tensor.once import warn_once
from ...tensor.tensor import Tensor, normalize_dim
from .. import composite, layout
from .. import elementwise as ew
from ..complex_numbers import conj
from ..layout.joining import flip_method
from ..limited_rules import COMPLEX32, refuse_limited
from ..reduction import sum_
from ..scans import cumprod
from . import dot, matmul
from .linalg_products import multi_dot
from .norms import matrix_norm

_SCALAR_TYPE = dtypes.SCALAR_TYPE_NAMES

# ---- tensordot, inner, vdot ---------------------------------------------------------------------


def _tensordot_dims(a: Tensor, b: Tensor, dims) -> tuple:
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            return [int(v) for v in dims[0].tolist()], [int(v) for v in dims[1].tolist()]
        dims = int(dims.item())
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if isinstance(dims, bool) or not isinstance(dims, (int, tuple, list)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = dims
    for position, value in ((3, dims_a), (4, dims_b)):
        if not isinstance(value, (tuple, list)):
            name = "dims_self" if position == 3 else "dims_other"
            raise TypeError(f"tensordot(): argument '{name}' (position {position}) must be "
                            f"tuple of ints, not {type(value).__name__}")
    return list(dims_a), list(dims_b)


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """The sum of products of a and b over the dims `dims` names (the last n of a with the
    first n of b for an int n, or two lists of dims), as one matrix product."""
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    contracted_a = [normalize_dim(d, a.ndim) for d in dims_a]
    contracted_b = [normalize_dim(d, b.ndim) for d in dims_b]
    size = 1
    for given, da, db in zip(dims_a, contracted_a, contracted_b, strict=True):
        sa, sb = a.shape[da], b.shape[db]
        if sb == 1:  # a broadcast dim is summed right away, as torch's does
            a = sum_(a, da, keepdim=True)
        elif sa == 1:
            b = sum_(b, db, keepdim=True)
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in "
                               f"dim {given} and second has size {sb} in dim {db}")
        else:
            size *= sa
    free_a = [d for d in range(a.ndim) if d not in contracted_a]
    free_b = [d for d in range(b.ndim) if d not in contracted_b]
    rows = math.prod(a.shape[d] for d in free_a)
    columns = math.prod(b.shape[d] for d in free_b)
    left = layout.reshape(layout.permute(a, free_a + contracted_a), (rows, size))
    right = layout.reshape(layout.permute(b, contracted_b + free_b), (size, columns))
    result = layout.reshape(matmul(left, right), tuple(a.shape[d] for d in free_a)
                            + tuple(b.shape[d] for d in free_b))
    return result if out is None else _write(result, out, "tensordot")


def _write(result: Tensor, out, name: str, check=None) -> Tensor:
    from ..out_argument import write_result

    return write_result(name, out, result, check)


def inner(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - torch's names
    """The sum of products over the last dims of x and y (a product with a 0-d operand)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def vdot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The dot product of two 1-D tensors, the first conjugated: for real tensors, dot."""
    refuse_limited("vdot", input)
    return dot(conj(input) if isinstance(input, Tensor) else input, other)


# ---- addr, chain_matmul --------------------------------------------------------------------------

def _check_scalar(value, name: str, result_dtype) -> None:
    if result_dtype.category == dtypes.INTEGER and isinstance(value, float):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating "
                           "point number.")
    if isinstance(value, bool) and result_dtype is not dtypes.bool_:
        raise RuntimeError(f"Boolean {name} only supported for Boolean results.")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """`beta * input + alpha * outer(vec1, vec2)`, input broadcast to the outer product's
    shape; with beta 0, input is ignored (its NaNs too)."""
    for name, vector in (("vec1", vec1), ("vec2", vec2)):
        if vector.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {vector.ndim}-D")
    from ..registry import promoted_dtype

    dtype = promoted_dtype((input, vec1, vec2))
    _check_scalar(beta, "beta", dtype)
    _check_scalar(alpha, "alpha", dtype)
    shape = (vec1.shape[0], vec2.shape[0])
    base = layout.expand(input, shape)
    if dtype is dtypes.bool_:
        product = ew.logical_and(layout.reshape(vec1, (-1, 1)), layout.reshape(vec2, (1, -1)))
        product = product if alpha else ew.fill_like(product, False)
        return ew.logical_or(base, product) if beta else product
    product = layout.reshape(vec1, (-1, 1)) * layout.reshape(vec2, (1, -1))
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product.to(dtype)
    return (base if beta == 1 else base * beta) + product


def chain_matmul(*matrices, out=None) -> Tensor:
    """The product of the 2-D matrices, in the cheapest order (deprecated in torch for
    linalg.multi_dot, which it calls)."""
    warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future "
              "PyTorch release. Use torch.linalg.multi_dot instead, which accepts a list of two "
              "or more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for matrix in matrices:
        if matrix.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {matrix.ndim}, expected 2 instead.")
    result = matrices[0].clone() if len(matrices) == 1 else multi_dot(matrices)
    return result if out is None else _write(result, out, "chain_matmul")


# ---- distances and renorm -----------------------------------------------------------------------

def dist(input: Tensor, other: Tensor, p=2) -> Tensor:  # noqa: A002
    """The p-norm of `x - y` (broadcast), over all elements."""
    difference = input - other
    if difference.dtype.category < dtypes.FLOATING:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_SCALAR_TYPE[difference.dtype.name]} instead.")
    return composite.norm(difference, p)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:  # noqa: A002
    """x with each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to norm
    maxnorm (by `maxnorm / (norm + 1e-7)`)."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if input.dtype.category < dtypes.FLOATING:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_SCALAR_TYPE[input.dtype.name]}")
    dim = normalize_dim(dim, input.ndim)
    others = tuple(d for d in range(input.ndim) if d != dim)
    norm = composite.norm(input, p, others, keepdim=True)
    factor = ew.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


# ---- vander, combinations ------------------------------------------------------------------------

def vander(x: Tensor, N=None, increasing: bool = False) -> Tensor:  # noqa: N803 - torch's name
    """The Vandermonde matrix of the 1-D x: columns x^(N-1), ..., x, 1 (increasing powers with
    `increasing`); integers give int64."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = dtypes.promote(x.dtype, dtypes.int64)
    ones = ew.fill_like(layout.reshape(x.detach(), (-1, 1)).to(dtype), 1)
    if n == 0:
        result = layout.narrow(ones, 1, 0, 0)
    elif n == 1:
        result = ones
    else:
        powers = cumprod(layout.expand(layout.reshape(x.to(dtype), (-1, 1)),
                                       (x.shape[0], n - 1)), 1)
        result = layout.cat([ones, powers], 1)
    return result if increasing else flip_method(result, 1)


def linalg_vander(x: Tensor, *, N=None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of x's last dim, with increasing powers 0, ..., N - 1 (N is the
    last dim's size by default; at least 2)."""
    if x.dtype in (dtypes.float16, dtypes.bfloat16, dtypes.bool_):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {_SCALAR_TYPE[x.dtype.name]}")
    if x.ndim == 0:
        x = layout.reshape(x, (1,))
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape = tuple(x.shape) + (n - 1,)
    powers = cumprod(layout.expand(layout.unsqueeze(x, -1), shape), -1)
    ones = ew.fill_like(layout.narrow(powers.detach(), -1, 0, 1), 1)
    return layout.cat([ones, powers], -1)


linalg_vander.__name__ = linalg_vander.__qualname__ = "vander"


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The length-r combinations of the entries of a 1-D tensor, one per row, in lexicographic
    order of positions (with repeated positions when `with_replacement`)."""
    refuse_limited("masked_select", input, taken=COMPLEX32)
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return layout.reshape(input[:0], (0,))
    choose = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    positions = np.array(list(choose(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    from ...tensor.creation import tensor

    return input[tensor(positions, device=input.device)]


# ---- norms --------------------------------------------------------------------------------------

def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None,  # noqa: A002
         dtype=None) -> Tensor:
    """The p-norm over `dim` (all dims when None): "fro" or 2, 1, inf, -inf, 0 or any number
    as a vector norm; "nuc" (and the other string orders) as linalg.matrix_norm over two
    dims."""
    if isinstance(p, str) and not (p == "fro" and (
            dim is None or isinstance(dim, int) or len(dim) <= 2)):
        dims = tuple(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, p, dims, keepdim, dtype=dtype, out=out)
    if dtype is not None:
        input = input.to(dtype)
    from ..out_forms import norm as vector_norm

    return vector_norm(input, 2 if p == "fro" else p, dim, keepdim, out=out)


def norm_method(self: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The p-norm over `dim` (all dims when None); string orders such as "nuc" are matrix
    norms."""
    return norm(self, p, dim, keepdim, dtype=dtype)


def _deprecated(key: str, message: str) -> None:
    warn_once(key, message, UserWarning, stacklevel=3)


def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The Frobenius norm over `dim` (at most two dims; deprecated in torch for
    linalg.vector_norm)."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    _deprecated("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT "
                "compatibility. It will be removed in a future PyTorch release. Please use "
                "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    if input.dtype.category < dtypes.FLOATING:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_SCALAR_TYPE[input.dtype.name]} instead.")
    return composite.norm(input, 2, dims if dims else None, keepdim)


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The nuclear norm (the sum of the singular values) of the matrices over the two dims
    `dim` (the last two by default); deprecated in torch for linalg.matrix_norm."""
    if isinstance(dim, bool):  # torch's (input, keepdim) form
        dim, keepdim = None, dim
    _deprecated("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT "
                "compatibility. It will be removed in a future PyTorch release. Please use "
                "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
