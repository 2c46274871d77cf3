"""Activation layers: the module form of the elementwise nonlinearities and the softmax family.

Each module holds its settings and calls the composite in nn.functional (or ops/composite.py),
so nothing here has a gradient rule of its own. `inplace=True` writes the result into the
input, as torch does (nn/functional/activation.py); the other activations of torch.nn are in
extra.py.
"""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin",
           "LeakyReLU", "ELU", "Softplus", "LogSigmoid"]


class ReLU(Module):
    """max(x, 0) elementwise.

        >>> import autojit
        >>> autojit.nn.ReLU()(autojit.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x * Phi(x), with the exact erf form (approximate='none') or the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate argument must be either none or tanh, got "
                             f"{approximate}")
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x) elementwise (also called swish)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x) elementwise."""

    def forward(self, input):  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


class LogSigmoid(Module):
    """log(sigmoid(x)) elementwise, computed stably."""

    def forward(self, input):  # noqa: A002
        return F.logsigmoid(input)


class _SoftmaxFamily(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    """exp(x) / sum(exp(x)) along dim, so every slice along dim sums to 1."""

    def forward(self, input):  # noqa: A002
        return F.softmax(input, self.dim)


class LogSoftmax(_SoftmaxFamily):
    """log(softmax(x)) along dim, computed stably."""

    def forward(self, input):  # noqa: A002
        return F.log_softmax(input, self.dim)


class Softmin(_SoftmaxFamily):
    """softmax(-x) along dim."""

    def forward(self, input):  # noqa: A002
        return F.softmin(input, self.dim)


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"
