"""Statistics and finite differences: std_mean, var_mean, cov, corrcoef, mode, histogram,
diff, gradient, trapezoid (trapz), cumulative_trapezoid and unique_consecutive.

All but unique_consecutive are composites of the reductions, layout and indexing ops, with
torch's formulas in torch's order (aten's Correlation.cpp, Integration.cpp, ReduceOps.cpp), so
their values and gradients are torch's and they compile. mode finds each row's most frequent
value by run lengths of the sorted row, and gathers it back from the input (the gradient goes
to the position torch picks, the value's last occurrence). histogram counts with searchsorted
and scatter_add against bin edges computed as torch's linspace computes them; it is not
differentiable, as torch's is not. unique_consecutive's result has as many entries as the data
has runs: eagerly it runs on the host, and while tracing, as unique, it takes the number of
runs from the call (checked on every run) and builds the rest from graph ops.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from ..tensor import dtypes
from ..tensor.tensor import Tensor, normalize_dim
from . import composite, layout, registry
from . import elementwise as ew
from .counting import is_traced, not_differentiable, refuse_traced_differentiable, runs_traced
from .indexing import gather
from .indexing.scatter import scatter_add
from .limited_rules import refuse_limited
from .out_argument import write_results
from .reduction import amax, amin, argmax, sum_
from .scans import cumsum
from .searching import searchsorted
from .sorting import sort

mode_return = namedtuple("mode", ["values", "indices"])
histogram_return = namedtuple("histogram", ["hist", "bin_edges"])
_SCALAR_TYPE = dtypes.SCALAR_TYPE_NAMES


def _concrete(*tensors) -> bool:
    """Whether the values are known now (eagerly), so that torch's checks of values can run."""
    return all(not isinstance(t, Tensor) or t._payload is not None for t in tensors)


# ---- moments ---------------------------------------------------------------------------------

def _moments(name: str, input, dim, unbiased, keepdim, correction, root: bool):
    if isinstance(dim, bool):  # torch's (input, unbiased) form
        dim, unbiased = None, dim
    if input.dtype.category < dtypes.FLOATING:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    spread = (composite.std if root else composite.var)(
        input, dim, correction=correction, keepdim=keepdim)
    if input.dtype is dtypes.complex32:  # torch's kernel of both takes the float16 parts
        from .complex_numbers import make_complex

        return spread, make_complex(composite.mean(input.real, dim, keepdim),
                                    composite.mean(input.imag, dim, keepdim))
    return spread, composite.mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *,  # noqa: A002
             correction=None):
    """(std, mean) over `dim` (all when None), in one call; `correction` (or unbiased) as
    std's."""
    return registry.share_node(  # one grad_fn for both, as torch's StdMeanBackward0
        _moments("std_mean", input, dim, unbiased, keepdim, correction, True), (input,),
        "StdMeanBackward0")


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *,  # noqa: A002
             correction=None):
    """(var, mean) over `dim` (all when None), in one call; `correction` (or unbiased) as
    var's."""
    return registry.share_node(  # one grad_fn for both, as torch's VarMeanBackward0
        _moments("var_mean", input, dim, unbiased, keepdim, correction, False), (input,),
        "VarMeanBackward0")


def _check_weights(weights, kind: str, observations: int, integral: bool) -> None:
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got "
                           f"{kind} with {weights.ndim} dimensions")
    wanted = weights.dtype.category == dtypes.INTEGER if integral else \
        weights.dtype.is_floating_point
    if not wanted:
        raise RuntimeError(f"cov(): expected {kind} to have "
                           f"{'integral' if integral else 'floating point'} dtype but got "
                           f"{kind} with {_SCALAR_TYPE[weights.dtype.name]} dtype")
    if weights.numel() != observations:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are "
                           f"observations in the input but got {weights.numel()} != "
                           f"{observations}")
    if observations and _concrete(weights) and bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance matrix of the variables in the rows of x (observations in its columns),
    with frequency and observation weights as torch's."""
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = layout.reshape(input, (1, -1)) if input.ndim < 2 else input
    observations = x.shape[1]
    weights = None
    if fweights is not None:
        _check_weights(fweights, "fweights", observations, integral=True)
        weights = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", observations, integral=False)
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        total = observations
    else:
        total = sum_(weights)
        if _concrete(total) and bool(total == 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    average = sum_(x if weights is None else x * weights, 1) / total
    if weights is not None and correction != 0 and aweights is not None:
        factor = total - correction * sum_(weights * aweights) / total
    else:
        factor = total - correction
    if isinstance(factor, Tensor):
        if _concrete(factor) and bool(factor <= 0):
            _warn_degrees()
        factor = ew.where(factor <= 0, 0, factor)
    elif factor <= 0:
        _warn_degrees()
        factor = 0
    centered = x - layout.unsqueeze(average, 1)
    weighted = centered if weights is None else centered * weights
    # conj(): the Hermitian covariance of complex variables, as torch's
    product = centered.matmul(layout.transpose(weighted, 0, 1).conj())
    return layout.squeeze(ew.div(product, factor))


def _warn_degrees() -> None:
    warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                  "the number of observations.", UserWarning, stacklevel=3)


