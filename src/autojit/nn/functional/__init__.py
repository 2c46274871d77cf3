"""autojit.nn.functional: the functional forms of the layers, activations and losses.

This package's __init__.py holds the classification, regression and binary losses and
re-exports the rest from the package's modules (activations and the softmax family in
activation.py, the other losses in loss.py, margin.py and ctc.py, distances in distance.py,
...). Every function is built from autojit ops (ops/elementwise/, ops/reduction.py, ops/layout/),
so autograd, double backward and tracing come from the primitives; nothing here has a rule of
its own. Picking the target class of a classification loss uses a one-hot mask (class indices
compared with the target, then `where` and a sum over the class dim): it is differentiable,
needs no gather kernel, and a -inf log-probability at another class never turns into 0 * -inf.
The target range is checked by ops/indexing/checks.py, compiled too; other checks that need the
data (probabilities in [0, 1]) run only on concrete tensors: while tracing they are skipped
rather than breaking the graph.
"""

from __future__ import annotations

import math
import sys
import warnings

from ...autograd.grad_mode import is_grad_enabled
from ...ops import elementwise as ew
from ...ops import keyword_forms as _keyword_forms
from ...ops.autocast import BANNED, FP32, autocast_op
from ...ops.composite import gelu, mean, softplus  # noqa: F401 - re-exported names
from ...ops.elementwise import sigmoid, tanh  # noqa: F401 - re-exported names
from ...ops.indexing.checks import check_index
from ...ops.nn import loss as loss_ops
from ...ops.nn.nll_loss import nll
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor import torch_function as _torch_function
from ...tensor.creation import arange, as_tensor
from ...tensor.tensor import Tensor
from ..embedding_bag import embedding_bag  # noqa: F401 - re-exported
from ..layer_functions import bilinear, dropout, embedding, linear  # noqa: F401 - re-exported

