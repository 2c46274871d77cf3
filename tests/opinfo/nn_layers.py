"""Op table rows for the layer functions of autojit.nn.functional: convolution, pooling, padding,
normalization and the robust regression losses.

These are composites (nn/functional/conv.py, nn/functional/norm.py), but for convolution, a
primitive with its two backward products (ops/nn/convolution.py), for max pooling, a pair of
primitives (ops/nn/pooling.py) whose composite compiled graphs hold, and for batch_norm in
training, primitives with torch's backward formula (ops/nn/batch_norm.py). The references are
written independently of them: convolution and pooling loop over output positions and reduce
each window directly (the implementation instead slices once per kernel offset), computed in
float64 and returned in the input's dtype. Samples stay small (batch 2, 2 or 3 channels, 5x5
at most) so gradgradcheck stays fast, and loss samples keep away from the kinks.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import autojit.nn.functional as F

from . import OpInfo, Sample, positive, uniform
from .nn import _in_dtype, _reduce


def _pair(value, count):
    if isinstance(value, int):
        return (value,) * count
    value = tuple(value)
    return value * count if len(value) == 1 else value


# ---- convolution --------------------------------------------------------------------------------


def _conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    spatial = weight.ndim - 2
    batched = x.ndim == spatial + 2
    if not batched:
        x = x[None]
    stride, dilation = _pair(stride, spatial), _pair(dilation, spatial)
    kernel = weight.shape[2:]
    if padding == "valid":
        amounts = [(0, 0)] * spatial
    elif padding == "same":
        amounts = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                   for k, d in zip(kernel, dilation)]
    else:
        amounts = [(p, p) for p in _pair(padding, spatial)]
    x = np.pad(x, [(0, 0), (0, 0), *amounts])
    out_sizes = [(n - d * (k - 1) - 1) // s + 1
                 for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation)]
    out_channels = weight.shape[0]
    per_group_in, per_group_out = x.shape[1] // groups, out_channels // groups
    result = np.zeros((x.shape[0], out_channels, *out_sizes))
    axes = list(range(1, spatial + 2))
    for position in itertools.product(*(range(o) for o in out_sizes)):
        window = tuple(slice(p * s, p * s + d * (k - 1) + 1, d)
                       for p, s, d, k in zip(position, stride, dilation, kernel))
        for group in range(groups):
            inputs = x[(slice(None), slice(group * per_group_in, (group + 1) * per_group_in),
                        *window)]
            kernels = weight[group * per_group_out:(group + 1) * per_group_out]
            result[(slice(None), slice(group * per_group_out, (group + 1) * per_group_out),
                    *position)] = np.tensordot(inputs, kernels, axes=(axes, axes))
    if bias is not None:
        result += bias.reshape((-1,) + (1,) * spatial)
    return result if batched else result[0]


def _conv2d_samples(rng, dtype):
    x = uniform(rng, (1, 2, 5, 5), dtype)
    return [
        Sample((uniform(rng, (2, 2, 5, 5), dtype), uniform(rng, (3, 2, 3, 3), dtype),
                uniform(rng, (3,), dtype))),
        Sample((x, uniform(rng, (2, 2, 2, 3), dtype)), {"stride": 2, "padding": (1, 0)}),
        Sample((x, uniform(rng, (2, 2, 2, 2), dtype), uniform(rng, (2,), dtype)),
               {"padding": "same", "dilation": 2}),
        Sample((uniform(rng, (2, 4, 4, 4), dtype), uniform(rng, (4, 2, 2, 2), dtype)),
               {"groups": 2, "padding": "valid"}),
        Sample((uniform(rng, (2, 4, 4), dtype), uniform(rng, (3, 2, 3, 1), dtype)),
               {"stride": (1, 2), "padding": 1}),
    ]


def _conv1d_samples(rng, dtype):
    x = uniform(rng, (2, 3, 7), dtype)
    return [
        Sample((x, uniform(rng, (4, 3, 3), dtype), uniform(rng, (4,), dtype))),
        Sample((x, uniform(rng, (2, 3, 2), dtype)), {"stride": 2, "padding": 2, "dilation": 2}),
        Sample((x, uniform(rng, (2, 3, 4), dtype)), {"padding": "same"}),
        Sample((uniform(rng, (4, 6), dtype), uniform(rng, (2, 2, 3), dtype)), {"groups": 2}),
    ]


# ---- pooling ------------------------------------------------------------------------------------


def _pool_windows(shape, kernel, stride, padding, dilation, ceil_mode):
    """For each dim, for each output index, the input indices its window reads (in range)."""
    per_dim = []
    for n, k, s, p, d in zip(shape, kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        out = (math.ceil(span / s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + p:
            out -= 1
        per_dim.append([[o * s - p + i * d for i in range(k)] for o in range(out)])
    return per_dim


def _max_pool(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    kernel = _pair(kernel_size, 2)
    stride = kernel if stride is None else _pair(stride, 2)
    rows, columns = _pool_windows(x.shape[-2:], kernel, stride, _pair(padding, 2),
                                  _pair(dilation, 2), ceil_mode)
    result = np.empty(x.shape[:-2] + (len(rows), len(columns)))
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            r = [a for a in row if 0 <= a < x.shape[-2]]
            c = [b for b in column if 0 <= b < x.shape[-1]]
            result[..., i, j] = x[..., r, :][..., c].max(axis=(-2, -1))
    return result


def _avg_pool(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    kernel = _pair(kernel_size, 2)
    stride = kernel if stride is None else _pair(stride, 2)
    padding = _pair(padding, 2)
    rows, columns = _pool_windows(x.shape[-2:], kernel, stride, padding, (1, 1), ceil_mode)
    result = np.empty(x.shape[:-2] + (len(rows), len(columns)))
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            r = [a for a in row if 0 <= a < x.shape[-2]]
            c = [b for b in column if 0 <= b < x.shape[-1]]
            total = x[..., r, :][..., c].sum(axis=(-2, -1))
            if divisor_override is not None:
                count = divisor_override
            elif count_include_pad:  # padding counts, the ceil_mode overhang does not
                count = (sum(a < x.shape[-2] + padding[0] for a in row)
                         * sum(b < x.shape[-1] + padding[1] for b in column))
            else:
                count = len(r) * len(c)
            result[..., i, j] = total / count
    return result


def _adaptive_avg_pool(x, output_size):
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    sizes = x.shape[-2:]
    output_size = [n if o is None else o for n, o in zip(sizes, output_size)]
    result = np.empty(x.shape[:-2] + tuple(output_size))
    for i in range(output_size[0]):
        top, bottom = (i * sizes[0]) // output_size[0], -(-(i + 1) * sizes[0] // output_size[0])
        for j in range(output_size[1]):
            left, right = (j * sizes[1]) // output_size[1], \
                -(-(j + 1) * sizes[1] // output_size[1])
            result[..., i, j] = x[..., top:bottom, left:right].mean(axis=(-2, -1))
    return result


def _distinct(rng, shape, dtype):
    """Values with no ties in any window and gaps far above gradcheck's step."""
    values = rng.permutation(math.prod(shape)).reshape(shape) * 0.1 - 1.0
    return values.astype(dtype)


