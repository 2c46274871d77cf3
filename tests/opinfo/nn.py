"""Op table rows for autojit.nn.functional: the softmax family, losses and activations.

These are composites (nn/functional/__init__.py), so each row lists the primitives it expands to.
The references are NumPy formulas computed in float64 and returned in the input's dtype. Samples
keep away from non-differentiable points (l1 at input == target, leaky_relu and elu at 0) and
keep probabilities inside (0, 1), so finite differences are meaningful.
"""

from __future__ import annotations

import numpy as np

import autojit
import autojit.nn.functional as F

from . import OpInfo, Sample, uniform


def _in_dtype(function):
    """A reference computed in float64 and returned in the dtype of the first argument."""
    def reference(*args, **kwargs):
        dtype = args[0].dtype
        args = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                for a in args]
        kwargs = {k: v.astype(np.float64) if isinstance(v, np.ndarray) else v
                  for k, v in kwargs.items()}
        return np.asarray(function(*args, **kwargs)).astype(dtype)

    return reference


def _log_softmax(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _nll(log_probabilities, target, weight=None, ignore_index=-100, reduction="mean",
         label_smoothing=0.0):
    """torch's nll/cross-entropy with class indices, classes at dim 1 (or 0 for 1-D input)."""
    class_dim = 0 if log_probabilities.ndim == 1 else 1
    classes = log_probabilities.shape[class_dim]
    moved = np.moveaxis(log_probabilities, class_dim, -1)
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    picked = np.take_along_axis(moved, safe[..., None], axis=-1)[..., 0]
    class_weight = np.ones(classes) if weight is None else weight
    target_weight = np.where(kept, class_weight[safe], 0.0)
    loss = -picked * target_weight
    smooth = np.where(kept, -(moved * class_weight).sum(-1), 0.0)
    if reduction == "mean":
        loss, smooth = loss.sum() / target_weight.sum(), smooth.sum() / target_weight.sum()
    else:
        loss, smooth = _reduce(loss, reduction), _reduce(smooth, reduction)
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / classes)


def _cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean",
                   label_smoothing=0.0):
    class_dim = 0 if x.ndim == 1 else 1
    log_probabilities = _log_softmax(x, class_dim)
    if target.dtype.kind == "f":
        classes = x.shape[class_dim]
        target = target * (1 - label_smoothing) + label_smoothing / classes
        terms = log_probabilities * target
        if weight is not None:
            shape = [1] * x.ndim
            shape[class_dim] = classes
            terms = terms * weight.reshape(shape)
        if reduction == "mean":
            return -terms.sum() / (x.size // classes)
        return _reduce(-terms.sum(class_dim), reduction)
    return _nll(log_probabilities, target, weight, ignore_index, reduction, label_smoothing)


def _log_sigmoid(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _bce_with_logits(x, t, weight=None, reduction="mean", pos_weight=None):
    log_weight = 1.0 if pos_weight is None else 1 + (pos_weight - 1) * t
    loss = (1 - t) * x - log_weight * _log_sigmoid(x)
    return _reduce(loss if weight is None else loss * weight, reduction)


def _bce(p, t, weight=None, reduction="mean"):
    loss = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log(1 - p), -100))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _targets(rng, shape, classes, ignore=False):
    target = rng.integers(0, classes, size=shape)
    if ignore and target.size > 1:
        target.reshape(-1)[0] = -100
    return target.astype(np.int64)


def _probabilities(rng, shape, dtype, class_dim=1):
    raw = rng.uniform(0.1, 1.0, size=shape)
    return (raw / raw.sum(axis=class_dim, keepdims=True)).astype(dtype)


def _away_from_zero(rng, shape, dtype):
    magnitude = rng.uniform(0.2, 2.0, size=shape)
    return np.asarray(magnitude * np.where(rng.random(shape) < 0.5, -1, 1), dtype=dtype)


def _softmax_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 5), dtype), 1)), Sample((uniform(rng, (3, 5), dtype), 0)),
            Sample((uniform(rng, (2, 3, 4), dtype), -1)), Sample((uniform(rng, (4,), dtype), 0))]


def _safe_softmax_samples(rng, dtype):
    masked = uniform(rng, (3, 5), dtype)
    masked[1] = -np.inf  # a fully masked row: zeros, where softmax gives NaN
    masked[2, ::2] = -np.inf
    return [Sample((masked, 1)), Sample((uniform(rng, (2, 3, 4), dtype), -1)),
            Sample((uniform(rng, (3, 5), dtype), 0))]