def corrcoef(input):  # noqa: A002
    """The Pearson correlation coefficients of the variables in the rows of x, clipped to
    [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c  # NaN for a variance of 0, inf or NaN, else 1
    variance = c.diagonal()
    deviation = ew.sqrt(variance.real if variance.dtype.is_complex else variance)
    c = c / layout.reshape(deviation, (-1, 1))
    c = c / layout.reshape(deviation, (1, -1))
    if c.dtype.is_complex:  # each part clipped, as torch's
        from .complex_numbers import make_complex

        return make_complex(composite.clamp(c.real, -1, 1), composite.clamp(c.imag, -1, 1))
    return composite.clamp(c, -1, 1)


# ---- mode ---------------------------------------------------------------------------------------

def mode(input, dim: int = -1, keepdim: bool = False, *, out=None):  # noqa: A002
    """(values, indices): the most frequent value along `dim` (the smallest of the most
    frequent) and the index of its last occurrence; the gradient goes to that position.
    `out`: a (values, indices) pair written, with torch's checks of each one's dtype."""
    if out is not None:
        values, indices = _mode(input, dim, keepdim)
        return mode_return(*write_results("mode", out, (values, indices),
                                          ("values output", "indices output"),
                                          inputs=(input,)))
    return _mode(input, dim, keepdim)


def _mode(input, dim: int, keepdim: bool):  # noqa: A002
    x = input
    refuse_limited("mode_cpu", x)
    if x.ndim == 0:
        normalize_dim(dim, 1)
        from .elementwise import fill_like

        return mode_return(x.clone(), fill_like(x.detach(), 0).to(dtypes.int64))
    dim = normalize_dim(dim, x.ndim)
    if x.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    moved = layout.movedim(x.detach(), dim, -1)
    ordered, order = sort(moved, -1, stable=True)
    n = moved.shape[-1]
    new_value = ordered[..., 1:] != ordered[..., :-1]
    starts = layout.cat([ew.fill_like(ordered[..., :1], True).to(dtypes.bool_), new_value], -1)
    group = cumsum(starts.to(dtypes.int64), -1) - 1
    counts = scatter_add(ew.fill_like(group, 0), -1, group, ew.fill_like(group, 1))
    run = gather(counts, -1, group)
    # The first position of the longest run (the smallest value among ties) ...
    first = argmax(run, -1, keepdim=True)
    # ... and its last, whose original index is the largest of that value's (sort is stable).
    last = first + gather(run, -1, first) - 1
    index = layout.movedim(gather(order, -1, composite.clamp(last, max=n - 1)), -1, dim)
    values = gather(x, dim, index)
    if not keepdim:
        values, index = layout.squeeze(values, dim), layout.squeeze(index, dim)
    return mode_return(values, index)


# ---- histogram ---------------------------------------------------------------------------------

def _linspace(start, end, steps: int, like: Tensor) -> Tensor:
    """torch's linspace, from tensors: start + step i in the first half, end - step (steps - 1
    - i) in the second, so that both ends are exact."""
    from ..tensor.creation import arange

    i = arange(steps, dtype=like.dtype, device=like.device)
    step = (end - start) / (steps - 1)
    half = steps // 2
    return ew.where(i < half, start + step * i, end - step * (steps - 1 - i))


def _format_edge(value: float) -> str:
    return f"{value:g}"


def _data_range(x: Tensor, low, high):
    """torch's outer edges: the given range, or the data's, widened by 0.5 each way when
    empty; [0, 1] for no data."""
    if low is None:
        if x.numel() == 0:
            return 0.0, 1.0
        low, high = amin(x.detach(), None), amax(x.detach(), None)
        if _concrete(low):
            left, right = float(low), float(high)
            if not (math.isfinite(left) and math.isfinite(right)):
                raise RuntimeError(f"torch.histogramdd: dimension 0's range "
                                   f"[{_format_edge(left)}, {_format_edge(right)}] is not finite")
        same = low == high
        return ew.where(same, low - 0.5, low), ew.where(same, high + 0.5, high)
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                           f"{_format_edge(low)} max {_format_edge(high)} for dimension 0")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_format_edge(low)}, "
                           f"{_format_edge(high)}] is not finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return float(low), float(high)


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False,  # noqa: A002
              out=None):
    """(hist, bin_edges): the histogram of x's values in `bins` equal bins over `range` (the
    data's by default), or between the edges of the 1-D tensor `bins`; weighted by `weight`,
    normalized to a density with `density`. Not differentiable."""
    x = input
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_SCALAR_TYPE[x.dtype.name]}'")
    if weight is not None:
        if tuple(weight.shape) != tuple(x.shape):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{[*x.shape, 1]} and weight with shape {list(weight.shape)}")
        if weight.dtype is not x.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                f"should have the same dtype, but got input({_c_name(x.dtype)}), and "
                f"weight({_c_name(weight.dtype)})")
    flat = x.detach().reshape(-1)
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.ndim} dimensions in the bins tensor for dimension 0")
        if bins.shape[0] - 1 <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins.shape[0] - 1} "
                               "for dimension 0")
        if bins.dtype is not x.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_c_name(x.dtype)} and bins for dimension 0 with "
                f"dtype {_c_name(bins.dtype)}")
        edges = bins.detach()
        count = bins.shape[0] - 1
    else:
        count = int(bins)
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for "
                               "dimension 0")
        low, high = _data_range(flat, *(range if range is not None else (None, None)))
        edges = _linspace(low, high, count + 1, flat)
    counted = (flat >= edges[0]) & (flat <= edges[-1])
    position = composite.clamp(searchsorted(edges, flat, right=True) - 1, 0, count - 1)
    position = ew.where(counted, position, 0)
    values = ew.fill_like(flat, 1) if weight is None else weight.detach().reshape(-1)
    values = ew.where(counted, values, 0)
    hist = scatter_add(ew.fill_like(edges[:count], 0), 0, position, values)
    if density:
        hist = hist / sum_(hist) / (edges[1:] - edges[:-1])
    result = histogram_return(hist, edges)
    if out is not None:
        from .out_argument import write_results

        result = histogram_return(*write_results("histogram", out, tuple(result),
                                                 ("expected", "expected"), inputs=(x,)))
    return result


def _c_name(dtype) -> str:
    return dtypes.C_TYPE_NAMES[dtype.name]


# ---- differences and integrals -----------------------------------------------------------------

def _check_diff_operand(x: Tensor, other, dim: int) -> None:
    if other is None:
        return
    if other.ndim != x.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for axis in builtins_range(other.ndim):
        if axis != dim and other.shape[axis] != x.shape[axis]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({axis}) = "
                f"{x.shape[axis]}, but got tensor.size({axis}) = {other.shape[axis]}")


builtins_range = range


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):  # noqa: A002
    """The n-th forward difference along `dim` (`x[1:] - x[:-1]`, n times; logical XOR of
    bools), after `prepend` and `append` are joined to x along dim."""
    x = input
    if x.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = normalize_dim(dim, x.ndim)
    _check_diff_operand(x, prepend, dim)
    _check_diff_operand(x, append, dim)
    if n == 0:
        return x.clone()
    if prepend is not None or append is not None:
        x = layout.cat([t for t in (prepend, x, append) if t is not None], dim)
    length = x.shape[dim] - 1
    for _ in builtins_range(min(n, x.shape[dim])):
        later, earlier = layout.narrow(x, dim, 1, length), layout.narrow(x, dim, 0, length)
        x = ew.logical_xor(later, earlier) if x.dtype is dtypes.bool_ else later - earlier
        length -= 1
    return x


def _spacing_scalars(spacing, dims: tuple, given_dims: bool, ndim: int) -> list:
    if spacing is None:  # torch's "unspecified": a step of 1
        spacing = 1
    if isinstance(spacing, (int, float)):
        return [spacing] * len(dims)
    spacing = list(spacing)
    if not given_dims and len(spacing) != ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
            f"of length {len(spacing)}")
    if given_dims and len(spacing) != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{len(spacing)} and a dim argument of length {len(dims)}.")
    return spacing


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1):  # noqa: A002
    """The derivative of x sampled on a grid, one tensor per dim of `dim` (all by default):
    central differences inside, one-sided ones of order `edge_order` (1 or 2) at the edges;
    `spacing` is the step (a number, one per dim) or the coordinates (1-D tensors)."""
    x = input
    if x.dtype is dtypes.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if isinstance(spacing, Tensor):
        raise TypeError("gradient() received an invalid combination of arguments - got "
                        "(Tensor, spacing=Tensor), but expected one of:")
    given_dims = dim is not None
    dims = tuple(range(x.ndim)) if dim is None else (
        (dim,) if isinstance(dim, int) else tuple(dim))
    spacing = _spacing_scalars(spacing, dims, given_dims, x.ndim)
    for step in spacing:
        if isinstance(step, Tensor) and step.device != x.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, "
                               f"but got devices {x.device} and {step.device}!")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = tuple(normalize_dim(d, x.ndim) for d in dims)
    for index, d in enumerate(dims):
        if d in dims[:index]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    results = []
    for d, step in zip(dims, spacing, strict=True):
        if isinstance(step, Tensor):
            if step.ndim != 1:
                raise RuntimeError("torch.gradient expected each element of spacing to have one "
                                   f"dimension, but got an element with {step.ndim} dimensions!")
            results.append(_gradient_coordinates(x, step, d, edge_order))
        else:
            results.append(_gradient_uniform(x, step, d, edge_order))
    return tuple(results)


def _part(x: Tensor, dim: int, start, stop=None) -> Tensor:
    """x[start:stop] along dim, Python's slice rules."""
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, stop)
    return x[tuple(index)]


