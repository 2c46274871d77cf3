"""autojit.nn: Module and Parameter, the layers, the losses, init and the functional API.

module.py holds the Module base class; each layer family has its own file (linear.py,
activation.py, container.py, ...); functional.py holds the functions the layers call.
"""

from . import functional, init, utils  # noqa: F401
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

# ---- the rest of torch.nn's activations (activation_extra.py) ----
from .activation_extra import (
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
from .container import ModuleDict, ModuleList, Sequential
from .convolution import Conv1d, Conv2d
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
    SmoothL1Loss,
)

# ---- distribution, margin and embedding losses, distances (loss_extra.py) ----
from .loss_extra import (
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
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .parameter import Parameter
from .parameter_containers import ParameterDict, ParameterList
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding

__all__ = [
    "Module", "Parameter", "functional", "init", "utils",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "Embedding", "Dropout", "Flatten", "Unflatten",
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "LogSigmoid", "Softmax", "LogSoftmax", "Softmin",
    "LeakyReLU", "ELU", "Softplus",
    "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
    "BCEWithLogitsLoss",
    # ---- the rest of torch.nn's activations (activation_extra.py) ----
    "Threshold", "ReLU6", "Hardtanh", "RReLU", "PReLU", "SELU", "CELU", "GLU", "Mish",
    "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink", "Tanhshrink", "Softsign", "Softmax2d",
    # ---- distribution, margin and embedding losses, distances (loss_extra.py) ----
    "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "HingeEmbeddingLoss", "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "CosineSimilarity", "PairwiseDistance", "MultiMarginLoss",
    "MultiLabelMarginLoss",
    # ---- channel-wise and alpha dropouts (dropout_extra.py) ----
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "EmbeddingBag", "CTCLoss",
]
