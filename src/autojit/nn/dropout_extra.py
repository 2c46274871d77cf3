"""The channel-wise and alpha dropout layers: Dropout1d, Dropout2d, Dropout3d, AlphaDropout
and FeatureAlphaDropout (dropout.py holds Dropout).

Each holds torch's p and inplace, prints them as torch does, and calls its functional form in
nn/functional/channel_dropout.py while training; in evaluation it is the identity.
"""

from __future__ import annotations

from .dropout import _DropoutNd
from .functional import channel_dropout as D

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout1d(_DropoutNd):
    """Zero whole channels of a (N, C, L) or (C, L) input while training."""

    def forward(self, input):  # noqa: A002
        return D.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of a (N, C, H, W) or (C, H, W) input while training."""

    def forward(self, input):  # noqa: A002
        return D.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input while training."""

    def forward(self, input):  # noqa: A002
        return D.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout while training: keeps a unit-normal input's mean and variance."""

    def forward(self, input):  # noqa: A002
        return D.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels while training."""

    def forward(self, input):  # noqa: A002
        return D.feature_alpha_dropout(input, self.p, self.training)
