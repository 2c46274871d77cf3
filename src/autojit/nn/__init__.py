"""autojit.nn: Module and Parameter, the layers, the losses, init and the functional API.

module.py holds the Module base class; each layer family has its own file or package (linear.py,
activation/, container.py, pooling/, loss/, ...); functional/ (autojit.nn.functional) holds the
functions the layers call.
"""

from . import functional, init, parallel, utils  # noqa: F401
from .activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Tanh,
)

# ---- the rest of torch.nn's activations (activation/extra.py) ----
from .activation.extra import (
    CELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Mish,
    PReLU,
    ReLU6,
    RReLU,
    Softmax2d,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention
from .container import Container, ModuleDict, ModuleList, Sequential
from .dropout import Dropout

# ---- channel-wise and alpha dropouts (dropout_extra.py) ----
from .dropout_extra import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout

# ---- EmbeddingBag (embedding_bag.py) ----
from .embedding_bag import EmbeddingBag
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    NLLLoss2d,
    SmoothL1Loss,
)

# ---- distribution, margin and embedding losses, distances (loss/extra.py) ----
from .loss.extra import (
    CosineEmbeddingLoss,
    CosineSimilarity,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    KLDivLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PairwiseDistance,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .loss.linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .optimized_module import OptimizedModule  # noqa: F401 - installs autojit.compile's hook
from .parameter import Buffer, Parameter
from .parameter_containers import ParameterDict, ParameterList
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "Module", "Parameter", "Buffer", "functional", "init", "utils",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Container",
    "Identity", "Linear", "Bilinear", "Embedding", "Dropout", "Flatten", "Unflatten",
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "LogSigmoid", "Softmax", "LogSoftmax", "Softmin",
    "LeakyReLU", "ELU", "Softplus",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
    "BCELoss", "BCEWithLogitsLoss", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions",
    # ---- the rest of torch.nn's activations (activation/extra.py) ----
    "Threshold", "ReLU6", "Hardtanh", "RReLU", "PReLU", "SELU", "CELU", "GLU", "Mish",
    "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink", "Tanhshrink", "Softsign", "Softmax2d",
    # ---- distribution, margin and embedding losses, distances (loss/extra.py) ----
    "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "HingeEmbeddingLoss", "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "CosineSimilarity", "PairwiseDistance", "MultiMarginLoss",
    "MultiLabelMarginLoss",
    # ---- channel-wise and alpha dropouts (dropout_extra.py) ----
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "EmbeddingBag", "CTCLoss",
]
# attention and transformers
__all__ += [
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer",
]

# ---- convolution, padding, pooling, resampling and normalization layers ------------------------
from .convolution import Conv1d, Conv2d, Conv3d  # noqa: E402
from .convolution_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: E402
from .pooling import (  # noqa: E402
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from .pooling.adaptive import (  # noqa: E402
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
)
from .pooling.fractional import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402

__all__ += [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
]

from .padding import (  # noqa: E402
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .resampling import (  # noqa: E402
    ChannelShuffle,
    Fold,
    PixelShuffle,
    PixelUnshuffle,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ += [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "Fold", "Unfold", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
]

from .cross_map_lrn import CrossMapLRN2d  # noqa: E402
from .normalization_extra import (  # noqa: E402
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
    RMSNorm,
)

__all__ += ["BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm",
            "LocalResponseNorm", "CrossMapLRN2d"]

# ---- lazy layers and their uninitialized tensors (lazy.py, parameter.py) ------------------------
from .lazy import (  # noqa: E402
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
)
from .parameter import UninitializedBuffer, UninitializedParameter  # noqa: E402

__all__ += [
    "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "UninitializedParameter", "UninitializedBuffer",
]

# ---- DataParallel (data_parallel.py) --------------------------------------------------------
from .data_parallel import DataParallel  # noqa: E402

__all__ += ["DataParallel"]

# ---- the adaptive softmax (adaptive.py) --------------------------------------------------------
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402

__all__ += ["AdaptiveLogSoftmaxWithLoss"]

# ---- SyncBatchNorm (sync_batchnorm.py) ---------------------------------------------------------
from .sync_batchnorm import SyncBatchNorm  # noqa: E402

__all__ += ["SyncBatchNorm"]


# ---- the factory arguments a module passes on (torch.nn.factory_kwargs) --------------------


def factory_kwargs(kwargs):
    """The device, dtype and memory_format of a module's **kwargs as a dict for the factory
    functions (`autojit.empty(10, **factory_kwargs(kwargs))`), with those of a
    `factory_kwargs=` entry; a TypeError for any other key or one given twice, as torch's."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    found = dict(kwargs.get("factory_kwargs", {}))
    for key in simple_keys:
        if key in kwargs:
            if key in found:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            found[key] = kwargs[key]
    return found


__all__ += ["factory_kwargs"]

def __getattr__(name: str):
    # torch.nn.modules (the layers at torch's module paths) without `import ...nn.modules`, as
    # torch's nn has it; loaded on first use.
    if name == "modules":
        import importlib

        return importlib.import_module(f"{__name__}.modules")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
