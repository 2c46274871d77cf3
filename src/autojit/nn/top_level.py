"""torch's top-level forms of nn.functional's ops, which real code calls as `torch.X`
(autojit.X here): the dropouts, activations, normalizations, convolutions, pooling, embedding,
the shuffles, the losses (with torch's integer `reduction`), the RNN cells and the grid ops.

These are aten's signatures, which differ from nn.functional's where torch's do: the dropouts
take `(input, p, train)` with no defaults, batch_norm and instance_norm take the weight and bias
before the running statistics, embedding takes the weight first, pooling's default stride is
`()`, the losses take `reduction` as 0 (none), 1 (mean) or 2 (sum), grid_sampler its modes as
integers. Each function reorders its arguments and calls the nn.functional op, so values,
gradients and compiled code are that op's.
"""

from __future__ import annotations

from ..nn_top_level_names import NN_TOP_LEVEL_NAMES
from ..ops.elementwise import fill_like
from ..ops.out_argument import with_out
from ..tensor.creation import rand
from ..tensor.dtypes import bool_
from ..tensor.tensor import Tensor
from . import functional as F
from .functional import channel_dropout as functional_dropout
from .rnn import _rnn_step

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _reduction(reduction) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _stride(stride):
    return None if stride == () or stride is None else stride


# ---- dropout ----------------------------------------------------------------------------------

def _dropout_form(name: str, feature: bool, alpha: bool, inplace: bool):
    def function(input, p: float, train: bool):  # noqa: A002 - torch's names
        functional_dropout._check_probability(p)
        return functional_dropout._dropout(input, p, train, inplace, feature=feature,
                                           alpha=alpha)

    function.__name__ = function.__qualname__ = name
    kind = ("alpha " if alpha else "") + ("dropout of whole channels" if feature else "dropout")
    function.__doc__ = (f"The {kind} of x with probability p when `train` (torch's top-level "
                        f"form){', in place' if inplace else ''}.")
    return function


dropout = _dropout_form("dropout", False, False, False)
dropout_ = _dropout_form("dropout_", False, False, True)
feature_dropout = _dropout_form("feature_dropout", True, False, False)
feature_dropout_ = _dropout_form("feature_dropout_", True, False, True)
alpha_dropout = _dropout_form("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout_form("alpha_dropout_", False, True, True)
feature_alpha_dropout = _dropout_form("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout_form("feature_alpha_dropout_", True, True, True)


def native_dropout(input, p: float, train):  # noqa: A002
    """(output, mask): dropout of x with probability p when `train`, and the bool mask of the
    kept elements."""
    functional_dropout._check_probability(p)
    if not train:
        return input.clone(), fill_like(input.detach(), True).to(bool_)
    keep = rand(*input.shape, dtype=input.dtype, device=input.device) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return input * keep.to(input.dtype) * scale, keep


# ---- activations -----------------------------------------------------------------------------

def selu(input):  # noqa: A002
    """Elementwise scaled exponential linear unit."""
    return F.selu(input)


def celu(input, alpha: float = 1.0):  # noqa: A002
    """Elementwise continuously differentiable exponential linear unit."""
    return F.celu(input, alpha)


def threshold(input, threshold, value):  # noqa: A002
    """x where x > threshold, else value."""
    return F.threshold(input, threshold, value)


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, generator=None):
    """Randomized leaky ReLU (the slope of x <= 0 drawn from U(lower, upper) in training, from
    `generator` when given)."""
    return F.rrelu(input, lower, upper, training, generator=generator)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False, generator=None):
    """rrelu written into x."""
    return F.rrelu_(input, lower, upper, training, generator=generator)


def hardshrink(input, lambd: float = 0.5):  # noqa: A002
    """x where |x| > lambd, else 0."""
    return F.hardshrink(input, lambd)


# torch's keyword-only out= of the top-level forms (ops/out_argument.py): hardshrink's out has
# the result's dtype ("Found dtype Double but expected Float"), threshold's any dtype the
# result casts to.
threshold = with_out(threshold, None)
hardshrink = with_out(hardshrink, "found")


selu_, celu_, threshold_, relu_ = F.selu_, F.celu_, F.threshold_, F.relu_
prelu = F.prelu


# ---- normalization ---------------------------------------------------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-05,  # noqa: A002
               cudnn_enable: bool = True):
    """Normalize over the last dims `normalized_shape` (nn.functional.layer_norm)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-05,  # noqa: A002
               cudnn_enabled: bool = True):
    """Normalize each group of channels (nn.functional.group_norm)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training: bool,  # noqa: A002
               momentum: float, eps: float, cudnn_enabled: bool):
    """Normalize each channel by batch or running statistics (nn.functional.batch_norm, with
    aten's argument order)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var,  # noqa: A002
                  use_input_stats: bool, momentum: float, eps: float, cudnn_enabled: bool):
    """Normalize each channel of each sample (nn.functional.instance_norm, with aten's
    argument order)."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


rms_norm = F.rms_norm


# ---- convolution, pooling, shuffles, embedding ------------------------------------------------

conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)


def convolution(input, weight, bias, stride, padding, dilation, transposed: bool,  # noqa: A002
                output_padding, groups: int):
    """The convolution of x (1-, 2- or 3-d by x's rank), transposed when `transposed`."""
    spatial = input.ndim - 2
    if transposed:
        function = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return function(input, weight, bias, stride, padding, output_padding, groups, dilation)
    function = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    return function(input, weight, bias, stride, padding, dilation, groups)


def _max_pool(function):
    def pool(input, kernel_size, stride=(), padding=0, dilation=1,  # noqa: A002
             ceil_mode: bool = False):
        return function(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    pool.__name__ = pool.__qualname__ = function.__name__
    pool.__doc__ = f"{function.__name__} of nn.functional, with aten's default stride `()`."
    return pool


max_pool1d, max_pool2d, max_pool3d = map(_max_pool, (F.max_pool1d, F.max_pool2d, F.max_pool3d))


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0,  # noqa: A002
                            dilation=1, ceil_mode: bool = False):
    """(values, indices) of 1-d max pooling."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True):
    """1-d average pooling, with aten's default stride `()`."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """1-d average pooling to a fixed length."""
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """(values, indices) of 1-d max pooling to a fixed length."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle
channel_shuffle = native_channel_shuffle = F.channel_shuffle


def embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False):
    """The rows of `weight` at `indices` (aten's order; padding_idx -1 is none)."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def bilinear(input1, input2, weight, bias=None):
    """`x1^T W x2 + b` for each output feature."""
    return F.bilinear(input1, input2, weight, bias)


def constant_pad_nd(input, pad, value=0):  # noqa: A002
    """x padded with `value` by the (left, right) amounts of `pad`, last dim first."""
    return F.pad(input, pad, "constant", value)


pairwise_distance, pdist = F.pairwise_distance, F.pdist


# ---- losses, with aten's integer reduction -------------------------------------------------------

def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,  # noqa: A002
                                     reduction: int = 1):
    """Binary cross entropy of logits (reduction 0: none, 1: mean, 2: sum)."""
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                              reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    """The cosine embedding loss (reduction 0: none, 1: mean, 2: sum)."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 1):  # noqa: A002
    """The hinge embedding loss (reduction 0: none, 1: mean, 2: sum)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction: int = 1, *, log_target: bool = False):  # noqa: A002
    """The Kullback-Leibler divergence of log-probabilities (reduction 0: none, 1: mean,
    2: sum)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    """The margin ranking loss (reduction 0: none, 1: mean, 2: sum)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int):
    """The Poisson negative log-likelihood (reduction 0: none, 1: mean, 2: sum)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-06, swap: bool = False, reduction: int = 1):
    """The triplet margin loss (reduction 0: none, 1: mean, 2: sum)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 1, zero_infinity: bool = False):
    """The connectionist temporal classification loss (reduction 0: none, 1: mean, 2: sum)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


# ---- recurrent cells and grids ---------------------------------------------------------------

def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """(h', c'): one LSTM step from hx = (h, c)."""
    (h, c), _ = _rnn_step("LSTM", F.linear(input, w_ih, b_ih), tuple(hx), w_hh, b_hh)
    return h, c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """h': one GRU step."""
    return _rnn_step("GRU", F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _rnn_step("RNN_TANH", F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _rnn_step("RNN_RELU", F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)[0]


def grid_sampler(input, grid, interpolation_mode: int, padding_mode: int,  # noqa: A002
                 align_corners: bool):
    """nn.functional.grid_sample with its modes as aten's integers (interpolation 0:
    bilinear, 1: nearest, 2: bicubic; padding 0: zeros, 1: border, 2: reflection)."""
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                         _PADDING[padding_mode], align_corners)


def grid_sampler_2d(input, grid, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool):
    """grid_sampler of a 4-d input."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool):
    """grid_sampler of a 5-d input."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners: bool):
    """nn.functional.affine_grid."""
    return F.affine_grid(theta, size, align_corners)


# Tensor's methods of these ops (x.hardshrink(), x.prelu(w)): attached here, where the ops are,
# since the ops layer, which attaches the others, is below nn.
Tensor.hardshrink = lambda self, lambd=0.5: F.hardshrink(self, lambd)
Tensor.hardshrink.__doc__ = "x where |x| > lambd, else 0 (nn.functional.hardshrink)."
Tensor.hardshrink.__name__, Tensor.hardshrink.__qualname__ = "hardshrink", "Tensor.hardshrink"
Tensor.hardshrink.__module__ = Tensor.__module__  # pickled by name, as torch's method
Tensor.prelu = lambda self, weight: F.prelu(self, weight)
Tensor.prelu.__doc__ = "x where x > 0, else weight * x, per channel (nn.functional.prelu)."
Tensor.prelu.__name__, Tensor.prelu.__qualname__ = "prelu", "Tensor.prelu"
Tensor.prelu.__module__ = Tensor.__module__

__all__ = list(NN_TOP_LEVEL_NAMES)
