"""autojit.masked: torch.masked's reductions and normalizations of strided tensors under a
boolean mask (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean, median, norm, var,
std, logsumexp, logaddexp, softmax, log_softmax, softmin, normalize).

Each follows torch.masked's definition: the masked-out elements are replaced by the
operation's identity (0 for sums, 1 for products, -inf for maxima, ...) with `where`, and the
ordinary op runs on the result, so values, dtypes and gradients are the ordinary ops' (a masked
element gets gradient 0). mean, var and std divide by the count of elements the mask keeps. It
sits with the other public namespaces above ops/; MaskedTensor and sparse masks are not here.
"""

from __future__ import annotations

import math

from .ops import elementwise as ew
from .ops.complex_rules import conj
from .ops.elementwise.math_primitives import logaddexp as _logaddexp
from .ops.linalg.norms import vector_norm
from .ops.nn import softmax as _softmax
from .tensor import dtypes
from .tensor.creation import full_like, ones
from .tensor.tensor import Tensor
from .tensor.type_info import iinfo

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]

_SMALL_INTEGERS = ("uint8", "bool", "int8", "int16", "int32")


def _canonical_dim(dim, ndim: int) -> tuple:
    """torch.masked's _canonical_dim: the sorted, non-negative dims (all for None or ())."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims: list = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _lowest(input: Tensor, ord=2):  # noqa: A002, ARG001 - torch's names
    """The identity of a maximum (and of logsumexp, logaddexp): -inf, or the dtype's least."""
    if input.dtype.is_complex:
        return complex(-math.inf, 0)
    return -math.inf if input.dtype.is_floating_point else iinfo(input.dtype).min


def _highest(input: Tensor, ord=2):  # noqa: A002, ARG001
    """The identity of a minimum: inf, or the dtype's greatest."""
    return math.inf if input.dtype.is_floating_point else iinfo(input.dtype).max


def _norm_identity(input: Tensor, ord=2):  # noqa: A002, ARG001
    """A norm's identity: inf for the -inf norm (a minimum of magnitudes), else 0."""
    return math.inf if ord == -math.inf else 0


def _zero(input: Tensor, ord=2):  # noqa: A002, ARG001
    """The identity of a sum (and of a cumulative sum)."""
    return 0


def _one(input: Tensor, ord=2):  # noqa: A002, ARG001
    """The identity of a product (and of a cumulative product)."""
    return 1


def _nan(input: Tensor, ord=2):  # noqa: A002, ARG001
    """A median's stand-in: NaN, which nanmedian skips."""
    return math.nan


