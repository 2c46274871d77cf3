"""Folding an eval-mode batch norm into the convolution or linear layer before it:
fuse_conv_bn_eval, fuse_linear_bn_eval and their weight forms, with torch.nn.utils.fusion's
names and formulas. An inference-time rewrite: the fused layer computes bn(layer(x)) with the
running statistics, in one layer."""

from __future__ import annotations

import copy

from ...autograd import no_grad
from ...tensor.creation import ones_like, zeros_like
from ..parameter import Parameter


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b,
                         transpose: bool = False) -> tuple:
    """The fused convolution's weight and bias (as Parameters) from the convolution's and the
    batch norm's tensors; transpose for a transposed convolution's weight layout."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    bias_requires_grad = conv_b.requires_grad if conv_b is not None else False
    with no_grad():
        conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
        bn_w = ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
        rsqrt_var = (bn_rv + bn_eps).rsqrt()
        shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
        fused_w = (conv_w * (bn_w * rsqrt_var).reshape(shape)).to(weight_dtype)
        fused_b = ((conv_b - bn_rm) * rsqrt_var * bn_w + bn_b).to(bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, bias_requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of `conv` that computes bn(conv(x)) of the two eval-mode modules."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b) -> tuple:
    """The fused linear layer's weight and bias (as Parameters)."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    bias_requires_grad = linear_b.requires_grad if linear_b is not None else False
    with no_grad():
        linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
        scale = bn_w * (bn_rv + bn_eps).rsqrt()
        fused_w = linear_w * scale.unsqueeze(-1).to(weight_dtype)
        fused_b = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, bias_requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` that computes bn(linear(x)) of the two eval-mode modules."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             "bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]
