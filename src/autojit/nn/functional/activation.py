"""The activations of autojit.nn.functional, their in-place forms, and the softmax family.

Most functions are composites of autojit ops, so autograd, double backward, tracing and fusion
come from the primitives. Where torch's kernel is not smooth (a kink, a bound, a threshold) the
composite is a `where` whose condition is torch's: at the kink the branch torch's backward
formula takes gives the value and the derivatives, so first and second derivatives there
are torch's (tests/test_nn_activation_points.py checks them against torch). In float32 and
float64 the piecewise-linear ones (hardtanh and relu6, leaky_relu, softshrink, hardshrink,
threshold) bind primitives instead (ops/nn/rectifiers.py, ops/nn/threshold.py): torch's
backward kernels, whose derivative in the input is zeros, so that a second derivative in the
input alone is torch's zeros rather than none.

`inplace=True`, and the `_` forms (relu_, elu_, hardtanh_, ...), write the result into the
input through ops/inplace.py: the input is changed and returned, its version moves, and its
autograd history becomes the activation's, as in torch (a leaf that requires grad is refused).
The random ones (rrelu in training, gumbel_softmax) draw from autojit's global generator; in a
compiled function each draw is a "random" graph input, drawn anew on every call.

nn/functional/__init__.py re-exports this module; it imports nothing from there.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...autograd.grad_mode import is_grad_enabled
from ...ops import composite
from ...ops import elementwise as ew
from ...ops.autocast import LOWER, autocast_op
from ...ops.composite import softplus
from ...ops.elementwise import math_primitives as ewm
from ...ops.indexing import max as max_with_indices
from ...ops.inplace import apply_inplace
from ...ops.nn import hard_activations, rectifiers
from ...ops.nn import threshold as threshold_op
from ...ops.nn.softmax import log_softmax as log_softmax_op
from ...ops.nn.softmax import softmax as softmax_op
from ...tensor import dtypes
from ...tensor.creation import arange, rand
from ...tensor.state import state as thread_state
from ...tensor.tensor import Tensor, normalize_dim
from .common import check_floating, check_tensor, scalar_type

__all__ = [
    "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "threshold", "threshold_", "leaky_relu",
    "leaky_relu_", "prelu", "rrelu", "rrelu_", "elu", "elu_", "selu", "selu_", "celu", "celu_",
    "silu", "mish", "hardsigmoid", "hardswish", "logsigmoid", "glu", "hardshrink",
    "softshrink", "tanhshrink", "softsign", "softmax", "log_softmax", "softmin",
    "gumbel_softmax",
]

# SELU's constants (Klambauer et al., 2017), as torch spells them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _in_place(name: str, function, input: Tensor, *args) -> Tensor:  # noqa: A002
    """`function(input, *args)` written into input (torch's `relu_` and the other `_` forms)."""
    return apply_inplace(input, name, lambda source: function(source, *args))


def _same_kind(value, input: Tensor):  # noqa: A002
    """A bound or fill value as torch casts it to an integer input's dtype."""
    return value if input.dtype.is_floating_point else int(value)


# ---- rectifiers -------------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0) elementwise; the gradient at 0 is 0."""
    if inplace:
        return relu_(input)
    return ewm.relu(input)


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """relu written into the input."""
    return _in_place("relu_", ewm.relu, input)


def _hardtanh(input: Tensor, min_val, max_val) -> Tensor:  # noqa: A002
    if input._dtype in _PRIMITIVE_DTYPES:
        return rectifiers.hardtanh(input, min_val, max_val)
    # torch's backward passes the gradient strictly inside (min_val, max_val) only: not at the
    # bounds, and not at NaN, which stays NaN.
    min_val, max_val = _same_kind(min_val, input), _same_kind(max_val, input)
    inside = (input > min_val) & (input < max_val)
    outside = ew.where(input <= min_val, min_val,
                       ew.where(input >= max_val, max_val, input.detach()))
    return ew.where(inside, input, outside)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """x clamped into [min_val, max_val]; the gradient is 0 at and beyond the bounds."""
    check_tensor("hardtanh", "input", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return _hardtanh(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """hardtanh written into the input."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _in_place("hardtanh_", _hardtanh, input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6): hardtanh between 0 and 6."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _threshold(input: Tensor, threshold, value) -> Tensor:  # noqa: A002
    if input._dtype in _PRIMITIVE_DTYPES and threshold_op.real_numbers(threshold, value):
        return threshold_op.threshold(input, threshold, value)
    floating = input.dtype.is_floating_point
    return ew.where(input <= threshold_op.as_number(threshold, floating),
                    threshold_op.as_number(value, floating), input)


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """x where x > threshold, else value (NaN stays NaN)."""
    check_tensor("threshold", "input", input)
    if inplace:
        return threshold_(input, threshold, value)
    return _threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """threshold written into the input."""
    return _in_place("threshold_", _threshold, input, threshold, value)


def _leaky_relu(input: Tensor, negative_slope) -> Tensor:  # noqa: A002
    if input._dtype in _PRIMITIVE_DTYPES:
        return rectifiers.leaky_relu(input, negative_slope)
    return ew.where(input > 0, input, input * negative_slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    check_floating("leaky_relu", input)
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """leaky_relu written into the input."""
    check_floating("leaky_relu", input)
    return _in_place("leaky_relu_", _leaky_relu, input, negative_slope)


@autocast_op(cpu=LOWER, cuda=LOWER)
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x where x > 0, else weight * x, with one learned slope per channel (dim 1) or one for
    all; the gradient at 0 is the slope's, as in torch."""
    check_tensor("prelu", "input", input)
    check_tensor("prelu", "weight", weight)
    if input.ndim == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{scalar_type(input.dtype)} and {scalar_type(weight.dtype)}")
    count = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if count != 1 and count != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {count} and channel size = {channels}.")
    if count == 1:
        slope = weight.reshape(())
    else:
        slope = weight.reshape((1, count) + (1,) * (input.ndim - 2))
    # torch's gradients take the slope for x <= 0 (and NaN), but its second derivatives are 0
    # at x == 0: there the product's factors are each detached in turn, which keeps the first
    # derivatives (slope for x, x = 0 for the slope) and drops the second. The slope's branch
    # only sees x <= 0 and the detached one only x == 0, so an infinite x elsewhere gives the
    # slope no NaN gradient.
    negative = ew.where(input > 0, 0, input)
    at_zero = input == 0
    zeros = ew.where(at_zero, input, 0)
    scaled = ew.where(at_zero, slope.detach() * zeros + slope * zeros.detach(), slope * negative)
    return ew.where(input > 0, input, scaled)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool,  # noqa: A002
           generator=None) -> Tensor:
    if not training:
        return _leaky_relu(input, (lower + upper) / 2)
    # Each non-positive element gets its own slope, uniform on [lower, upper].
    slopes = rand(*input.shape, dtype=input.dtype, device=input.device,
                  generator=generator) * (upper - lower) + lower
    return ew.where(input <= 0, input * slopes, input)


def _check_rrelu(input: Tensor, lower: float, upper: float, training: bool) -> None:  # noqa: A002
    check_floating("rrelu_with_noise_out" if training else "leaky_relu", input)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False, *, generator=None) -> Tensor:
    """Randomized leaky ReLU: in training each x <= 0 is scaled by its own slope drawn from
    U(lower, upper) (from `generator`, torch.rrelu's keyword, when given); in evaluation the
    slope is (lower + upper) / 2."""
    _check_rrelu(input, lower, upper, training)
    if inplace:
        return rrelu_(input, lower, upper, training, generator=generator)
    return _rrelu(input, lower, upper, training, generator)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False, *, generator=None) -> Tensor:
    """rrelu written into the input."""
    _check_rrelu(input, lower, upper, training)
    return _in_place("rrelu_", _rrelu, input, lower, upper, training, generator)


