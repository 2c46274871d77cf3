"""The rest of torch.nn's activation layers: the bounded, shrinking, exponential, gated,
randomized and learned ones (activation/__init__.py holds the common ones).

Each module holds torch's constructor arguments, prints them as torch does, and calls its
functional form in nn/functional/activation.py, a composite of autojit ops. `inplace=True`
writes into the input. PReLU is the one with a parameter: `weight`, one slope per channel
(or one for all), initialized to `init`. RReLU draws its slopes from autojit's generator while
training and uses their mean in evaluation.
"""

from __future__ import annotations

import warnings

from ...tensor.creation import empty
from .. import init as nn_init
from ..functional import activation as A
from ..module import Module
from ..parameter import Parameter

__all__ = ["Threshold", "ReLU6", "Hardtanh", "RReLU", "PReLU", "SELU", "CELU", "GLU", "Mish",
           "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink", "Tanhshrink", "Softsign",
           "Softmax2d"]


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    """x where x > threshold, else value.

        >>> import autojit
        >>> autojit.nn.Threshold(0.5, -1.0)(autojit.tensor([0.2, 0.7])).tolist()
        [-1.0, 0.699999988079071]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """x clamped into [min_val, max_val] (min_value and max_value are deprecated names).

        >>> import autojit
        >>> autojit.nn.Hardtanh(-2.0, 2.0)(autojit.tensor([-3.0, 1.0, 3.0])).tolist()
        [-2.0, 1.0, 2.0]
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input):  # noqa: A002
        return A.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return (f"min_val={self.min_val}, max_val={self.max_val}"
                f"{_inplace_suffix(self.inplace)}")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class RReLU(Module):
    """Randomized leaky ReLU: while training, each x <= 0 is scaled by a slope drawn from
    U(lower, upper); in evaluation by (lower + upper) / 2.

        >>> import autojit
        >>> layer = autojit.nn.RReLU(0.1, 0.3).eval()
        >>> layer
        RReLU(lower=0.1, upper=0.3)
        >>> layer(autojit.tensor([-1.0, 2.0])).tolist()
        [-0.20000000298023224, 2.0]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class PReLU(Module):
    """x where x > 0, else weight * x, with a learned slope: one for all channels
    (num_parameters=1) or one per channel (dim 1 of the input).

        >>> import autojit
        >>> layer = autojit.nn.PReLU(num_parameters=2)
        >>> layer, layer.weight.tolist()
        (PReLU(num_parameters=2), [0.25, 0.25])
        >>> layer(autojit.tensor([[-4.0, 4.0]])).tolist()
        [[-1.0, 4.0]]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set every slope to `init`."""
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):  # noqa: A002
        return A.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class SELU(Module):
    """scale * elu(x, alpha) with the self-normalizing constants alpha = 1.6733 and
    scale = 1.0507."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class GLU(Module):
    """The gated linear unit a * sigmoid(b), a and b the halves of the input along dim.

        >>> import autojit
        >>> autojit.nn.GLU()(autojit.zeros(3, 4)).shape
        autojit.Size([3, 2])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return A.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Mish(Module):
    """x * tanh(softplus(x))."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardswish(Module):
    """0 for x <= -3, x for x >= 3, x * (x + 3) / 6 between."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """0 for x <= -3, 1 for x >= 3, x / 6 + 1 / 2 between."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return A.hardsigmoid(input, self.inplace)


class Hardshrink(Module):
    """x where |x| > lambd, else 0.

        >>> import autojit
        >>> autojit.nn.Hardshrink(0.5)(autojit.tensor([-1.0, 0.25, 0.75])).tolist()
        [-1.0, 0.0, 0.75]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        return A.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        return A.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):  # noqa: A002
        return A.tanhshrink(input)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):  # noqa: A002
        return A.softsign(input)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input.

        >>> import autojit
        >>> autojit.nn.Softmax2d()(autojit.zeros(1, 4, 2, 2))[0, :, 0, 0].tolist()
        [0.25, 0.25, 0.25, 0.25]
    """

    def forward(self, input):  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return A.softmax(input, -3)
