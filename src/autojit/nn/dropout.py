"""Dropout: zero random elements while training, scaling the kept ones by 1 / (1 - p).

The mask comes from autojit's global generator, so autojit.manual_seed makes it repeatable.
In evaluation mode (module.eval()) the layer is the identity.
"""

from __future__ import annotations

from .layer_functions import dropout
from .module import Module

__all__ = ["Dropout"]


class _DropoutNd(Module):
    """What the dropout layers share: torch's p and inplace, checked and printed as torch's
    (the base class torch.nn.modules.dropout has, for isinstance checks)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """During training, zero each element with probability p and scale the rest by 1/(1-p).

        >>> import autojit
        >>> layer = autojit.nn.Dropout(p=0.25)
        >>> layer
        Dropout(p=0.25, inplace=False)
        >>> layer.eval()(autojit.ones(3)).tolist()
        [1.0, 1.0, 1.0]
    """

    def forward(self, input):  # noqa: A002
        return dropout(input, self.p, self.training, self.inplace)