def _gradient_uniform(x: Tensor, step, dim: int, edge_order: int) -> Tensor:
    center = (_part(x, dim, 2) - _part(x, dim, 0, -2)) / step
    if edge_order == 1:
        first = (_part(x, dim, 1, 2) - _part(x, dim, 0, 1)) / step
        last = (_part(x, dim, -1) - _part(x, dim, -2, -1)) / step
    else:
        first = (_part(x, dim, 0, 1) * -1.5 + _part(x, dim, 1, 2) * 2
                 - _part(x, dim, 2, 3) * 0.5) / step
        last = (_part(x, dim, -3, -2) * 0.5 + _part(x, dim, -2, -1) * -2
                + _part(x, dim, -1) * 1.5) / step
    return layout.cat([first, center / 2, last], dim)


def _gradient_coordinates(x: Tensor, coordinates: Tensor, dim: int, edge_order: int) -> Tensor:
    shape = [1] * x.ndim
    shape[dim] = -1
    dx = diff(coordinates, 1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = layout.reshape(-dx2 / (dx1 * (dx1 + dx2)), shape)
    b = layout.reshape((dx2 - dx1) / (dx1 * dx2), shape)
    c = layout.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
    center = a * _part(x, dim, 0, -2) + b * _part(x, dim, 1, -1) + c * _part(x, dim, 2)
    if edge_order == 1:
        first = (_part(x, dim, 1, 2) - _part(x, dim, 0, 1)) / dx[0]
        last = (_part(x, dim, -1) - _part(x, dim, -2, -1)) / dx[-1]
    else:
        h0, h1 = dx[0], dx[1]
        first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * _part(x, dim, 0, 1)
                 + (h0 + h1) / (h0 * h1) * _part(x, dim, 1, 2)
                 + (-h0) / (h1 * (h0 + h1)) * _part(x, dim, 2, 3))
        g1, g2 = dx[-1], dx[-2]
        last = (g1 / (g2 * (g1 + g2)) * _part(x, dim, -3, -2)
                - (g1 + g2) / (g1 * g2) * _part(x, dim, -2, -1)
                + (2 * g1 + g2) / (g1 * (g1 + g2)) * _part(x, dim, -1))
    return layout.cat([first, center, last], dim)


