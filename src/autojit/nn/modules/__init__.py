"""autojit.nn.modules: the layers at torch.nn.modules' paths (`from autojit.nn.modules.linear
import Linear`), one module per torch module, each re-exporting classes of autojit/nn/."""

from __future__ import annotations

from . import (
    activation,
    adaptive,
    batchnorm,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

_SUBMODULES = (activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout,
               flatten, fold, instancenorm, lazy, linear, loss, module, normalization, padding,
               pixelshuffle, pooling, rnn, sparse, transformer, upsampling)
__all__ = sorted({name for submodule in _SUBMODULES for name in submodule.__all__})