# ---- exponential linear units ------------------------------------------------------------------


def _elu(input: Tensor, alpha: float, scale: float = 1.0,  # noqa: A002
         input_scale: float = 1.0) -> Tensor:
    """scale * alpha * (exp(input_scale * x) - 1) where x <= 0, else scale * x.

    torch's first derivative at 0 is the negative branch's, input_scale * alpha * scale, and
    its second is 0 (that mask is x < 0): at 0 the negative branch is linear, for x < 0 it is
    expm1, and exp only sees non-positive values. NaN takes the x branch, as in torch.
    """
    negative = input < 0
    scaled = input * input_scale if input_scale != 1.0 else input
    curve = ew.expm1(ew.where(negative, scaled, 0)) + ew.where(negative, 0, scaled)
    positive = input * scale if scale != 1.0 else input
    return ew.where(input <= 0, curve * (alpha * scale), positive)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """alpha * (exp(x) - 1) where x <= 0, else x."""
    check_floating("elu", input)
    if inplace:
        return elu_(input, alpha)
    return _elu(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """elu written into the input."""
    check_floating("elu", input)
    return _in_place("elu_", _elu, input, alpha)


def _selu(input: Tensor) -> Tensor:  # noqa: A002
    return _elu(input, SELU_ALPHA, SELU_SCALE)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with SELU's self-normalizing constants."""
    check_floating("elu", input)
    if inplace:
        return selu_(input)
    return _selu(input)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """selu written into the input."""
    check_floating("elu", input)
    return _in_place("selu_", _selu, input)


def _celu(input: Tensor, alpha: float) -> Tensor:  # noqa: A002
    return _elu(input, alpha, 1.0, 1.0 / alpha)


def _check_celu(input: Tensor, alpha: float) -> None:  # noqa: A002
    check_floating("elu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _check_celu(input, alpha)
    if inplace:
        return celu_(input, alpha)
    return _celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """celu written into the input."""
    _check_celu(input, alpha)
    return _in_place("celu_", _celu, input, alpha)


# ---- smooth and gated units --------------------------------------------------------------------


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x) elementwise (also called swish)."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        # torch computes complex silu but refuses to record it for autograd.
        if input.requires_grad and is_grad_enabled():
            raise RuntimeError("silu does not support automatic differentiation for outputs "
                               "with complex dtype.")
    else:
        check_floating("silu", input)
    if inplace:
        return _in_place("silu_", composite.silu, input)
    return composite.silu(input)


def _mish(input: Tensor) -> Tensor:  # noqa: A002
    return input * ew.tanh(softplus(input))


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * tanh(softplus(x))."""
    check_floating("mish", input)
    if inplace:
        return _in_place("mish_", _mish, input)
    return _mish(input)


# torch's hardsigmoid backward multiplies by 1/6 rounded to float32, for float64 too.
_ONE_SIXTH_AS_FLOAT32 = hard_activations.ONE_SIXTH_AS_FLOAT32
_PRIMITIVE_DTYPES = (dtypes.float32, dtypes.float64)


def _as_primitive(input: Tensor) -> bool:  # noqa: A002
    """Whether hardswish and hardsigmoid bind their primitives (ops/nn/hard_activations.py):
    eager, on the CPU, in float32 or float64, C-contiguous (a primitive's result is laid out
    row-major, as torch lays out a contiguous input's; the composites follow other layouts as
    torch does); the composites below otherwise."""
    return thread_state.tracer is None and input._dtype in _PRIMITIVE_DTYPES and \
        input._payload.__class__ is np.ndarray and input._payload.flags.c_contiguous


def _hardsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    if _as_primitive(input):
        return hard_activations.hardsigmoid(input)
    # torch's gradient is 1/6 strictly inside (-3, 3) and 0 elsewhere, NaN included. The
    # value is (x + 3) / 6 of the detached input; the zero-valued x - x.detach() term carries
    # the gradient, with torch's constant.
    inside = (input > -3) & (input < 3)
    detached = input.detach()
    linear = (detached + 3) / 6
    moving = ew.where(inside, input, 0)
    linear = linear + (moving - moving.detach()) * _ONE_SIXTH_AS_FLOAT32
    return ew.where(inside, linear, composite.clamp(linear.detach(), 0, 1))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """0 for x <= -3, 1 for x >= 3, x / 6 + 1 / 2 between."""
    check_floating("hardsigmoid", input)
    if inplace:
        return _in_place("hardsigmoid_", _hardsigmoid, input)
    return _hardsigmoid(input)


def _hardswish(input: Tensor) -> Tensor:  # noqa: A002
    if _as_primitive(input):
        return hard_activations.hardswish(input)
    # torch's branches: x <= -3 gives 0 (x * 0, so -inf gives NaN) with gradient 0, -3 < x < 3
    # the parabola, x >= 3 and NaN the identity (so the slope at 3 is 1, not the parabola's).
    # The parabola only sees its own x: an infinite x there would make its unused gradient NaN.
    low, middle = input <= -3, (input > -3) & (input < 3)
    parabola_input = ew.where(middle, input, 0)
    return ew.where(low, input.detach() * 0,
                    ew.where(middle, parabola_input * (parabola_input + 3) / 6, input))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """0 for x <= -3, x for x >= 3, x * (x + 3) / 6 between."""
    check_floating("hardswish", input)
    if inplace:
        return _in_place("hardswish_", _hardswish, input)
    return _hardswish(input)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), which neither overflows nor underflows.

    min(x, 0) and -|x| are spelled as `where`s that take x >= 0 as the positive side, so that at
    0 the first derivative is 1/2 and the second -1/4 (abs and minimum would give a tie and a
    zero sign there).
    """
    check_floating("log_sigmoid", input)
    negative = input < 0
    return (ew.where(negative, input, 0)
            - ew.log1p(ew.exp(ew.where(negative, input, -input))))


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a * sigmoid(b), where a and b are the two halves of the input along dim."""
    check_floating("glu", input)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = normalize_dim(dim, input.ndim)
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    first, second = input.narrow(dim, 0, size // 2), input.narrow(dim, size // 2, size // 2)
    return first * ew.sigmoid(second)


# ---- shrinkage and soft sign -------------------------------------------------------------------


def _check_lambda(input: Tensor, lambd: float) -> None:  # noqa: A002
    largest = float(np.finfo(input.dtype.numpy).max)
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype "
                           f"{scalar_type(input.dtype)}, but found {lambd:g}")


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x where |x| > lambd, else 0; the gradient is 0 at +-lambd and at NaN, which stays NaN."""
    check_floating("hardshrink", input)
    if input._dtype in _PRIMITIVE_DTYPES:
        return rectifiers.hardshrink(input, lambd)
    outside = (input < -lambd) | (input > lambd)
    return ew.where(outside, input, ew.where(ew.isnan(input), input.detach(), 0))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x - lambd above lambd, x + lambd below -lambd, 0 between (NaN stays NaN)."""
    check_floating("softshrink", input)
    _check_lambda(input, lambd)
    if input._dtype in _PRIMITIVE_DTYPES:
        return rectifiers.softshrink(input, lambd)
    return ew.where(input > lambd, input - lambd,
                    ew.where(input < -lambd, input + lambd, input * 0))


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """x - tanh(x)."""
    return input - ew.tanh(input)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|)."""
    return input / (ew.abs(input) + 1)


# ---- softmax family ---------------------------------------------------------------------------


def _softmax_dim(name: str, ndim: int, dim) -> int:
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    return normalize_dim(dim, ndim)


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) over `dim`, computed around the maximum so exp never overflows."""
    return softmax_op(input, _softmax_dim("softmax", input.ndim, dim), dtype=dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) over `dim`, computed around the maximum."""
    return log_softmax_op(input, _softmax_dim("log_softmax", input.ndim, dim), dtype=dtype)


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:  # noqa: A002
    """softmax(-x) over `dim`."""
    dim = _softmax_dim("softmin", input.ndim, dim)
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    return softmax_op(-input, dim)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g drawn from Gumbel(0, 1); with hard=True the one-hot
    vector of its maximum, differentiated as the soft sample (straight through)."""
    check_tensor("gumbel_softmax", "logits", logits)
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning,
                      stacklevel=2)
    # g = -log(E), E ~ Exp(1) = -log(1 - U); E is kept above the smallest normal number, so
    # that U = 0 gives a large finite g rather than inf.
    uniform = rand(*logits.shape, dtype=logits.dtype, device=logits.device)
    tiny = float(np.finfo(logits.dtype.numpy).tiny)
    exponential = composite.clamp(-ew.log1p(-uniform), min=tiny)
    y_soft = softmax((logits - ew.log(exponential)) / tau, dim)
    if not hard:
        return y_soft
    dim = normalize_dim(dim, logits.ndim)
    index = max_with_indices(y_soft.detach(), dim, keepdim=True)[1]
    shape = [1] * logits.ndim
    if logits.ndim:
        shape[dim] = logits.shape[dim]
    positions = arange(logits.shape[dim] if logits.ndim else 1, device=logits.device)
    y_hard = (positions.reshape(shape) == index).to(logits.dtype)
    return y_hard - y_soft.detach() + y_soft