def _check_real(name: str, parameter: str, *tensors) -> None:
    if any(t.dtype is dtypes.bool_ for t in tensors):
        raise RuntimeError(f"{name}: received a bool input for {parameter}, but bool is not "
                           "supported")


def _dx_along(x: Tensor, y: Tensor, dim: int, name: str) -> Tensor:
    """The differences of the sample points x, shaped to broadcast against y's along dim."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = layout.reshape(x, shape)
    elif x.ndim < y.ndim:
        x = layout.reshape(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    return _part(x, dim, 1) - _part(x, dim, 0, -1)


def _check_dx(dx, name: str) -> None:
    if isinstance(dx, bool) or not isinstance(dx, (int, float)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The integral of y along `dim` by the trapezoidal rule, at the sample points x (a
    tensor) or with spacing dx (1 by default)."""
    dim = normalize_dim(dim, y.ndim)
    if y.shape[dim] == 0:  # numpy's 0 for no samples
        return ew.fill_like(sum_(y.detach(), dim).to(y.dtype), 0)
    if x is not None:
        if dx is not None:
            raise RuntimeError("trapezoid: received both x and dx, only one of them is allowed")
        _check_real("trapezoid", "`x` or `y`", y, x)
        step = _dx_along(x, y, dim, "trapezoid")
        return sum_((_part(y, dim, 0, -1) + _part(y, dim, 1)) * step, dim) / 2.0
    dx = 1 if dx is None else dx
    _check_real("trapezoid", "`y`", y)
    _check_dx(dx, "trapezoid")
    return (sum_(y, dim) - (layout.select(y, dim, 0) + layout.select(y, dim, -1)) * 0.5) * dx