def _input_mask(input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """The mask broadcast to input's shape, as bool."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = mask.broadcast_to(tuple(input.shape))
    return mask.to(dtypes.bool_)


def _combine(identity, input: Tensor, mask, ord=2) -> Tensor:  # noqa: A002
    """input with its masked-out elements replaced by the reduction's identity, which
    `identity` (one of the functions above: torch's _reduction_identity) gives."""
    if mask is None:
        return input
    return ew.where(_input_mask(input, mask), input, full_like(input, identity(input, ord)))


def _sum_dtype(input: Tensor, dtype):  # noqa: A002
    if dtype is None:
        return dtypes.int64 if input.dtype.name in _SMALL_INTEGERS else input.dtype
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A001, A002
    """The sum over `dim` of the elements the mask keeps."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _combine(_zero, input, mask).sum(dims, keepdim=bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The product over `dim` of the elements the mask keeps."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _combine(_one, input, mask).to(dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """The cumulative sum along `dim`, masked-out elements counting as 0."""
    dtype = input.dtype if dtype is None else dtype
    dim = _canonical_dim(dim, input.ndim)[0]
    return _combine(_zero, input, mask).cumsum(dim, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """The cumulative product along `dim`, masked-out elements counting as 1."""
    dtype = input.dtype if dtype is None else dtype
    dim = _canonical_dim(dim, input.ndim)[0]
    return _combine(_one, input, mask).cumprod(dim, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The maximum over `dim` of the elements the mask keeps (-inf where it keeps none)."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine(_lowest, input, mask)
    return combined.amax(_canonical_dim(dim, combined.ndim), bool(keepdim)).to(dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The minimum over `dim` of the elements the mask keeps (inf where it keeps none)."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine(_highest, input, mask)
    return combined.amin(_canonical_dim(dim, combined.ndim), bool(keepdim)).to(dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The index of the maximum over `dim` among the elements the mask keeps."""
    dtype = input.dtype if dtype is None else dtype
    return _combine(_lowest, input, mask).argmax(dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The index of the minimum over `dim` among the elements the mask keeps."""
    dtype = input.dtype if dtype is None else dtype
    return _combine(_highest, input, mask).argmin(dim, bool(keepdim)).to(dtype)


def _count(input, dim, keepdim, mask):  # noqa: A002
    if mask is None:
        return sum(ones(tuple(input.shape), dtype=dtypes.int64), dim, keepdim=keepdim)
    return _input_mask(input, mask).sum(dim=dim, keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The mean over `dim` of the elements the mask keeps (NaN where it keeps none)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: torch.{dtype.name}")
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The median along `dim` of the elements the mask keeps (NaN where it keeps none)."""
    dtype = input.dtype if dtype is None else dtype
    dim = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtypes.float32)  # noqa: A001
    output = _combine(_nan, input, mask).nanmedian(dim, keepdim).values
    if is_float:
        return output
    if not bool(output.isnan().any()):
        return output.to(dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating "
                     "point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """log of the sum of exp over `dim` of the elements the mask keeps."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _combine(_lowest, input, mask).logsumexp(dims, keepdim=keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):  # noqa: A002
    """log(exp(input) + exp(other)), each masked-out element counting as -inf."""
    dtype = input.dtype if dtype is None else dtype
    return _logaddexp(_combine(_lowest, input, input_mask),
                      _combine(_lowest, other, other_mask)).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The vector `ord`-norm over `dim` of the elements the mask keeps."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine(_norm_identity, input, mask, ord)
    return vector_norm(combined, ord, _canonical_dim(dim, input.ndim), bool(keepdim),
                       dtype=dtype)


def _inexact(dtype) -> bool:
    return dtype.is_floating_point or dtype.is_complex


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):  # noqa: A002
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    value = 1.0
    if unbiased is not None:
        value = 1.0 if unbiased else 0.0
    if correction is not None:
        value = float(correction)
    if dtype is None:
        dtype = input.dtype if _inexact(input.dtype) else dtypes.float32
    compute = dtype if _inexact(dtype) else dtypes.float32
    count = _count(input, dim, True, mask)
    sample_mean = ew.div(sum(input, dim, keepdim=True, dtype=dtype, mask=mask), count)
    x = ew.sub(input, sample_mean)
    # torch's masked variance of complex input sums x conj(x) and stays complex.
    total = sum(x * conj(x), dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if value != 0:
        count = count.to(compute.to_real()) - value
        count = ew.maximum(count, count.new_zeros([]))
    output = ew.div(total, count).to(dtype)
    return ew.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,  # noqa: A002
        mask=None):
    """The variance over `dim` of the elements the mask keeps (N - correction divides)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,  # noqa: A002
        mask=None):
    """The standard deviation over `dim` of the elements the mask keeps."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _softmax_family(name: str, identity, inner, sign: int = 1):
    """torch.masked's `name`: `inner` (a function of nn.functional's softmax module) of
    sign * input along `dim`, the masked-out elements standing for `identity`'s value."""
    def function(input, dim, *, dtype=None, mask=None):  # noqa: A002
        dtype = input.dtype if dtype is None else dtype
        dim = _canonical_dim(dim, input.ndim)[0]
        combined = _combine(identity, input, mask)
        return inner(combined if sign > 0 else -combined, dim, dtype=dtype)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"{name} along `dim` of the elements the mask keeps (the others count "
                        f"as {'-inf' if identity is _lowest else 'inf'}).")
    return function


softmax = _softmax_family("softmax", _lowest, _softmax.softmax)
log_softmax = _softmax_family("log_softmax", _lowest, _softmax.log_softmax)
softmin = _softmax_family("softmin", _highest, _softmax.softmax, sign=-1)  # softmax(-x)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):  # noqa: A002
    """input divided by its masked `ord`-norm along `dim` (at least eps); masked-out elements
    are 0."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine(_zero, input, mask)
    norms = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return ew.div(combined, ew.maximum(norms, norms.new_full([], eps)))