def _max_pool_samples(rng, dtype):
    x = _distinct(rng, (2, 2, 5, 5), dtype)
    return [
        Sample((x, 2)),
        Sample((x, 3), {"stride": 2, "padding": 1}),
        Sample((x, (3, 2)), {"stride": (1, 2), "dilation": (2, 1)}),
        Sample((x, 2), {"ceil_mode": True}),
        Sample((_distinct(rng, (2, 4, 5), dtype), 2), {"stride": 1}),
    ]


def _avg_pool_samples(rng, dtype):
    x = uniform(rng, (2, 2, 5, 5), dtype)
    return [
        Sample((x, 2)),
        Sample((x, 3), {"stride": 2, "padding": 1}),
        Sample((x, 3), {"stride": 2, "padding": 1, "count_include_pad": False}),
        Sample((x, 2), {"stride": 2, "padding": 1, "ceil_mode": True}),
        Sample((x, (2, 3)), {"divisor_override": 4}),
        Sample((uniform(rng, (2, 4, 5), dtype), 2), {"stride": 1}),
    ]


def _adaptive_samples(rng, dtype):
    x = uniform(rng, (1, 2, 5, 4), dtype)
    return [Sample((x, 1)), Sample((x, (3, 2))), Sample((x, (None, 3))),
            Sample((uniform(rng, (2, 4, 6), dtype), (2, 3)))]


