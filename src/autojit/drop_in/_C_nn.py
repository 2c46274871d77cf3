"""torch._C._nn under the drop-in, as an attribute of torch._C: the functions of torch's C
extension behind torch.nn.functional that programs call directly (`torch._C._nn.linear`,
`gelu`, `pad`), each autojit.nn.functional's, whose arguments they take in the same order.
Another name of torch._C._nn raises the drop-in's AttributeError.
"""

from __future__ import annotations

import sys

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
from .names import explain_missing_attributes

explain_missing_attributes(sys.modules[__name__], "torch._C._nn")

__all__ = ["gelu", "glu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "linear",
           "log_sigmoid", "mish", "one_hot", "pad", "relu6", "scaled_dot_product_attention",
           "silu", "softplus", "softshrink"]
