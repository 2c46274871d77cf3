"""The transforms over whole events, re-exported by transforms.py with torch's names: batch
dims read as event dims (IndependentTransform), reshaping (ReshapeTransform), onto the
simplex (SoftmaxTransform, StickBreakingTransform), onto Cholesky factors and positive-definite
matrices (LowerCholeskyTransform, CorrCholeskyTransform, PositiveDefiniteTransform), the
joining transforms (CatTransform, StackTransform) and a distribution's CDF
(CumulativeDistributionTransform).
"""

from __future__ import annotations

import math

from ..ops import functional as F
from ..ops.linalg.namespace import cholesky
from ..tensor.creation import eye
from ..tensor.tensor import Size
from ..tensor.type_info import finfo
from . import constraints
from .transforms import Transform, _clipped_sigmoid, _softplus
from .utils import _sum_rightmost, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix


class IndependentTransform(Transform):
    """`base_transform` with its `reinterpreted_batch_ndims` rightmost batch dims counted in
    the event: its log-determinant is summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The rightmost dims of `in_shape` reshaped to `out_shape` (a Jacobian of determinant 1)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def _moved_shape(self, shape, source, target):
        if len(shape) < len(source):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(source)
        if tuple(shape[cut:]) != tuple(source):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got "
                             f"{tuple(source)}")
        return Size(tuple(shape[:cut]) + tuple(target))

    def forward_shape(self, shape):
        return self._moved_shape(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._moved_shape(shape, self.out_shape, self.in_shape)



def _pad_last(x, before: int, after: int):
    """x with `before` ones prepended and `after` ones appended along its last dim."""
    parts = []
    if before:
        parts.append(x.new_ones(tuple(x.shape[:-1]) + (before,)))
    parts.append(x)
    if after:
        parts.append(x.new_ones(tuple(x.shape[:-1]) + (after,)))
    return F.cat(parts, -1)


def _at_least_one_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by exp and normalization (not injective: the
    inverse is log, up to a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _at_least_one_dim(shape)
        return shape

    def inverse_shape(self, shape):
        _at_least_one_dim(shape)
        return shape


def _stick_offsets(x, count: int):
    """count, count - 1, ..., 1 in x's dtype: the number of pieces left at each break."""
    return count + 1 - x.new_ones(count).cumsum(-1)


class StickBreakingTransform(Transform):
    """Vectors of K - 1 reals to the K-simplex by breaking a stick: each coordinate takes a
    sigmoid fraction of what is left (bijective, with an offset so that 0 maps to the
    center)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        offset = _stick_offsets(x, x.shape[-1])
        fraction = _clipped_sigmoid(x - offset.log())
        remaining = (1 - fraction).cumprod(-1)
        return _pad_last(fraction, 0, 1) * _pad_last(remaining, 1, 0)

    def _inverse(self, y):
        cropped = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(cropped.shape[-1]).cumsum(-1)
        left = (1 - cropped.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return cropped.log() - left.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        shifted = x - _stick_offsets(x, x.shape[-1]).log()
        # -x + logsigmoid(x) + log y_i, summed over the event.
        return (-shifted - _softplus(-shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _at_least_one_dim(shape)
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _at_least_one_dim(shape)
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal: the
    strict lower triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones: L L^T of the lower Cholesky
    transform's L."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D (D - 1) / 2 reals to Cholesky factors of D x D correlation matrices: tanh
    to (-1, 1), then each row a stick broken on the unit sphere (the LKJ construction)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = finfo(x.dtype).eps
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # Each row: r_i times the square root of what the earlier entries left of 1.
        left = (1 - r * r).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * _pad_last(left[..., :-1], 1, 0)

    def _inverse(self, y):
        left = _pad_last((1 - (y * y).cumsum(-1))[..., :-1], 1, 0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        _at_least_one_dim(shape)
        count = shape[-1]
        size = round((0.25 + 2 * count) ** 0.5 + 0.5)
        if size * (size - 1) // 2 != count:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (size, size)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        size = shape[-1]
        return tuple(shape[:-2]) + (size * (size - 1) // 2,)


def _check_dim(x, dim: int):
    if not -x.dim() <= dim < x.dim():
        raise AssertionError(f"dim {dim} out of range for value with {x.dim()} dimensions")


class CatTransform(Transform):
    """The transforms `tseq` applied to consecutive slices along `dim` of `lengths` (1 each by
    default), joined as torch.cat joins."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, x):
        _check_dim(x, self.dim)
        if x.shape[self.dim] != self.length:
            raise AssertionError(f"size {x.shape[self.dim]} at dim {self.dim} must match "
                                 f"total length {self.length}")
        start = 0
        for length in self.lengths:
            yield x.narrow(self.dim, start, length)
            start = start + length

    def _call(self, x):
        return F.cat([t(part) for t, part in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return F.cat([t.inv(part) for t, part in zip(self.transforms, self._slices(y))],
                     self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for t, x_part, y_part in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(x_part, y_part)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return F.cat(terms, dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """The transforms `tseq` applied to the slices of `dim`, joined as torch.stack joins."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        _check_dim(z, self.dim)
        if z.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"size {z.shape[self.dim]} at dim {self.dim} must match "
                                 f"the number of transforms {len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return F.stack([t(part) for part, t in zip(self._slice(x), self.transforms)], self.dim)

    def _inverse(self, y):
        return F.stack([t.inv(part) for part, t in zip(self._slice(y), self.transforms)],
                       self.dim)

    def log_abs_det_jacobian(self, x, y):
        return F.stack([t.log_abs_det_jacobian(x_part, y_part) for x_part, y_part, t
                        in zip(self._slice(x), self._slice(y), self.transforms)], self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = the CDF of a univariate `distribution` at x; its log-determinant is the log
    density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
