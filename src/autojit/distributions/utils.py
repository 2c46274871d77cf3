"""autojit.distributions.utils: the helpers torch.distributions.utils has: broadcasting the
parameters of a distribution (broadcast_all), the conversions between probabilities and logits
(logits_to_probs, probs_to_logits, clamp_probs), lazy_property, and the packing of
lower-triangular matrices (tril_matrix_to_vec, vec_to_tril_matrix).

Everything is written in autojit ops, so what the distributions build on these is
differentiable and traces into a compiled function like any other op.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from ..autograd import enable_grad
from ..ops import functional as F
from ..ops.nn.softmax import softmax
from ..tensor import dtypes
from ..tensor.creation import randn, tensor
from ..tensor.tensor import Size, Tensor
from ..tensor.type_info import finfo

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_shape(*shapes) -> Size:
    """The shape that tensors of `shapes` broadcast to, with torch's error when there is none
    (the dims named from the right, as in torch.broadcast_tensors)."""
    ndim = max((len(shape) for shape in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        for offset, extent in enumerate(reversed(tuple(shape))):
            position = ndim - 1 - offset
            current = result[position]
            if extent == 1 or extent == current:
                continue
            if current == 1:
                result[position] = extent
                continue
            raise RuntimeError(f"The size of tensor a ({current}) must match the size of tensor "
                               f"b ({extent}) at non-singleton dimension {position}")
    return Size(result)


def broadcast_tensors(*values: Tensor) -> tuple:
    """torch.broadcast_tensors: each tensor expanded (a view) to the common shape."""
    shape = broadcast_shape(*(tuple(value.shape) for value in values))
    return tuple(value if tuple(value.shape) == shape else value.expand(shape)
                 for value in values)


def broadcast_all(*values) -> tuple:
    """The values (tensors or Python numbers) as tensors of one broadcast shape. Numbers become
    tensors of the first tensor's dtype and device, or of the default dtype when all are
    numbers."""
    for value in values:
        if not isinstance(value, (Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, "
                             "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(value, Tensor) for value in values):
        first = next((value for value in values if isinstance(value, Tensor)), None)
        options = ({"dtype": dtypes.get_default_dtype()} if first is None
                   else {"dtype": first.dtype, "device": first.device})
        values = tuple(value if isinstance(value, Tensor) else tensor(value, **options)
                       for value in values)
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device) -> Tensor:
    """Standard normal draws of `shape`: a random graph input when traced."""
    return randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """`value` summed over its `dim` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: the sigmoid for binary (Bernoulli) logits, else the softmax
    over the last dim (logits of categories)."""
    if is_binary:
        return F.sigmoid(logits)
    return softmax(logits, -1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept within [eps, 1 - eps] of their dtype, so that their logarithms (and
    those of 1 - p) stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped first): log(p) - log1p(-p) for binary
    probabilities, log(p) for the categories of the last dim."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


class lazy_property:
    """A decorator for a value computed on first access and then kept on the instance (it
    replaces the descriptor in the instance's __dict__). The value is computed with grad
    enabled, so that a parameter derived inside `no_grad` (sample) is still differentiable."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: a property to documentation tools, a
    lazy_property to Distribution's argument validation (which skips those not yet computed)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


class BinaryProbability:
    """The success probability of a binary trial, given as `probs` or as `logits`; the form not
    given is computed on first use. Mixed into Bernoulli, Geometric, LogitRelaxedBernoulli and
    the counted trials (Binomial, NegativeBinomial)."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class GivenParameter:
    """A distribution whose one given parameter tensor is `_param` (probs or logits, as given):
    its shape and the new tensors made like it."""

    def _new(self, *args, **kwargs):
        return self._param.new_tensor(*args, **kwargs)

    @property
    def param_shape(self):
        return self._param.size()


def _tril_positions(n: int, diag: int):
    """Row and column indices of the entries of an n x n matrix on or below diagonal `diag`, in
    row order (constant index tensors, so the gather traces)."""
    rows, cols = np.nonzero(np.arange(n) < np.arange(n).reshape(-1, 1) + (diag + 1))
    return (tensor(rows.astype(np.int64)), tensor(cols.astype(np.int64)))


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries on and below diagonal `diag` of a (batched) square matrix, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_positions(n, diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The (batched) lower-triangular square matrix whose entries on and below diagonal `diag`
    are `vec`'s, in row order; the inverse of tril_matrix_to_vec."""
    # The positive root of n^2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 len = 0.
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    rows, cols = _tril_positions(n, diag)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., rows, cols] = vec
    return mat


def _log1p_exp(x: Tensor) -> Tensor:
    """log(1 + exp(x)) exactly (logaddexp with 0, no threshold), whose derivative is
    sigmoid(x): binary_cross_entropy_with_logits's terms."""
    return F.logaddexp(x, x.new_zeros(()))


def _binary_cross_entropy_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """-(target log sigmoid(logits) + (1 - target) log sigmoid(-logits)), elementwise."""
    return _log1p_exp(logits) - logits * target


def _one_hot(indices: Tensor, count: int, dtype) -> Tensor:
    """The one-hot vectors of `indices` (a new last dim of `count`), in `dtype`."""
    from ..tensor.creation import arange

    return (indices.unsqueeze(-1) == arange(count, device=indices.device)).to(dtype)