def _safe_softmax(x, dim):
    # The reference: softmax, with 0 in each row of all -inf.
    finite = np.where(np.isneginf(x).all(axis=dim, keepdims=True), 0.0, x)
    result = np.exp(_log_softmax(finite, dim))
    return np.where(np.isneginf(x).all(axis=dim, keepdims=True), 0.0, result)


def _cross_entropy_samples(rng, dtype):
    weight = rng.uniform(0.5, 1.5, size=4).astype(dtype)
    return [
        Sample((uniform(rng, (5, 4), dtype), _targets(rng, (5,), 4))),
        Sample((uniform(rng, (5, 4), dtype), _targets(rng, (5,), 4, ignore=True)),
               {"weight": weight, "label_smoothing": 0.1}),
        Sample((uniform(rng, (5, 4), dtype), _targets(rng, (5,), 4)),
               {"weight": weight, "reduction": "none", "label_smoothing": 0.2}),
        Sample((uniform(rng, (2, 4, 3), dtype), _targets(rng, (2, 3), 4)), {"reduction": "sum"}),
        Sample((uniform(rng, (4,), dtype), np.array(2))),
        Sample((uniform(rng, (5, 4), dtype), _probabilities(rng, (5, 4), dtype)),
               {"weight": weight, "label_smoothing": 0.3}),
        Sample((uniform(rng, (2, 4, 3), dtype), _probabilities(rng, (2, 4, 3), dtype)),
               {"reduction": "none"}),
    ]


def _nll_samples(rng, dtype):
    weight = rng.uniform(0.5, 1.5, size=4).astype(dtype)
    return [
        Sample((uniform(rng, (5, 4), dtype), _targets(rng, (5,), 4, ignore=True))),
        Sample((uniform(rng, (5, 4), dtype), _targets(rng, (5,), 4)), {"weight": weight}),
        Sample((uniform(rng, (2, 4, 3), dtype), _targets(rng, (2, 3), 4)),
               {"reduction": "none", "ignore_index": 1}),
    ]


def _regression_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype))),
            Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)),
                   {"reduction": "sum"}),
            Sample((uniform(rng, (5,), dtype), uniform(rng, (5,), dtype)),
                   {"reduction": "none"})]


def _bce_samples(rng, dtype):
    def probability(shape):
        return rng.uniform(0.1, 0.9, size=shape).astype(dtype)

    return [Sample((probability((3, 4)), probability((3, 4)))),
            Sample((probability((3, 4)), probability((3, 4))),
                   {"weight": probability((4,)), "reduction": "sum"}),
            Sample((probability((5,)), probability((5,))), {"reduction": "none"})]


def _bce_logits_samples(rng, dtype):
    def probability(shape):
        return rng.uniform(0.1, 0.9, size=shape).astype(dtype)

    return [Sample((uniform(rng, (3, 4), dtype, -4, 4), probability((3, 4)))),
            Sample((uniform(rng, (3, 4), dtype, -4, 4), probability((3, 4))),
                   {"pos_weight": probability((4,)) + 1, "weight": probability((3, 1))}),
            Sample((uniform(rng, (5,), dtype), probability((5,))), {"reduction": "none"})]


def _activation_samples(rng, dtype):
    return [Sample((_away_from_zero(rng, (3, 4), dtype),)),
            Sample((_away_from_zero(rng, (), dtype),))]


def _off_kinks(rng, shape, dtype, kinks):
    """Uniform values on [-2, 2] at least 0.05 from each kink (the finite differences of
    gradcheck straddle none)."""
    values = rng.uniform(-2, 2, size=shape)
    for kink in kinks:
        near = np.abs(values - kink) < 0.05
        values = np.where(near, kink + np.copysign(0.05, values - kink), values)
    return np.asarray(values, dtype=dtype)


def _bounded_samples(rng, dtype):
    """hardtanh's samples: its default bounds and given ones (relu6's among them)."""
    return [Sample((_off_kinks(rng, (3, 4), dtype, (-1, 1)),)),
            Sample((_off_kinks(rng, (), dtype, (-1, 1)),)),
            Sample((_off_kinks(rng, (3, 4), dtype, (-0.5, 1.5)), -0.5, 1.5)),
            Sample((_off_kinks(rng, (3, 4), dtype, (0, 1.5)) * 4, 0.0, 6.0))]


