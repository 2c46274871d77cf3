"""autojit: a tracing compiler with PyTorch's autograd API.

Eager tensor ops build an IR graph; autograd differentiates it (twice, with create_graph);
the compiler lowers whole training steps to fused kernels. The public names follow torch.
"""

from . import autograd, codegen, config, cuda, nn, optim, special, utils  # noqa: F401 - codegen registers the cpu backend
from .autograd import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_anomaly_enabled,
    set_grad_enabled,
)
from .compiler.api import CompiledFunction, CompileWarning, compile  # noqa: A004
from .interop.dlpack import from_dlpack
from .interop.serialization import load, save
from .ir.trace import make_graph
from .ops import tensor_methods as _tensor_methods  # noqa: F401 - attaches Tensor's op methods
from .ops.functional import *  # noqa: F403 - the op functions: add, exp, sum, matmul, ...
from .ops.functional import __all__ as _functional_names
from .ops.legacy_constructors import (
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
)
from .tensor.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from .tensor.device import device
from .tensor.dtypes import DType as dtype
from .tensor.dtypes import bool_ as bool  # noqa: A004
from .tensor.dtypes import (
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int32,
    int64,
    long,
    set_default_dtype,
)
from .tensor.dtypes import float as float  # noqa: A004, PLC0414
from .tensor.dtypes import int as int  # noqa: A004, PLC0414
from .tensor.dtypes import promote as promote_types
from .tensor.tensor import Size, Tensor

__version__ = config.VERSION

__all__ = [
    "Tensor", "Size", "device", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "BoolTensor", "autograd", "cuda", "nn", "no_grad", "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled", "inference_mode", "tensor", "as_tensor", "from_numpy", "zeros", "ones",
    "full", "empty", "arange", "linspace", "eye", "rand", "randn", "randint", "zeros_like",
    "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
    "manual_seed", "float16", "float32", "float64", "half", "float", "double", "int32", "int64",
    "int", "long", "bool", "dtype", "promote_types", "get_default_dtype", "set_default_dtype",
    "make_graph", "compile",
    "CompiledFunction", "CompileWarning", "save", "load", "optim", "utils", "from_dlpack",
    "special",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    *_functional_names,
]
