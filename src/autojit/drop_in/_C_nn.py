"""torch._C._nn under the drop-in, as an attribute of torch._C: the functions of torch's C
extension behind torch.nn.functional that programs call directly (`torch._C._nn.linear`,
`gelu`, `pad`), each autojit.nn.functional's, whose arguments they take in the same order, and
torch's test operator `_test_warn_in_autograd`. Another name of torch._C._nn raises the
drop-in's AttributeError.
"""

from __future__ import annotations

import sys
import warnings

from ..autograd.function import Function
from ..nn.functional import (  # noqa: F401 - torch._C._nn's names
    gelu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    linear,
    mish,
    one_hot,
    pad,
    relu6,
    scaled_dot_product_attention,
    silu,
    softplus,
    softshrink,
)
from ..nn.functional import logsigmoid as log_sigmoid  # noqa: F401 - torch._C._nn's name
from ..tensor.tensor import Tensor
from .names import explain_missing_attributes


class _TestWarnInAutograd(Function):
    """torch's test operator: a copy of its input whose backward warns "Warn from backward"
    (each time a backward runs it) and passes the gradient on; no forward-mode formula."""

    @staticmethod
    def forward(ctx, input):  # noqa: A002
        return input.clone()

    @staticmethod
    def backward(ctx, grad):
        warnings.warn("Warn from backward", UserWarning, stacklevel=2)
        return grad

    @staticmethod
    def jvp(ctx, tangent):
        raise NotImplementedError(
            "Trying to use forward AD with _test_warn_in_autograd that does not support it "
            "because it has not been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation or submit a PR adding the implementation to "
            "derivatives.yaml")


_TestWarnInAutograd._backward_cls.__name__ = "TestWarnInAutogradBackward0"  # torch's node
_TestWarnInAutograd._backward_cls.__qualname__ = "TestWarnInAutogradBackward0"


def _test_warn_in_autograd(input):  # noqa: A002 - torch's name
    """A copy of `input` whose backward warns "Warn from backward" (torch's test operator of
    warnings raised during backward)."""
    if not isinstance(input, Tensor):
        raise TypeError("_test_warn_in_autograd(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return _TestWarnInAutograd.apply(input)


explain_missing_attributes(sys.modules[__name__], "torch._C._nn")

__all__ = ["gelu", "glu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "linear",
           "log_sigmoid", "mish", "one_hot", "pad", "relu6", "scaled_dot_product_attention",
           "silu", "softplus", "softshrink"]