def _shrink_samples(rng, dtype):
    """softshrink's and hardshrink's samples, off their kinks at +-lambd."""
    return [Sample((_off_kinks(rng, (3, 4), dtype, (-0.5, 0.5)),)),
            Sample((_off_kinks(rng, (), dtype, (-0.5, 0.5)),)),
            Sample((_off_kinks(rng, (3, 4), dtype, (-1.0, 1.0)), 1.0))]


SOFTMAX_PRIMITIVES = ("softmax", "softmax_backward")
LOG_SOFTMAX_PRIMITIVES = ("log_softmax", "log_softmax_backward")
NLL_PRIMITIVES = ("nll_loss", "nll_loss_backward")

ROWS = [
    OpInfo(name="nn.functional.softmax", function=F.softmax,
           reference=_in_dtype(lambda x, dim: np.exp(_log_softmax(x, dim))),
           samples=_softmax_samples, primitives=SOFTMAX_PRIMITIVES),
    OpInfo(name="_safe_softmax", function=autojit._safe_softmax,
           reference=_in_dtype(_safe_softmax), samples=_safe_softmax_samples,
           primitives=("safe_softmax", "softmax_backward")),
    OpInfo(name="nn.functional.log_softmax", function=F.log_softmax,
           reference=_in_dtype(_log_softmax), samples=_softmax_samples,
           primitives=LOG_SOFTMAX_PRIMITIVES),
    OpInfo(name="nn.functional.softmin", function=F.softmin,
           reference=_in_dtype(lambda x, dim: np.exp(_log_softmax(-x, dim))),
           samples=_softmax_samples, primitives=("neg", *SOFTMAX_PRIMITIVES)),
    OpInfo(name="nn.functional.cross_entropy", function=F.cross_entropy,
           reference=_in_dtype(_cross_entropy), samples=_cross_entropy_samples,
           primitives=(*LOG_SOFTMAX_PRIMITIVES, *NLL_PRIMITIVES), grad_inputs=(0,)),
    OpInfo(name="nn.functional.nll_loss", function=F.nll_loss, reference=_in_dtype(_nll),
           samples=_nll_samples, primitives=NLL_PRIMITIVES),
    OpInfo(name="nn.functional.mse_loss", function=F.mse_loss,
           reference=_in_dtype(lambda x, t, reduction="mean": _reduce((x - t) ** 2, reduction)),
           samples=_regression_samples, primitives=("sub", "mul")),
    OpInfo(name="nn.functional.l1_loss", function=F.l1_loss,
           reference=_in_dtype(lambda x, t, reduction="mean": _reduce(np.abs(x - t), reduction)),
           samples=_regression_samples, primitives=("sub", "abs")),
    OpInfo(name="nn.functional.binary_cross_entropy", function=F.binary_cross_entropy,
           reference=_in_dtype(_bce), samples=_bce_samples,
           primitives=("binary_cross_entropy", "binary_cross_entropy_backward"),
           grad_inputs=(0, 1)),
    OpInfo(name="nn.functional.binary_cross_entropy_with_logits",
           function=F.binary_cross_entropy_with_logits, reference=_in_dtype(_bce_with_logits),
           samples=_bce_logits_samples, primitives=("lt", "where", "exp", "log1p")),
    OpInfo(name="nn.functional.logsigmoid", function=F.logsigmoid,
           reference=_in_dtype(_log_sigmoid), samples=_activation_samples,
           primitives=("lt", "where", "neg", "exp", "log1p")),
    OpInfo(name="nn.functional.leaky_relu", function=F.leaky_relu,
           reference=_in_dtype(lambda x, slope=0.01: np.where(x > 0, x, x * slope)),
           samples=_activation_samples, primitives=("leaky_relu", "leaky_relu_backward")),
    OpInfo(name="nn.functional.hardtanh", function=F.hardtanh,
           reference=_in_dtype(lambda x, low=-1.0, high=1.0: np.clip(x, low, high)),
           samples=_bounded_samples, primitives=("hardtanh", "hardtanh_backward")),
    OpInfo(name="nn.functional.softshrink", function=F.softshrink,
           reference=_in_dtype(lambda x, lambd=0.5: np.where(
               x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0))),
           samples=_shrink_samples, primitives=("softshrink", "softshrink_backward")),
    OpInfo(name="nn.functional.hardshrink", function=F.hardshrink,
           reference=_in_dtype(lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0)),
           samples=_shrink_samples, primitives=("hardshrink", "hardshrink_backward")),
    OpInfo(name="nn.functional.elu", function=F.elu,
           reference=_in_dtype(lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x))),
           samples=_activation_samples, primitives=("lt", "le", "where", "expm1")),
]