def _pad(x, pad, mode="constant", value=None):
    widths = [(0, 0)] * x.ndim
    for index in range(len(pad) // 2):
        widths[x.ndim - 1 - index] = (pad[2 * index], pad[2 * index + 1])
    crop = tuple(slice(max(-a, 0), x.shape[d] - max(-b, 0)) for d, (a, b) in enumerate(widths))
    return np.pad(x[crop], [(max(a, 0), max(b, 0)) for a, b in widths],
                  constant_values=0 if value is None else value)


def _pad_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, (1, 2))), Sample((x, (1, 0, 2, 1)), {"value": 1.5}),
            Sample((x, (-1, 2, 0, -1))), Sample((x, (1, 1, 0, 0, 1, 0)), {"value": -2.0})]


# ---- normalization ------------------------------------------------------------------------------


def _normalized(x, dims, eps):
    mean = x.mean(axis=dims, keepdims=True)
    variance = x.var(axis=dims, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps)


def _channel(vector, ndim):
    return vector.reshape((1, -1) + (1,) * (ndim - 2))


def _layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    count = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    result = _normalized(x, tuple(range(x.ndim - count, x.ndim)), eps)
    if weight is not None:
        result = result * weight
    return result if bias is None else result + bias


def _batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5):
    if training:
        result = _normalized(x, (0, *range(2, x.ndim)), eps)
    else:
        result = (x - _channel(running_mean, x.ndim)) / np.sqrt(_channel(running_var, x.ndim)
                                                                + eps)
    if weight is not None:
        result = result * _channel(weight, x.ndim)
    return result if bias is None else result + _channel(bias, x.ndim)


def _group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    grouped = x.reshape(x.shape[0], num_groups, -1)
    result = _normalized(grouped, (2,), eps).reshape(x.shape)
    if weight is not None:
        result = result * _channel(weight, x.ndim)
    return result if bias is None else result + _channel(bias, x.ndim)


def _layer_norm_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3, 4), dtype), (4,))),
            Sample((uniform(rng, (2, 3, 4), dtype), (3, 4), uniform(rng, (3, 4), dtype),
                    uniform(rng, (3, 4), dtype))),
            Sample((uniform(rng, (3, 5), dtype), 5, uniform(rng, (5,), dtype)),
                   {"eps": 1e-3})]


def _batch_norm_samples(training):
    def samples(rng, dtype):
        def statistics(channels):
            return uniform(rng, (channels,), dtype), positive(rng, (channels,), dtype)

        return [
            Sample((uniform(rng, (4, 3), dtype), *statistics(3), uniform(rng, (3,), dtype),
                    uniform(rng, (3,), dtype)), {"training": training}),
            Sample((uniform(rng, (2, 3, 4), dtype), *statistics(3), None, None),
                   {"training": training, "momentum": 0.3, "eps": 1e-3}),
            Sample((uniform(rng, (2, 2, 3, 3), dtype), *statistics(2), positive(rng, (2,), dtype),
                    None), {"training": training}),
        ]

    return samples


def _group_norm_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 4, 3), dtype), 2, uniform(rng, (4,), dtype),
                    uniform(rng, (4,), dtype))),
            Sample((uniform(rng, (2, 6, 2, 2), dtype), 3)),
            Sample((uniform(rng, (3, 4), dtype), 2), {"eps": 1e-3})]


# ---- robust regression losses -------------------------------------------------------------------


def _smooth_l1(x, t, reduction="mean", beta=1.0):
    d = np.abs(x - t)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def _huber(x, t, reduction="mean", delta=1.0):
    d = np.abs(x - t)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _off_kinks(rng, shape, dtype, kink):
    """(input, target) whose difference stays at least 0.1 from 0 and from +-kink."""
    magnitude = rng.uniform(0.1, 2.0, size=shape)
    magnitude = np.where(np.abs(magnitude - kink) < 0.1, magnitude + 0.2, magnitude)
    difference = magnitude * np.where(rng.random(shape) < 0.5, -1, 1)
    target = rng.uniform(-2, 2, size=shape)
    return (target + difference).astype(dtype), target.astype(dtype)