def trapz(y, x=None, *, dx=None, dim: int = -1):
    """trapezoid under its older name: trapz(y, x, dim=-1) or trapz(y, dx=1, dim=-1)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The running integral of y along `dim` by the trapezoidal rule (one entry fewer than y),
    at the sample points x or with spacing dx (1 by default)."""
    dim = normalize_dim(dim, y.ndim)
    if x is not None:
        _check_real("cumulative_trapezoid", "`x` or `y`", y, x)
        step = _dx_along(x, y, dim, "cumulative_trapezoid")
        return cumsum((_part(y, dim, 0, -1) + _part(y, dim, 1)) * step, dim) / 2.0
    dx = 1 if dx is None else dx
    _check_real("cumulative_trapezoid", "`y`", y)
    _check_dx(dx, "cumulative_trapezoid")
    return cumsum(dx / 2.0 * (_part(y, dim, 0, -1) + _part(y, dim, 1)), dim)


# ---- unique_consecutive --------------------------------------------------------------------------

def unique_consecutive(input, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim=None):
    """x with each run of equal consecutive values (slices along `dim` when given) reduced to
    one, with, as asked, each entry's run index and each run's length. The result's size
    depends on the data: while tracing, the number of runs is a size the graph computes
    (counting.runs_traced)."""
    x = input
    if x.dtype.is_complex:
        raise NotImplementedError(f"\"unique\" not implemented for "
                                  f"'{dtypes.scalar_type_name(x.dtype)}'")
    refuse_traced_differentiable(x, "unique_consecutive()")
    if is_traced(x) and (dim is None or x.ndim):
        return runs_traced(x, dim, return_inverse, return_counts, ordered=False)
    data = x._host("unique_consecutive()")
    if dim is None:
        flat = data.reshape(-1)
        starts = np.ones(flat.shape[0], bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse_shape = data.shape
    else:
        if data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = normalize_dim(dim, data.ndim)
        moved = np.moveaxis(data, axis, 0).reshape(data.shape[axis], -1)
        starts = np.ones(moved.shape[0], bool)
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = np.compress(starts, data, axis=axis)
        inverse_shape = (data.shape[axis],)
    group = np.cumsum(starts) - 1
    result = [not_differentiable(x, _on_device_of(x, values, x.dtype), "unique_consecutive")]
    if return_inverse:
        result.append(_on_device_of(x, group.reshape(inverse_shape).astype(np.int64),
                                    dtypes.int64))
    if return_counts:
        counts = np.diff(np.append(np.flatnonzero(starts), starts.shape[0]))
        result.append(_on_device_of(x, counts.astype(np.int64), dtypes.int64))
    return result[0] if len(result) == 1 else tuple(result)


def _on_device_of(x: Tensor, array: np.ndarray, dtype) -> Tensor:
    result = Tensor._make(np.asarray(array, order="C"), dtype)  # keeps a 0-d result 0-d
    return result.to(x.device) if x.is_cuda else result
