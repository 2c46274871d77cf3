"""Values, first and second derivatives of the activations and losses of nn/functional/ at
their special points, against torch: the kinks and bounds of hardtanh, relu6, threshold,
hardsigmoid, hardswish, hardshrink, softshrink and prelu, 0 for the exponential units, the
ends of the range for mish, softsign and logsigmoid, NaN and the infinities, and the margins
of the margin losses, and norms at 0 in the distances.

The harness is tests/test_grad_special_points.py's: each row is written once for both
libraries, run eagerly with create_graph (value, first and second derivatives), and compared
with torch, NaN and inf at the same positions. The compiled runs (the first and the second
derivative, each one graph) cover a subset, one row per kind of kink, to keep the suite fast.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from special_points import (  # noqa: E402
    AROUND_ZERO,
    INF,
    NAN,
    Difference,
    F,
    Point,
    constant,
    unary,
)
from test_grad_special_points import assert_matches, run_autojit, run_torch  # noqa: E402

pytest.importorskip("torch")

# torch's second derivative of mish is NaN where exp(x) overflows (x > 709 in float64): its
# formula multiplies exp(x) by 0; autojit's is 0, the limit (docs/differences.md).
MISH_OVERFLOW = {"d2/d0": Difference("torch's second derivative is NaN where exp(x) overflows, "
                                     "autojit's 0", lambda torch: np.zeros_like(torch))}
# Each bound of a clamp-like activation, both sides of it, NaN and the infinities.
HARDTANH_POINTS = [-1.0, 1.0, 0.0, -2.0, 2.0, NAN, INF, -INF]
HARD_SIGMOID_POINTS = [-3.0, 3.0, 0.0, -4.0, 4.0, NAN, INF, -INF]
SHRINK_POINTS = [-0.5, 0.5, 0.0, -1.0, 1.0, NAN, INF, -INF]

ACTIVATIONS = [
    unary("hardtanh", lambda lib, x: F(lib).hardtanh(x), HARDTANH_POINTS),
    unary("hardtanh_bounds", lambda lib, x: F(lib).hardtanh(x, -0.5, 2.0),
          [-0.5, 2.0, 0.0, -1.0, 3.0]),
    unary("relu6", lambda lib, x: F(lib).relu6(x), [0.0, 6.0, -1.0, 3.0, 7.0, NAN, INF, -INF]),
    unary("threshold", lambda lib, x: F(lib).threshold(x, 0.5, -2.0),
          [0.5, 0.0, 1.0, NAN, INF, -INF]),
    unary("hardsigmoid", lambda lib, x: F(lib).hardsigmoid(x), HARD_SIGMOID_POINTS),
    # hardswish's gradient at NaN: 1 in torch's scalar backward (and autojit's), NaN in its
    # AVX2 loop.
    unary("hardswish", lambda lib, x: F(lib).hardswish(x), HARD_SIGMOID_POINTS,
          torch_one_element=True),
    unary("hardshrink", lambda lib, x: F(lib).hardshrink(x), SHRINK_POINTS),
    unary("softshrink", lambda lib, x: F(lib).softshrink(x, 0.5), SHRINK_POINTS),
    unary("selu", lambda lib, x: F(lib).selu(x), AROUND_ZERO),
    unary("celu", lambda lib, x: F(lib).celu(x, alpha=2.0), AROUND_ZERO),
    unary("celu_negative_alpha", lambda lib, x: F(lib).celu(x, alpha=-0.5), [0.0, 1.0, -1.0]),
    unary("mish", lambda lib, x: F(lib).mish(x), [0.0, 1.5, -1.5, 30.0, -30.0, -800.0, NAN,
                                                   INF, -INF]),
    Point("mish_overflow", lambda lib, x: F(lib).mish(x), ([800.0],), differs=MISH_OVERFLOW),
    unary("softsign", lambda lib, x: F(lib).softsign(x), AROUND_ZERO),
    unary("tanhshrink", lambda lib, x: F(lib).tanhshrink(x), [0.0, 1.5, -30.0, INF, -INF]),
    unary("rrelu_eval", lambda lib, x: F(lib).rrelu(x), AROUND_ZERO),
    unary("glu", lambda lib, x: F(lib).glu(x, 0), [0.0, 1.5, INF, -INF, 800.0, -800.0]),
    Point("prelu", lambda lib, x, w: F(lib).prelu(x, w),
          ([[0.0, -1.0], [2.0, -0.0], [NAN, -3.0]], [0.25, -0.5])),
    Point("prelu_one_slope", lambda lib, x, w: F(lib).prelu(x, w),
          ([0.0, -1.0, 2.0, INF, -INF], [0.25])),
]

MARGIN_LOSSES = [
    Point("margin_ranking_at_margin", lambda lib, a, b: F(lib).margin_ranking_loss(
        a, b, constant(lib, [1.0, -1.0, 1.0]), margin=0.5, reduction="sum"),
        ([1.0, 0.0, 2.0], [1.5, 0.5, 0.0])),
    unary("hinge_embedding_at_margin", lambda lib, x: F(lib).hinge_embedding_loss(
        x, constant(lib, [-1.0, -1.0, 1.0, -1.0]), margin=1.0, reduction="sum"),
        [1.0, 0.5, 0.0, 2.0]),
    unary("multi_margin_at_margin", lambda lib, x: F(lib).multi_margin_loss(
        x, lib.tensor([0, 2]), reduction="sum"), [[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]]),
    unary("multi_margin_p2", lambda lib, x: F(lib).multi_margin_loss(
        x, lib.tensor([0, 2]), p=2, reduction="sum"), [[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]]),
    unary("multilabel_margin_at_margin", lambda lib, x: F(lib).multilabel_margin_loss(
        x, lib.tensor([[0, 2, -1, 1], [1, -1, 0, 0]]), reduction="sum"),
        [[1.0, 0.0, 0.5, 1.0], [0.0, 1.0, 1.0, 1.0]]),
    unary("soft_margin", lambda lib, x: F(lib).soft_margin_loss(
        x, constant(lib, [1.0, -1.0, 1.0, -1.0]), reduction="sum"), [0.0, 800.0, -30.0, 2.0]),
    Point("cosine_embedding_orthogonal", lambda lib, a, b: F(lib).cosine_embedding_loss(
        a, b, constant(lib, [1.0, -1.0, -1.0]), margin=0.0, reduction="sum"),
        ([[1.0, 0.0], [1.0, 0.0], [2.0, -1.0]], [[0.0, 1.0], [0.0, 1.0], [1.0, 2.0]])),
    Point("triplet_at_margin", lambda lib, a, p, n: F(lib).triplet_margin_loss(
        a, p, n, margin=1.0, reduction="sum"),
        ([[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]], [[2.0, 0.0], [1.0, 0.0]])),
    Point("pairwise_distance_equal", lambda lib, a, b: F(lib).pairwise_distance(a, b, eps=0.0),
          ([[1.0, 2.0], [0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]])),
    Point("normalize_zero_row", lambda lib, x: F(lib).normalize(x, dim=1),
          ([[0.0, 0.0], [3.0, 4.0]],)),
    unary("kl_div_zero_target", lambda lib, x: F(lib).kl_div(
        x, constant(lib, [0.0, 0.5, 0.5]), reduction="sum"), [-1.0, -INF, 0.0]),
    Point("kl_div_log_target", lambda lib, x, t: F(lib).kl_div(
        x, t, reduction="sum", log_target=True), ([-1.0, 0.0], [-INF, -0.5])),
    unary("poisson_nll_full", lambda lib, x: F(lib).poisson_nll_loss(
        x, constant(lib, [0.0, 1.0, 3.0]), full=True, reduction="sum"), [0.0, 1.0, -1.0]),
    Point("gaussian_nll_clamped_var", lambda lib, x, v: F(lib).gaussian_nll_loss(
        x, constant(lib, [0.0, 1.0, 2.0]), v, reduction="sum"),
        ([1.0, 1.0, 0.0], [0.0, 2.0, 1e-8])),
]

POINTS = ACTIVATIONS + MARGIN_LOSSES
# torch has no second derivative of these (its backward is not differentiable): first order.
FIRST_ORDER_ONLY = {"hardsigmoid", "multi_margin_at_margin", "multi_margin_p2",
                    "multilabel_margin_at_margin"}
# One row per kind of kink, compiled: a bound (hardtanh), a threshold, a parabola's ends
# (hardswish), an exponential unit at 0 (celu), a learned slope (prelu), a margin, a norm at 0.
COMPILED = ["hardtanh", "threshold", "hardswish", "celu", "prelu", "triplet_at_margin",
            "normalize_zero_row", "multilabel_margin_at_margin"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize("point", POINTS, ids=[point.name for point in POINTS])
def test_eager_matches_torch(point):
    order = 1 if point.name in FIRST_ORDER_ONLY else 2
    assert_matches(point, run_autojit(point, order, False), run_torch(point, order), order)


@pytest.mark.parametrize("point", [point for point in POINTS if point.name in COMPILED],
                         ids=[point.name for point in POINTS if point.name in COMPILED])
def test_compiled_matches_torch(point):
    order = 1 if point.name in FIRST_ORDER_ONLY else 2
    assert_matches(point, run_autojit(point, order, True), run_torch(point, order), order)