def _smooth_l1_samples(rng, dtype):
    return [Sample(_off_kinks(rng, (3, 4), dtype, 1.0)),
            Sample(_off_kinks(rng, (3, 4), dtype, 0.5), {"beta": 0.5, "reduction": "sum"}),
            Sample(_off_kinks(rng, (5,), dtype, 0.0), {"beta": 0.0, "reduction": "none"})]


def _huber_samples(rng, dtype):
    return [Sample(_off_kinks(rng, (3, 4), dtype, 1.0)),
            Sample(_off_kinks(rng, (3, 4), dtype, 0.7), {"delta": 0.7, "reduction": "sum"}),
            Sample(_off_kinks(rng, (5,), dtype, 1.5), {"delta": 1.5, "reduction": "none"})]


WINDOW_PRIMITIVES = ("slice", "reshape", "cat", "embed_slice")
CONVOLUTION_PRIMITIVES = ("convolution", "convolution_backward_input",
                          "convolution_backward_weight")

ROWS = [
    OpInfo(name="nn.functional.conv2d", function=F.conv2d, reference=_in_dtype(_conv),
           samples=_conv2d_samples, primitives=(*CONVOLUTION_PRIMITIVES, "convolution_bias")),
    OpInfo(name="nn.functional.conv1d", function=F.conv1d, reference=_in_dtype(_conv),
           samples=_conv1d_samples, primitives=(*CONVOLUTION_PRIMITIVES, "convolution_bias")),
    OpInfo(name="nn.functional.max_pool2d", function=F.max_pool2d,
           reference=_in_dtype(_max_pool), samples=_max_pool_samples,
           primitives=("max_pool_select", "max_pool_scatter")),
    OpInfo(name="nn.functional.avg_pool2d", function=F.avg_pool2d,
           reference=_in_dtype(_avg_pool), samples=_avg_pool_samples,
           primitives=(*WINDOW_PRIMITIVES, "sum", "div")),
    OpInfo(name="nn.functional.adaptive_avg_pool2d", function=F.adaptive_avg_pool2d,
           reference=_in_dtype(_adaptive_avg_pool), samples=_adaptive_samples,
           primitives=("index", "index_put", "where", "sum", "div")),
    OpInfo(name="nn.functional.pad", function=F.pad, reference=_in_dtype(_pad),
           samples=_pad_samples, primitives=("slice", "embed_slice", "cat")),
    OpInfo(name="nn.functional.layer_norm", function=F.layer_norm,
           reference=_in_dtype(_layer_norm), samples=_layer_norm_samples,
           primitives=("layer_norm", "layer_norm_backward", "mul", "add")),
    OpInfo(name="nn.functional.batch_norm(training)", function=F.batch_norm,
           reference=_in_dtype(_batch_norm), samples=_batch_norm_samples(True),
           primitives=("batch_norm_statistics", "batch_norm", "batch_norm_backward",
                       "batch_norm_update", "sum", "mul"), grad_inputs=(0, 3, 4)),
    OpInfo(name="nn.functional.batch_norm(eval)", function=F.batch_norm,
           reference=_in_dtype(_batch_norm), samples=_batch_norm_samples(False),
           primitives=("sub", "add", "sqrt", "div", "mul")),
    OpInfo(name="nn.functional.group_norm", function=F.group_norm,
           reference=_in_dtype(_group_norm), samples=_group_norm_samples,
           primitives=("layer_norm", "layer_norm_backward", "reshape", "mul", "add")),
    OpInfo(name="nn.functional.smooth_l1_loss", function=F.smooth_l1_loss,
           reference=_in_dtype(_smooth_l1), samples=_smooth_l1_samples,
           primitives=("sub", "abs", "lt", "where", "mul")),
    OpInfo(name="nn.functional.huber_loss", function=F.huber_loss,
           reference=_in_dtype(_huber), samples=_huber_samples,
           primitives=("sub", "abs", "lt", "where", "mul")),
]