# ---- activations and the softmax family (activation.py) ----
from .activation import (  # noqa: F401 - re-exported names
    celu,
    celu_,
    elu,
    elu_,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    silu,
    softmax,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401 - re-exported names
from .channel_dropout import (  # noqa: F401 - re-exported names
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .common import legacy_reduction as _legacy_reduction
from .conv import conv1d, conv2d  # noqa: F401 - re-exported names

# ---- distances, one_hot and the distribution, margin and embedding losses ----
from .ctc import ctc_loss  # noqa: F401 - re-exported
from .distance import (  # noqa: F401 - re-exported names
    cosine_similarity,
    normalize,
    one_hot,
    pairwise_distance,
    pdist,
)
from .loss import (  # noqa: F401 - re-exported names
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    kl_div,
    margin_ranking_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .margin import (  # noqa: F401 - re-exported names
    multi_margin_loss,
    multilabel_margin_loss,
)
from .norm import batch_norm, group_norm, huber_loss, layer_norm, smooth_l1_loss  # noqa: F401 - re-exported names

_REDUCTIONS = ("none", "mean", "sum")
# torch names dtypes by their scalar type in loss errors ("but got Float").
_SCALAR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


def _scalar_type(dtype) -> str:
    return _SCALAR_TYPE_NAMES[dtype.name]


# ---- shared loss helpers -----------------------------------------------------------------------


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        # A float16 loss is summed in float32, as torch's reduction does (an empty loss gives
        # nan, 0 / 0, as in torch).
        return mean(loss)
    if reduction == "sum":
        return sum_(loss)
    return loss


def _check_float(name: str, input: Tensor, complex: bool = False,  # noqa: A002
                 kernel: str | None = None) -> None:
    """torch's errors for an input that is not a tensor, or not floating: with the name of
    torch's kernel that refuses its dtype where given (or a function of the input giving it)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not (input.dtype.is_floating_point or complex and input.dtype.is_complex):
        if kernel is not None:
            kernel = kernel(input) if callable(kernel) else kernel
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{_scalar_type(input.dtype)}'")
        raise NotImplementedError(f"{name}: expected a floating point input, got {input.dtype}")


def _log_softmax_kernel(input: Tensor) -> str:  # noqa: A002
    """torch's log_softmax kernel for cross_entropy's classes: the last dim of a 1-D or 2-D
    input, dim 1 of more (named only in the error path)."""
    return f"log_softmax_{'lastdim_' if input.ndim <= 2 else ''}kernel_impl"


def _as_operand(value) -> Tensor:
    return value if isinstance(value, Tensor) else as_tensor(value)


# ---- classification losses ---------------------------------------------------------------------


def _class_layout(name: str, input: Tensor, target: Tensor):  # noqa: A002
    """Check the shapes of (input, class-index target); return the class dim and class count."""
    if input.ndim == 0:
        raise RuntimeError(f"{name}: input tensor should be 1D or more, got a 0-D input")
    if input.ndim <= 2 and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype is not dtypes.int64:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_scalar_type(target.dtype)}")
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if input.ndim == 1:
        if target.ndim != 0 and tuple(target.shape) != (1,):
            raise ValueError(f"Expected input batch_size (1) to match target batch_size "
                             f"({target.shape[0]}).")
    elif input.ndim == 2:
        if target.ndim == 0 or target.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target.shape[0] if target.ndim else 0}).")
    else:
        if target.ndim == 0 or target.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target.shape[0] if target.ndim else 0}).")
        expected = [input.shape[0], *input.shape[2:]]
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    return class_dim, classes


def _check_weight(weight, classes: int):
    if weight is None:
        return None
    weight = _as_operand(weight)
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    return weight


def _along_class_dim(vector: Tensor, class_dim: int, ndim: int) -> Tensor:
    """A (C,) vector reshaped to broadcast against an input whose classes are at class_dim."""
    shape = [1] * ndim
    shape[class_dim] = vector.shape[0]
    return vector.reshape(shape)


def _nll(log_probabilities: Tensor, target: Tensor, weight, ignore_index: int, class_dim: int,
         classes: int):
    """Per-element loss -w[t] * logp[t], and the sum of w[t] over non-ignored elements."""
    target_at_class = target.reshape(target.shape[:class_dim] + (1,) + target.shape[class_dim:]) \
        if log_probabilities.ndim > 1 else target.reshape(1)
    class_ids = _along_class_dim(arange(classes, device=target.device), class_dim,
                                 log_probabilities.ndim)
    is_target_class = class_ids == target_at_class
    kept = target != ignore_index
    picked = sum_(ew.where(is_target_class, log_probabilities, 0), class_dim)
    if log_probabilities.ndim == 1:
        picked = picked.reshape(target.shape)
    if weight is not None:
        weight = weight.to(log_probabilities.dtype)
        target_weight = sum_(ew.where(is_target_class, _along_class_dim(
            weight, class_dim, log_probabilities.ndim), 0), class_dim).reshape(target.shape)
        target_weight = ew.where(kept, target_weight, 0)
    else:
        target_weight = kept.to(log_probabilities.dtype)
    loss = -(picked * target_weight)
    return loss, target_weight


def _check_weight_grad(weight) -> None:
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")


@autocast_op(cpu=FP32, cuda=FP32)
def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None,  # noqa: A002
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of class-index targets, given log-probabilities
    (ops/nn/nll_loss.py)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float("nll_loss", input, kernel="nll_loss_out_frame")
    _check_reduction(reduction)
    _, classes = _class_layout("nll_loss", input, target)
    weight = _check_weight(weight, classes)
    _check_weight_grad(weight)
    # torch divides a mean by the total weight of the non-ignored targets (nan when all are).
    return nll(input, target, weight, ignore_index, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), torch's
    definition: a linear_weight of shape (C, d_1, ..., d_K, in) gives logits (N, C, d_1, ...,
    d_K), a K-dimensional loss. `options` (how torch chunks the batch to save memory) changes
    nothing here."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                         f"{linear_weight.ndim}")
    batches, features = tuple(input.shape[:-1]), input.shape[-1]
    if features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                         f"(in_features), got {features} and {linear_weight.shape[-1]}, "
                         f"respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                         f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                         f"{tuple(linear_weight.shape)} requires batched input, (N, "
                         f"{features}), got unbatched input with shape {tuple(input.shape)}")
    rows = classes * math.prod(out_features)
    logits = linear(input, linear_weight.reshape(rows, features),
                    None if linear_bias is None else linear_bias.reshape(rows))
    logits = logits.reshape((*batches, classes, *out_features))
    if ignore_index is not None and tuple(target.shape) == tuple(logits.shape):
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                         else ignore_index, reduction=reduction, label_smoothing=label_smoothing)


@autocast_op(cpu=FP32, cuda=FP32)
def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,  # noqa: A002
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim, then nll_loss (class indices) or -sum(p * logq)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float("cross_entropy", input, kernel=_log_softmax_kernel)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    target = _as_operand(target)
    if tuple(target.shape) == tuple(input.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_scalar_type(target.dtype)}")
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,
                                            label_smoothing)
    class_dim, classes = _class_layout("cross_entropy", input, target)
    weight = _check_weight(weight, classes)
    _check_weight_grad(weight)
    log_probabilities = log_softmax(input, class_dim)
    loss_value = nll(log_probabilities, target, weight, ignore_index, reduction)
    if label_smoothing == 0.0:
        return loss_value
    target = check_index(target, classes, "target", ignore=ignore_index)
    _, target_weight = _nll(log_probabilities, target, weight, ignore_index, class_dim,
                            classes)
    # Smoothing mixes in the loss against the uniform distribution: -sum_c w_c logp_c / C,
    # with torch's normalization (the same denominator as the nll term under 'mean').
    if weight is not None:
        weighted = log_probabilities * _along_class_dim(
            weight.to(input.dtype), class_dim, input.ndim)
    else:
        weighted = log_probabilities
    smooth = -sum_(weighted, class_dim)
    if input.ndim == 1:
        smooth = smooth.reshape(target.shape)
    smooth = ew.where(target != ignore_index, smooth, 0)
    if reduction == "mean":
        smooth_value = sum_(smooth) / sum_(target_weight)
    else:
        smooth_value = _reduce(smooth, reduction)
    return (1 - label_smoothing) * loss_value + smooth_value * (label_smoothing / classes)


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,  # noqa: A002
                                 label_smoothing):
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if input.ndim == 0:
        raise RuntimeError("cross_entropy: input tensor should be 1D or more, got a 0-D input")
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    weight = _check_weight(weight, classes)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = log_softmax(input, class_dim) * target
    if weight is not None:
        terms = terms * _along_class_dim(weight, class_dim, input.ndim)
    if reduction == "none":
        return -sum_(terms, class_dim)
    if reduction == "sum":
        return -sum_(terms)
    count = input.numel() // classes if classes else 0
    return -sum_(terms) / (count if count else math.nan)


# ---- regression and binary losses ----------------------------------------------------------------


def _warn_size(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


@autocast_op(cpu=FP32, cuda=FP32)
def mse_loss(input: Tensor, target, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean", weight=None) -> Tensor:
    """The mean (or sum) of squared differences."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float("mse_loss", input, kernel="mse_cpu")
    _check_reduction(reduction)
    target = _as_operand(target)
    _warn_size(input, target)
    difference = input - target
    loss = difference * difference
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def l1_loss(input: Tensor, target, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight=None) -> Tensor:
    """The mean (or sum) of absolute differences; with `weight` (input's shape), each
    difference weighted and a mean divided by the weights' sum, as torch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float("l1_loss", input, complex=True)
    _check_reduction(reduction)
    target = _as_operand(target)
    _warn_size(input, target)
    if weight is None:
        return _reduce(ew.abs(input - target), reduction)
    weight = _as_operand(weight)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = ew.abs(input - target) * weight
    if reduction == "mean":
        return sum_(weighted) / sum_(weight)
    return _reduce(weighted, reduction)


@autocast_op(cpu=FP32, cuda=BANNED)
def binary_cross_entropy(input: Tensor, target, weight=None, size_average=None,  # noqa: A002
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-w (t log p + (1 - t) log(1 - p)), with each log clamped at -100 as torch does; the
    gradient is w (p - t) / max(p (1 - p), 1e-12), finite at p = 0 and 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float("binary_cross_entropy", input, kernel="binary_cross_entropy")
    _check_reduction(reduction)
    target = _as_operand(target)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the "
                         "same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_scalar_type(target.dtype)} but expected "
                           f"{_scalar_type(input.dtype)}")
    data = input._payload
    # min/max rather than a mask: a CUDA input reduces on the device, reading two scalars.
    if data is not None and data.size and (data.min() < 0 or data.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    # A primitive (ops/nn/loss.py): torch's gradients at p = 0 and 1 are formulas, not the
    # derivatives of the clamped logs.
    loss = loss_ops.binary_cross_entropy(input, target)
    if weight is not None:
        loss = loss * _as_operand(weight)
    return _reduce(loss, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def binary_cross_entropy_with_logits(input: Tensor, target, weight=None,  # noqa: A002
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    """BCE on sigmoid(x) in the stable form (1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_float("binary_cross_entropy_with_logits", input, kernel="log_sigmoid_cpu")
    _check_reduction(reduction)
    target = _as_operand(target)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {_scalar_type(input.dtype)} can't be cast to the "
                           f"desired output type {_scalar_type(target.dtype)}")
    log_sigmoid = logsigmoid(input)
    if pos_weight is not None:
        log_weight = (_as_operand(pos_weight) - 1) * target + 1
        loss = (1 - target) * input - log_weight * log_sigmoid
    else:
        loss = (1 - target) * input - log_sigmoid
    if weight is not None:
        loss = loss * _as_operand(weight)
    return _reduce(loss, reduction)


# ---- convolution, padding, pooling, resampling and normalization layers ------------------------
# Re-exported from their modules; imported last, as nothing above uses them.
from .conv import conv3d, conv_tbc  # noqa: E402, F401
from .conv_transpose import (  # noqa: E402, F401
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from .grid import affine_grid, grid_sample  # noqa: E402, F401
from .interpolation import (  # noqa: E402, F401
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from .norm_extra import (  # noqa: E402, F401
    instance_norm,
    local_response_norm,
    rms_norm,
)
from .padding import pad  # noqa: E402, F401
from .pooling import (  # noqa: E402, F401
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .pooling_adaptive import (  # noqa: E402, F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
)
from .pooling_fractional import (  # noqa: E402, F401
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from .resampling import (  # noqa: E402, F401
    channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)

native_channel_shuffle = channel_shuffle  # torch's kernel-level name of the same shuffle

# torch's keyword names (gelu(input=x)), ops/keyword_forms.py.
_keyword_forms.accept_all(globals(), _keyword_forms.NN_FUNCTIONAL)

# A Tensor subclass's __torch_function__ sees these functions (tensor/torch_function.py).
_torch_function.expose(sys.modules[__name__], "torch.nn.functional.", python=True)
