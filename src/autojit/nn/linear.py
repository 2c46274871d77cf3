"""Identity, Linear and Bilinear: the affine layers and their default initialization.

Linear and Bilinear start from the usual defaults: the weight from kaiming_uniform_ with
a = sqrt(5), which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias from the same bound.
forward calls the composites in layer_functions.py.
"""

from __future__ import annotations

import math

from ..tensor.creation import empty
from . import init
from .layer_functions import bilinear, linear
from .module import Module
from .parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are ignored.

        >>> import autojit
        >>> autojit.nn.Identity(54, unused="argument")(autojit.ones(2)).tolist()
        [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


class Linear(Module):
    """y = x @ weight.T + bias, with weight (out_features, in_features) and bias (out_features).

        >>> import autojit
        >>> layer = autojit.nn.Linear(3, 2)
        >>> layer
        Linear(in_features=3, out_features=2, bias=True)
        >>> layer(autojit.ones(5, 3)).shape
        autojit.Size([5, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from the default initialization."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight A of shape (out_features, in1_features, in2_features).

        >>> import autojit
        >>> layer = autojit.nn.Bilinear(3, 4, 2)
        >>> layer(autojit.ones(5, 3), autojit.ones(5, 4)).shape
        autojit.Size([5, 2])
        >>> layer.weight.shape
        autojit.Size([2, 3, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype,
                                      device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(in1_features), 1/sqrt(in1_features)) for the weight and the bias."""
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
