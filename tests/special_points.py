"""The rows of tests/test_grad_special_points.py: each differentiable op at its special points.

A row's function is written once for both libraries: `function(lib, *tensors)`, lib being
autojit or torch, whose names agree. Its inputs are float64 values, each a differentiated
tensor; elementwise ops take all their special points in one vector. The points are where
an op is not smooth or not finite: kinks (0 for relu and abs, a clamp's bounds, softplus's
threshold), ties (of max, maximum and the norms), domain edges (sqrt, log and pow at 0,
division by 0), infinities and NaN, degenerate reductions (a constant, one element) and
saturated losses (probabilities 0 and 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

INF, NAN = math.inf, math.nan


@dataclass(frozen=True)
class Point:
    name: str
    function: Callable  # function(lib, *tensors) -> tensor
    inputs: tuple  # one list of float64 values (nested for 2-d) per differentiated input
    rtol: float = 1e-9
    # Results that differ from torch on purpose, documented in docs/differences.md: a label
    # ("value", "d/d0", "d2/d0") -> Difference. The test checks autojit's result against the
    # difference's and that it still differs from torch's, so an entry goes once it does not.
    differs: dict = field(default_factory=dict)
    # torch's vectorized loop gives other values than its scalar one at some of these points,
    # and which one a vector of points takes depends on the CPU's vector width (AVX2 or
    # AVX-512): for an elementwise op, torch is then run on one point at a time, which is its
    # scalar definition on every CPU.
    torch_one_element: bool = False


@dataclass(frozen=True)
class Difference:
    reason: str
    autojit: Callable  # torch's result (an ndarray) -> the one autojit gives instead


# With no degrees of freedom (correction >= the count), torch's gradient of var is inf where
# an element differs from the mean (whatever side it is on) and its second derivative 0; the
# chain rule through the mean gives autojit NaN for both. The values agree (inf or NaN).
NO_DEGREES_OF_FREEDOM = {
    "d/d0": Difference("torch's gradient is +inf on both sides of the mean, autojit's NaN",
                       lambda torch: np.where(np.isinf(torch), np.nan, torch)),
    "d2/d0": Difference("torch's second derivative is 0, autojit's NaN",
                        lambda torch: np.full_like(torch, np.nan))}


def F(lib):  # noqa: N802 - reads like torch.nn.functional
    return lib.nn.functional


def unary(name, function, points, **options):
    return Point(name, lambda lib, x: function(lib, x), (points,), **options)


def constant(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# The kink at 0 with both signs of zero, NaN and infinities, and ordinary values on each side.
AROUND_ZERO = [0.0, -0.0, 1.5, -1.5, NAN, INF, -INF]

ELEMENTWISE = [
    unary("abs", lambda lib, x: lib.abs(x), AROUND_ZERO),
    unary("sign", lambda lib, x: lib.sign(x), AROUND_ZERO),
    unary("neg", lambda lib, x: -x, AROUND_ZERO),
    unary("sqrt", lambda lib, x: lib.sqrt(x), [0.0, -0.0, 4.0, -1.0, INF, NAN]),
    unary("rsqrt", lambda lib, x: lib.rsqrt(x), [0.0, -0.0, 4.0, -1.0, INF]),
    unary("log", lambda lib, x: lib.log(x), [0.0, -0.0, 1.0, -1.0, INF]),
    unary("log2", lambda lib, x: lib.log2(x), [0.0, 2.0, -1.0, INF]),
    unary("log10", lambda lib, x: lib.log10(x), [0.0, 10.0, -1.0, INF]),
    unary("log1p", lambda lib, x: lib.log1p(x), [-1.0, 0.0, -2.0, INF]),
    unary("exp", lambda lib, x: lib.exp(x), [0.0, 800.0, -800.0, INF, -INF]),
    unary("exp2", lambda lib, x: lib.exp2(x), [0.0, 2000.0, -2000.0, INF, -INF]),
    unary("expm1", lambda lib, x: lib.expm1(x), [0.0, 800.0, -800.0, INF, -INF]),
    unary("tanh", lambda lib, x: lib.tanh(x), [0.0, 30.0, -30.0, INF, -INF]),
    unary("sigmoid", lambda lib, x: lib.sigmoid(x), [0.0, 800.0, -800.0, INF, -INF]),
    unary("erf", lambda lib, x: lib.erf(x), [0.0, 30.0, -30.0, INF, -INF]),
    unary("sin", lambda lib, x: lib.sin(x), [0.0, math.pi / 2, INF]),
    unary("cos", lambda lib, x: lib.cos(x), [0.0, math.pi, INF]),
    unary("tan", lambda lib, x: lib.tan(x), [0.0, math.pi / 4, INF]),
    unary("reciprocal", lambda lib, x: lib.reciprocal(x), [0.0, -0.0, 2.0, INF, -INF]),
    unary("square", lambda lib, x: lib.square(x), AROUND_ZERO),
    unary("floor", lambda lib, x: lib.floor(x), [0.0, 1.0, -1.0, 0.5, INF]),
    # An infinite cotangent still gives a zero gradient (not inf * 0).
    unary("sign_infinite_cotangent", lambda lib, x: lib.sign(x) * constant(lib, [INF, -INF]),
          [1.0, -2.0]),
    unary("floor_infinite_cotangent", lambda lib, x: lib.floor(x) * constant(lib, [INF, -INF]),
          [1.5, -2.5]),
    unary("round", lambda lib, x: lib.round(x), [0.5, 1.5, -0.5, 2.0, INF]),
    unary("relu", lambda lib, x: lib.relu(x), AROUND_ZERO),
    unary("leaky_relu", lambda lib, x: F(lib).leaky_relu(x, 0.2), AROUND_ZERO),
    unary("elu", lambda lib, x: F(lib).elu(x), AROUND_ZERO),
    unary("elu_alpha", lambda lib, x: F(lib).elu(x, alpha=2.0), AROUND_ZERO),
    unary("gelu", lambda lib, x: F(lib).gelu(x), AROUND_ZERO),
    unary("gelu_tanh", lambda lib, x: F(lib).gelu(x, approximate="tanh"),
          [0.0, 1.5, -1.5, 30.0, -30.0, NAN]),
    unary("silu", lambda lib, x: F(lib).silu(x), [0.0, 1.5, -1.5, 800.0, -800.0, NAN, INF]),
    unary("logsigmoid", lambda lib, x: F(lib).logsigmoid(x),
          [0.0, -0.0, 1.5, -1.5, 800.0, -800.0, NAN, INF, -INF]),
    # beta * x at, below and above the threshold
    unary("softplus", lambda lib, x: F(lib).softplus(x),
          [0.0, 20.0, 19.5, 20.5, -800.0, NAN, INF, -INF]),
    unary("softplus_beta", lambda lib, x: F(lib).softplus(x, beta=2.0, threshold=1.0),
          [0.0, 0.5, 0.25, 0.75, -800.0]),
    unary("clamp", lambda lib, x: lib.clamp(x, -1.0, 2.0),
          [-1.0, 2.0, 0.0, -3.0, 3.0, NAN, INF, -INF]),
    unary("clamp_min", lambda lib, x: lib.clamp(x, min=0.5), [0.5, 0.0, 1.0, NAN]),
    unary("clamp_max", lambda lib, x: lib.clamp(x, max=0.5), [0.5, 0.0, 1.0, NAN]),
    unary("clamp_infinite_bounds", lambda lib, x: lib.clamp(x, -INF, INF), [1.0, INF, NAN]),
    unary("clamp_empty_range", lambda lib, x: lib.clamp(x, 1.0, -1.0), [-2.0, -1.0, 0.0, 1.0]),
    Point("clamp_tensor_bounds", lambda lib, x, low, high: lib.clamp(x, low, high),
          ([-1.0, 2.0, 0.0, 3.0, -3.0, 0.5, NAN, 0.0, 0.0, 5.0, -5.0, -3.0],
           [-1.0, -1.0, -1.0, -1.0, -1.0, 1.0, -1.0, NAN, -1.0, NAN, 1.0, 0.0],
           [2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 2.0, 2.0, NAN, 2.0, 0.0, 0.0])),
    Point("clamp_tensor_min", lambda lib, x, low: lib.clamp(x, min=low),
          ([-1.0, 0.0, 2.0, NAN, 1.0], [-1.0, 1.0, 1.0, 0.0, NAN])),
    Point("clamp_tensor_max", lambda lib, x, high: lib.clamp(x, max=high),
          ([-1.0, 0.0, 2.0, NAN, 1.0], [-1.0, 1.0, 1.0, 0.0, NAN])),
    unary("pow_2", lambda lib, x: x ** 2, AROUND_ZERO),
    unary("pow_3", lambda lib, x: x ** 3, [0.0, -0.0, 1.5, -1.5]),
    unary("pow_1", lambda lib, x: x ** 1, [0.0, 1.5, -1.5]),
    unary("pow_0", lambda lib, x: x ** 0, [0.0, 1.5, -1.5, INF, NAN]),
    unary("pow_half", lambda lib, x: x ** 0.5, [0.0, 4.0, -1.0]),
    unary("pow_one_and_half", lambda lib, x: x ** 1.5, [0.0, 4.0, -1.0]),
    unary("pow_minus_1", lambda lib, x: x ** -1, [0.0, -0.0, 2.0]),
    unary("pow_minus_half", lambda lib, x: x ** -0.5, [0.0, 4.0]),
    unary("scalar_pow_2", lambda lib, x: 2 ** x, [0.0, -INF, INF, 1.0]),
    unary("scalar_pow_0", lambda lib, x: 0 ** x, [0.0, 1.0, -1.0, 0.5]),
    unary("scalar_pow_1", lambda lib, x: 1 ** x, [0.0, INF, NAN]),
    Point("pow", lambda lib, x, y: lib.pow(x, y),
          ([0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -1.0, 2.0, 1.0, 0.0],
           [0.0, 2.0, 1.0, -1.0, 0.5, 2.0, 0.5, 0.0, INF, INF])),
    Point("div", lambda lib, x, y: x / y,
          ([1.0, 0.0, -1.0, 1.0, 0.0, INF, 1.0], [0.0, 0.0, 0.0, -0.0, 2.0, 2.0, INF])),
    unary("div_by_zero_scalar", lambda lib, x: x / 0.0, [1.0, 0.0, -1.0]),
    unary("scalar_div", lambda lib, x: 1.0 / x, [0.0, -0.0, 2.0]),
    Point("mul", lambda lib, x, y: x * y, ([0.0, INF, 2.0, NAN], [INF, 0.0, 3.0, 1.0])),
    Point("add_sub", lambda lib, x, y: (x + y) * (x - y),
          ([INF, 1.0, 0.0], [INF, -1.0, 0.0])),
    Point("maximum", lambda lib, x, y: lib.maximum(x, y),
          ([1.0, 2.0, 0.0, -1.0, NAN, 1.0, INF], [1.0, 1.0, -0.0, 3.0, 1.0, NAN, INF])),
    Point("minimum", lambda lib, x, y: lib.minimum(x, y),
          ([1.0, 2.0, 0.0, -1.0, NAN, 1.0, -INF], [1.0, 1.0, -0.0, 3.0, 1.0, NAN, -INF])),
    Point("remainder", lambda lib, x, y: lib.remainder(x, y),
          ([4.0, 3.0, -3.0, 0.0, 5.0], [2.0, 2.0, 2.0, 2.0, -2.0])),
    Point("where", lambda lib, x, y: lib.where(x > 0, x.log(), y.sqrt()),
          ([1.0, 0.0, -1.0, 2.0], [4.0, 0.0, -1.0, 0.0])),
    unary("masked_fill", lambda lib, x: x.log().masked_fill(x <= 0, 0.0), [0.0, 2.0, -1.0]),
    # Repeated indices accumulate their gradients.
    unary("getitem_repeated", lambda lib, x: x[lib.tensor([0, 0, 2, 0])] ** 2, [1.0, 2.0, 3.0]),
    unary("index_select_repeated", lambda lib, x: x.index_select(0, lib.tensor([1, 1, 0])),
          [[1.0, 2.0], [3.0, 4.0]]),
    unary("gather_repeated", lambda lib, x: x.gather(1, lib.tensor([[0, 0], [1, 1]])),
          [[1.0, 2.0], [3.0, 4.0]]),
    Point("scatter_add_repeated", lambda lib, x, y: x.scatter_add(
        0, lib.tensor([1, 1, 0]), y) ** 2, ([0.0, 1.0], [1.0, -1.0, 2.0])),
]


REDUCTIONS = [
    unary("sum", lambda lib, x: x.sum(), [INF, 1.0, 2.0]),
    unary("prod_one_zero", lambda lib, x: x.prod(), [0.0, 2.0, 3.0]),
    unary("prod_two_zeros", lambda lib, x: x.prod(), [0.0, 2.0, 0.0]),
    unary("prod_dim_zeros", lambda lib, x: x.prod(1), [[0.0, 2.0, 3.0], [0.0, 0.0, 1.0]]),
    unary("mean", lambda lib, x: x.mean(), [INF, 1.0, 2.0]),
    unary("amax_ties", lambda lib, x: x.amax(), [1.0, 3.0, 3.0, 3.0, 2.0]),
    unary("amin_ties", lambda lib, x: x.amin(), [1.0, 3.0, 1.0, 2.0]),
    unary("amax_dim_ties", lambda lib, x: x.amax(1), [[1.0, 1.0, 0.0], [2.0, 3.0, 3.0]]),
    unary("max_ties", lambda lib, x: x.max(), [1.0, 3.0, 3.0, 3.0, 2.0]),
    unary("min_ties", lambda lib, x: x.min(), [1.0, 3.0, 1.0, 2.0]),
    unary("max_dim_ties", lambda lib, x: x.max(1).values, [[1.0, 1.0, 0.0], [2.0, 3.0, 3.0]]),
    unary("min_dim_ties", lambda lib, x: x.min(0).values, [[1.0, 1.0], [1.0, 2.0]]),
    # A NaN result: amax gives every element a NaN gradient, max() and min() give the NaNs
    # the gradient (torch's two rules), max(dim) the first NaN.
    unary("amax_nan", lambda lib, x: x.amax(), [1.0, NAN, 2.0]),
    unary("amin_dim_nan", lambda lib, x: x.amin(1), [[1.0, NAN], [0.0, 1.0]]),
    unary("max_nan", lambda lib, x: x.max(), [1.0, NAN, 2.0, NAN]),
    unary("min_nan", lambda lib, x: x.min(), [1.0, NAN, 0.0]),
    unary("max_dim_nan", lambda lib, x: x.max(1).values, [[1.0, NAN, 2.0], [NAN, NAN, 0.0]]),
    unary("mean_dim_infinities", lambda lib, x: x.mean(0), [[INF, 0.0], [-INF, 0.0]]),
    unary("std_nan", lambda lib, x: x.std(), [1.0, NAN, 2.0]),
    unary("std_constant", lambda lib, x: x.std(), [2.0, 2.0, 2.0]),
    unary("std_zeros", lambda lib, x: x.std(), [0.0, 0.0, 0.0, 0.0]),
    unary("std_dim_constant_row", lambda lib, x: x.std(1), [[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]),
    unary("std_one_element", lambda lib, x: x.std(), [2.0]),
    unary("std_one_element_biased", lambda lib, x: x.std(correction=0), [2.0]),
    unary("std_correction_2", lambda lib, x: x.std(correction=2), [1.0, 3.0]),
    unary("std_dim_one_element", lambda lib, x: x.std(1), [[2.0], [3.0]]),
    unary("var_constant", lambda lib, x: x.var(), [2.0, 2.0, 2.0]),
    Point("var_correction_2", lambda lib, x: x.var(correction=2), ([1.0, 3.0],),
          differs=NO_DEGREES_OF_FREEDOM),
    Point("var_correction_3", lambda lib, x: x.var(correction=3), ([1.0, 3.0],),
          differs=NO_DEGREES_OF_FREEDOM),
    unary("var_dim_one_element", lambda lib, x: x.var(1), [[2.0], [3.0]]),
    Point("var_one_element", lambda lib, x: x.var(), ([2.0],),
          differs={"d2/d0": NO_DEGREES_OF_FREEDOM["d2/d0"]}),
    unary("var_one_element_biased", lambda lib, x: x.var(correction=0), [2.0]),
    Point("norm_zero", lambda lib, x: x.norm(), ([0.0, 0.0, 0.0],)),
    Point("norm_fro_zero", lambda lib, x: lib.norm(x, p="fro"), ([0.0, 0.0],)),
    Point("norm_dim_zero_row", lambda lib, x: x.norm(dim=1), ([[0.0, 0.0], [3.0, 4.0]],)),
    unary("norm_1_zero", lambda lib, x: x.norm(p=1), [0.0, 1.0, -2.0]),
    unary("norm_3_zero", lambda lib, x: x.norm(p=3), [0.0, 0.0]),
    unary("norm_3_one_zero", lambda lib, x: x.norm(p=3), [0.0, 1.0, -2.0]),
    Point("norm_half_zero", lambda lib, x: x.norm(p=0.5), ([0.0, 1.0],)),
    unary("norm_0", lambda lib, x: x.norm(p=0), [0.0, 1.0, -2.0]),
    Point("norm_minus_1_zero", lambda lib, x: x.norm(p=-1), ([0.0, 1.0, -2.0],)),
    unary("norm_minus_1", lambda lib, x: x.norm(p=-1), [0.5, 1.0, -2.0]),
    unary("norm_inf_ties", lambda lib, x: x.norm(p=INF), [1.0, -1.0, 0.5, 0.1]),
    unary("norm_inf_third_ties", lambda lib, x: x.norm(p=INF), [1.0, -1.0, 1.0, 0.5]),
    unary("norm_inf_zero", lambda lib, x: x.norm(p=INF), [0.0, 0.0]),
    unary("norm_minus_inf_ties", lambda lib, x: x.norm(p=-INF), [1.0, -1.0, 2.0]),
    unary("norm_inf_nan", lambda lib, x: x.norm(p=INF), [1.0, NAN]),
    unary("norm_nan", lambda lib, x: x.norm(), [NAN, 0.0]),
    unary("norm_infinite", lambda lib, x: x.norm(), [INF, 1.0]),
    unary("norm_1_infinite", lambda lib, x: x.norm(p=1), [INF, 0.0]),
    unary("logsumexp_minus_inf", lambda lib, x: x.logsumexp(0), [-INF, 0.0, 1.0]),
    unary("logsumexp_all_minus_inf", lambda lib, x: x.logsumexp(0), [-INF, -INF]),
    unary("logsumexp_inf", lambda lib, x: x.logsumexp(0), [INF, 0.0]),
    unary("logsumexp_nan", lambda lib, x: x.logsumexp(0), [NAN, 0.0]),
]


def _bce(lib, p):
    target = constant(lib, [0.0, 1.0, 0.0, 1.0, 0.5, 0.3, 1.0, 0.0])
    return F(lib).binary_cross_entropy(p, target, reduction="none")


def _bce_target(lib, p, t):
    return F(lib).binary_cross_entropy(p, t, reduction="sum")


LOSSES_AND_ACTIVATIONS = [
    unary("binary_cross_entropy", _bce, [0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1e-13, 1 - 1e-13]),
    Point("binary_cross_entropy_target", _bce_target,
          ([0.0, 0.0, 1.0, 1.0, 0.5, 0.2], [0.0, 1.0, 0.0, 1.0, 0.5, 0.3])),
    unary("binary_cross_entropy_weight", lambda lib, p: F(lib).binary_cross_entropy(
        p, constant(lib, [1.0, 0.0, 0.5]), weight=constant(lib, [2.0, 3.0, 0.0])),
          [0.0, 1.0, 1.0]),
    Point("bce_with_logits", lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(
        x, t, reduction="none"), ([0.0, 800.0, -800.0, 0.0, 1.0], [0.5, 0.0, 1.0, 1.0, 0.0])),
    unary("bce_with_logits_pos_weight", lambda lib, x: F(lib).binary_cross_entropy_with_logits(
        x, constant(lib, [1.0, 0.0, 1.0]), pos_weight=constant(lib, [2.0, 2.0, 0.0]),
        reduction="sum"), [0.0, -800.0, 0.0]),
    unary("bce_with_logits_infinite", lambda lib, x: F(lib).binary_cross_entropy_with_logits(
        x, constant(lib, [1.0, 0.0]), reduction="none"), [INF, -INF]),
    Point("mse_loss", lambda lib, x, y: F(lib).mse_loss(x, y),
          ([1.0, 0.0, INF], [1.0, 2.0, INF])),
    Point("l1_loss", lambda lib, x, y: F(lib).l1_loss(x, y, reduction="sum"),
          ([1.0, 0.0, 3.0, NAN], [1.0, 2.0, 0.0, 0.0])),
    Point("smooth_l1_loss", lambda lib, x, y: F(lib).smooth_l1_loss(
        x, y, reduction="sum", beta=0.5), ([1.0, 0.5, 0.0, 2.0, -0.5], [1.0, 0.0, 0.0, 0.0, 0.0])),
    Point("smooth_l1_loss_beta_0", lambda lib, x, y: F(lib).smooth_l1_loss(
        x, y, reduction="sum", beta=0.0), ([1.0, 0.5, 0.0], [1.0, 0.0, 2.0])),
    Point("huber_loss", lambda lib, x, y: F(lib).huber_loss(x, y, reduction="sum", delta=0.5),
          ([1.0, 0.5, 0.0, 2.0, -0.5, INF, -INF], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])),
    unary("smooth_l1_loss_infinite", lambda lib, x: F(lib).smooth_l1_loss(
        x, constant(lib, [0.0, 0.0]), reduction="sum"), [INF, -INF]),
    unary("softmax_minus_inf", lambda lib, x: F(lib).softmax(x, 1),
          [[-INF, 0.0, 1.0], [0.0, 0.0, 0.0]]),
    unary("log_softmax_minus_inf", lambda lib, x: F(lib).log_softmax(x, 1),
          [[-INF, 0.0, 1.0], [0.0, 0.0, 0.0]]),
    unary("softmin_inf", lambda lib, x: F(lib).softmin(x, 0), [INF, 0.0, 1.0]),
    unary("cross_entropy_minus_inf", lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor([1, 2])), [[-INF, 0.0, 1.0], [0.0, 0.0, 0.0]]),
    unary("cross_entropy_smoothing", lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor([1, 0]), label_smoothing=0.1), [[0.0, 0.0, 0.0], [1.0, 1.0, 2.0]]),
    unary("cross_entropy_smoothing_minus_inf", lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor([1]), label_smoothing=0.1), [[-INF, 0.0, 1.0]]),
    unary("softmax_all_minus_inf", lambda lib, x: F(lib).softmax(x, 0), [-INF, -INF]),
    unary("nll_loss", lambda lib, x: F(lib).nll_loss(x, lib.tensor([1, 0])),
          [[-INF, 0.0], [0.0, 0.0]]),
    unary("nll_loss_zero_weights", lambda lib, x: F(lib).nll_loss(
        x, lib.tensor([0, 1]), weight=constant(lib, [0.0, 0.0])), [[-1.0, 0.0], [0.0, -1.0]]),
    unary("softmax_nan", lambda lib, x: F(lib).softmax(x, 0), [NAN, 0.0]),
    unary("layer_norm_constant", lambda lib, x: F(lib).layer_norm(x, (3,)),
          [[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]),
    unary("layer_norm_one_element", lambda lib, x: F(lib).layer_norm(x, (1,)), [[2.0], [3.0]]),
    unary("group_norm_constant", lambda lib, x: F(lib).group_norm(x, 1),
          [[[2.0, 2.0], [2.0, 2.0]]]),
    unary("batch_norm_constant", lambda lib, x: F(lib).batch_norm(
        x, None, None, training=True), [[1.0, 2.0], [1.0, 3.0]]),
    unary("avg_pool2d_infinite", lambda lib, x: F(lib).avg_pool2d(x, 2),
          [[[[INF, 1.0], [0.0, 1.0]]]]),
    unary("max_pool2d_ties", lambda lib, x: F(lib).max_pool2d(x, 2),
          [[[[1.0, 1.0], [0.0, 1.0]]]]),
    unary("max_pool2d_overlap", lambda lib, x: F(lib).max_pool2d(x, 2, stride=1),
          [[[[1.0, 2.0, 1.0], [2.0, 2.0, 0.0], [1.0, 0.0, 3.0]]]]),
    unary("max_pool2d_ceil_mode", lambda lib, x: F(lib).max_pool2d(x, 2, ceil_mode=True),
          [[[[-INF, -INF, 1.0], [-INF, -INF, 1.0], [-INF, 1.0, 1.0]]]]),
    unary("max_pool2d_padding_nan", lambda lib, x: F(lib).max_pool2d(x, 2, stride=1, padding=1),
          [[[[0.0, 0.0, 1.0], [NAN, 0.0, 1.0], [-INF, -INF, 1.0]]]]),
]

POINTS = ELEMENTWISE + REDUCTIONS + LOSSES_AND_ACTIVATIONS
