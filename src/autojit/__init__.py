"""autojit: a tracing compiler with PyTorch's autograd API.

Eager tensor ops build an IR graph; autograd differentiates it (twice, with create_graph);
the compiler lowers whole training steps to fused kernels. The public names follow torch.

`import autojit` loads tensors, ops and autograd; the packages above them (amp and autocast, nn,
optim, utils, func and vmap, jit, distributed, distributions, profiler, testing, cuda, cpu,
accelerator, special, the compiler, _dynamo and save/load) load on first use (`__getattr__`
below), so that a program pays only for what it uses (docs/performance.md, "compile latency").
"""

import importlib as _importlib
import math as _math
import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import (  # noqa: F401 - codegen registers the cpu backend
    autograd,
    backends,
    codegen,
    config,
    random,
    types,
    version,
)
from .autograd import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_anomaly_enabled,
    set_grad_enabled,
)
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision
from .compiler import backends as _compile_backends
from .config import (
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from .ir.make_graph import make_graph
from .nn_top_level_names import NN_ATEN_ENTRY_POINTS as _nn_aten_entry_points
from .nn_top_level_names import NN_TOP_LEVEL_NAMES as _nn_top_level_names
from .ops import checks as _checks  # torch._check and its siblings, torch._assert_async
from .ops import factory_forms as _factory_forms
from .ops import keyword_forms as _keyword_forms
from .ops import tensor_methods as _tensor_methods  # noqa: F401 - attaches Tensor's op methods
from .ops import tensor_names as _tensor_names  # after tensor_methods: adds to its tables
from .ops.aliases import broadcast_shapes
from .ops.aten_entry_points import (  # noqa: F401 - torch's names of aten's entry points
    _chunk_cat,
    _log_softmax_backward_data,
    _safe_softmax,
    _softmax_backward_data,
    _unsafe_masked_index,
    _unsafe_masked_index_put_accumulate,
    segment_reduce,
)
from .ops.aten_entry_points import segment_reduce as _segment_reduce  # noqa: F401 - torch's alias
from .ops.aten_namespace import LOADERS as _ATEN_LOADERS
from .ops.aten_namespace import NAMESPACE_LOADERS as _NAMESPACE_LOADERS
from .ops.autocast import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from .ops.counting import _unique, _unique2  # noqa: F401 - torch's private forms of unique
from .ops.fft import transforms as fft
from .ops.foreach import NAMES as _foreach_names
from .ops.functional import *  # noqa: F403 - the op functions: add, exp, sum, matmul, ...
from .ops.functional import __all__ as _functional_names
from .ops.legacy_constructors import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from .ops.linalg import namespace as linalg
from .ops.random.gamma import dirichlet_grad as _dirichlet_grad  # noqa: F401 - below
from .ops.random.gamma import sample_dirichlet as _sample_dirichlet  # noqa: F401
from .ops.random.gamma import standard_gamma as _standard_gamma  # noqa: F401
from .ops.random.gamma import standard_gamma_grad as _standard_gamma_grad  # noqa: F401
from .ops.sparse import namespace as sparse
from .ops.sparse.compressed import (  # noqa: F401 - torch's private index converters
    _convert_indices_from_coo_to_csr,
    _convert_indices_from_csr_to_coo,
    sparse_csc_tensor,
    sparse_csr_tensor,
)
from .ops.sparse.coo import mm as dsmm  # torch.dsmm: sparse @ dense, dense (spmm's result)
from .ops.sparse.coo import mm as spmm
from .ops.sparse.coo import sparse_coo_tensor
from .ops.storage import TypedStorage, UntypedStorage
from .tensor import torch_function as _torch_function
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
from .tensor.creation_extra import (
    asarray,
    bartlett_window,
    blackman_window,
    empty_permuted,
    empty_strided,
    frombuffer,
    hamming_window,
    hann_window,
    kaiser_window,
    logspace,
    range,  # noqa: A004 - torch's (deprecated) name
    scalar_tensor,
)
from .tensor.determinism import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from .tensor.device import RUNTIME_LOADERS as _RUNTIME_LOADERS
from .tensor.device import (
    AcceleratorError,
    OutOfMemoryError,
    device,
    get_default_device,
    set_default_device,
)
from .tensor.dtypes import DType as dtype
from .tensor.dtypes import (
    bfloat16,
    cdouble,
    cfloat,
    chalf,
    complex32,
    complex64,
    complex128,
    double,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .tensor.dtypes import bool_ as bool  # noqa: A004
from .tensor.dtypes import float as float  # noqa: A004, PLC0414
from .tensor.dtypes import int as int  # noqa: A004, PLC0414
from .tensor.generator import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .tensor.host_memory import keep_freed_memory as _keep_freed_memory
from .tensor.layouts import (
    jagged,
    layout,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from .tensor.memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from .tensor.once import is_warn_always_enabled, set_warn_always
from .tensor.printing import set_printoptions
from .tensor.random import randperm
from .tensor.settings import (
    is_storage,
    set_default_tensor_type,
    set_flush_denormal,
    typename,
)
from .tensor.tensor import Size, Tensor
from .tensor.type_info import (
    can_cast,
    finfo,
    iinfo,
    is_complex,
    is_floating_point,
    is_tensor,
    numel,
    promote_types,
    result_type,
)

__version__ = config.VERSION

# torch's top-level forms of Tensor's in-place methods (autojit.relu_(x), autojit.zero_(x)) and
# torch.fill and torch.detach (ops/tensor_names.py).
globals().update(_tensor_names.TOP_LEVEL_FUNCTIONS)
# torch's private checks (torch._check, torch._assert_async, ...: ops/checks.py).
globals().update(_checks.TORCH_NAMES)

# torch's constants (torch.pi, torch.inf, x[:, torch.newaxis]).
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
newaxis = None

# Packages and names loaded on first use: attribute -> (module, name in it, or None for the
# module itself).
_LAZY = {
    "_dynamo": ("_dynamo", None), "__config__": ("__config__", None),
    "accelerator": ("accelerator", None), "futures": ("futures", None),
    "Future": ("futures", "Future"),
    "hub": ("hub", None), "library": ("library", None), "_custom_ops": ("_custom_ops", None),
    "_tensor_str": ("_tensor_str", None), "_subclasses": ("_subclasses", None),
    "fx": ("fx", None), "_assert": ("fx._symbolic_trace", "_assert"), "ao": ("ao", None),
    "amp": ("amp", None), "autocast": ("amp", "autocast"), "compiler": ("compiler", None),
    "cpu": ("cpu", None), "cuda": ("cuda", None), "distributed": ("distributed", None),
    "distributions": ("distributions", None), "func": ("func", None), "nn": ("nn", None),
    "jit": ("jit", None),
    "optim": ("optim", None), "profiler": ("profiler", None), "special": ("special", None),
    "signal": ("signal", None), "masked": ("masked", None),
    "quasirandom": ("quasirandom", None), "return_types": ("return_types", None),
    "nested": ("nested", None),
    "GradScaler": ("amp", "GradScaler"),
    "get_device_module": ("accelerator", "get_device_module"),
    "orgqr": ("ops.linalg.extras", "orgqr"),
    "to_dlpack": ("utils.dlpack", "to_dlpack"),
    "DisableTorchFunction": ("tensor.torch_function", "DisableTorchFunction"),
    "DisableTorchFunctionSubclass": ("tensor.torch_function", "DisableTorchFunctionSubclass"),
    "testing": ("testing", None), "utils": ("utils", None), "xpu": ("xpu", None),
    "vmap": ("autograd.vmap", "vmap"), "_grouped_mm": ("ops.linalg.grouped_products", "grouped_mm"),
    "compile": ("compiler.api", "compile"),
    "SymInt": ("tensor.symbolic", "SymInt"), "SymFloat": ("tensor.symbolic", "SymFloat"),
    "SymBool": ("tensor.symbolic", "SymBool"),
    "CompiledFunction": ("compiler.api", "CompiledFunction"),
    "CompileWarning": ("compiler.api", "CompileWarning"),
    "from_dlpack": ("interop.dlpack", "from_dlpack"),
    # autojit.save and load know nn.Parameter (nn registers it with serialization).
    "save": ("interop.serialization", "save"), "load": ("interop.serialization", "load"),
    "serialization": ("interop.serialization", None),
}
_NEEDS = {"save": "nn.parameter", "load": "nn.parameter", "serialization": "nn.parameter"}
# torch's functions on sizes that may be symbolic, and its control-flow operators.
_LAZY.update({name: ("sym_functions", name) for name in (
    "cond", "sym_constrain_range", "sym_constrain_range_for_size", "sym_float",
    "sym_fresh_size", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt",
    "sym_sum", "while_loop")})
# torch's multi-tensor functions (torch._foreach_mul_, ...), from ops/foreach.py.
_LAZY.update({name: ("ops.foreach", name) for name in _foreach_names})
# torch's top-level forms of nn.functional's ops (torch.conv2d, ...) come with nn.
_LAZY.update({name: ("nn.top_level", name) for name in _nn_top_level_names})
# ... and their aten entry points (torch.native_layer_norm, ...).
_LAZY.update({name: ("nn.aten_entry_points", name) for name in _nn_aten_entry_points})



# Tensor methods nn/top_level.py defines, before nn is loaded: the first call loads it, and it
# puts the methods themselves on Tensor.
def _nn_method(name: str):
    _importlib.import_module(f"{__name__}.nn.top_level")
    return getattr(Tensor, name)


def _hardshrink(self, lambd: float = 0.5):
    """x where |x| > lambd, else 0 (nn.functional.hardshrink)."""
    return _nn_method("hardshrink")(self, lambd)


def _prelu(self, weight):
    """x where x > 0, else weight * x, per channel (nn.functional.prelu)."""
    return _nn_method("prelu")(self, weight)


for _method in (_hardshrink, _prelu):
    _method.__name__ = _method.__qualname__ = _method.__name__[1:]
    if not hasattr(Tensor, _method.__name__):
        setattr(Tensor, _method.__name__, _method)


if _TYPE_CHECKING:  # what __getattr__ loads, for readers and type checkers
    from . import (  # noqa: F401
        _dynamo,
        accelerator,
        amp,
        compiler,
        cpu,
        cuda,
        distributed,
        distributions,
        func,
        jit,
        masked,
        nn,
        optim,
        profiler,
        signal,
        special,
        testing,
        utils,
    )
    from .amp import autocast
    from .autograd.vmap import vmap
    from .compiler.api import CompiledFunction, CompileWarning, compile  # noqa: A004
    from .interop.dlpack import from_dlpack
    from .interop.serialization import load, save


def __getattr__(name: str):
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _NEEDS:
        _importlib.import_module(f"{__name__}.{_NEEDS[name]}")
    module = _importlib.import_module(f"{__name__}.{found[0]}")
    value = module if found[1] is None else getattr(module, found[1])
    if name not in _TORCH_FUNCTION_LEFT_ALONE:  # (torch.save, loaded here, is not dispatched)
        value = _torch_function.late(value, name, "torch.")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# What registers itself when autojit.cuda is imported, reached before it is: tensors on a CUDA
# device ask for its runtime, and compiled graphs on them for its backend.
_RUNTIME_LOADERS["cuda"] = lambda: _importlib.import_module(f"{__name__}.cuda")
_compile_backends.register("cuda", f"{__name__}.cuda.plan")
# The aten namespace (autojit.ops.aten, torch.ops.aten under the drop-in) holds nn's entry
# points (native_layer_norm, ...) once nn/aten_entry_points.py registers them: it imports that
# module the first time it misses a name.
_ATEN_LOADERS.append(lambda: _importlib.import_module(f"{__name__}.nn.aten_entry_points"))
# torch.ops.profiler's record_function operators are the profiler's (autograd/profiler.py).
_NAMESPACE_LOADERS["profiler"] = lambda: _importlib.import_module(
    f"{__name__}.autograd.profiler")

# Eager arrays come from the C heap, which keeps freed blocks for the next array instead of
# mapping new pages for each (tensor/host_memory.py; AUTOJIT_HOST_MEMORY=system opts out).
_keep_freed_memory()

# autojit.linalg and autojit.fft are modules of the ops layer; registered under their public
# names, they import as torch.linalg does (`import autojit.linalg`, `from autojit.linalg import
# norm`).
_sys.modules[__name__ + ".linalg"] = linalg
_sys.modules[__name__ + ".fft"] = fft
_sys.modules[__name__ + ".sparse"] = sparse  # as torch.sparse, in the ops layer too

__all__ = [
    "Tensor", "Size", "device", "OutOfMemoryError", "AcceleratorError", "UntypedStorage",
    "TypedStorage", "FloatTensor",
    "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "BFloat16Tensor",
    "autograd", "cuda", "distributions", "nn", "profiler", "no_grad",
    "enable_grad", "set_grad_enabled", "is_inference_mode_enabled",
    "is_grad_enabled", "inference_mode", "tensor", "as_tensor", "from_numpy", "frombuffer",
    "zeros", "ones",
    "full", "empty", "arange", "linspace", "eye", "rand", "randn", "randint", "zeros_like",
    "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
    "manual_seed", "float16", "bfloat16", "float32", "float64", "half", "float", "double",
    "uint8", "int8", "int16", "short", "int32", "int64", "complex32", "complex64",
    "complex128", "chalf", "cfloat", "cdouble", "uint16", "uint32", "uint64",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
    "int", "long", "bool", "dtype", "promote_types", "get_default_dtype", "set_default_dtype",
    "make_graph", "compile",
    "CompiledFunction", "CompileWarning", "save", "load", "optim", "utils", "func", "jit",
    "from_dlpack",
    "linalg", "fft", "sparse", "sparse_coo_tensor", "sparse_csr_tensor",
    "sparse_csc_tensor", "spmm", "dsmm",
    "special",
    "signal",
    "masked",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    *_functional_names,
    # random numbers: generators, the global seed and state, randperm
    "Generator", "default_generator", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "randperm", "random",
    # defaults and type information
    "set_default_device", "get_default_device", "finfo", "iinfo", "is_tensor",
    "is_floating_point", "is_complex", "numel", "result_type", "can_cast",
    # what programs probe before they start: backends, accelerator, threads, matmul precision
    "backends", "accelerator", "types", "set_num_threads", "get_num_threads",
    "set_num_interop_threads", "get_num_interop_threads", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "set_printoptions",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "version", "vmap", "testing", "memory_format",
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "layout",
    "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged",
    # mixed precision: autocast and its settings (autojit.amp has GradScaler)
    "amp", "cpu", "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
    "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
    "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
    # ops of other kinds with torch's top-level names: broadcast_shapes, the factories logspace
    # and empty_strided, nn.functional's ops in aten's forms, the in-place functions
    "broadcast_shapes", "logspace", "empty_strided", "empty_permuted", "scalar_tensor",
    "asarray", "range", "hann_window", "hamming_window", "bartlett_window", "blackman_window",
    "kaiser_window", "set_default_tensor_type", "set_warn_always", "is_warn_always_enabled",
    "set_flush_denormal", "is_storage", "typename",
]
# torch's keyword names for the functions' parameters (autojit.exp(input=x), zeros(size=...)),
# once every function is in the namespace (ops/keyword_forms.py).
_factory_forms.accept_all(globals())  # out=, layout= and pin_memory= of the factories
_keyword_forms.accept_all(globals(), _keyword_forms.FUNCTIONS)

# Names listed where they are defined, not a second time here: torch's top-level forms of nn's
# ops (loaded with nn) and the top-level functions of ops/tensor_names.py. Added outside the
# literal above so that the API reference's static reader sees a list of strings there.
globals()["__all__"] = [*__all__, *_nn_top_level_names, *_tensor_names.TOP_LEVEL_FUNCTIONS,
                        *(name for name in _nn_aten_entry_points if not name.startswith("_"))]

# A Tensor subclass's __torch_function__ sees the functions of the top level (except those torch
# does not dispatch: ones made from data, settings), once one is in use
# (tensor/torch_function.py).
_TORCH_FUNCTION_LEFT_ALONE = (
    "tensor", "as_tensor", "asarray", "from_numpy", "is_tensor", "is_storage", "compile",
    "vmap", "manual_seed", "seed", "initial_seed", "set_default_dtype", "get_default_dtype",
    "set_default_device", "get_default_device", "set_grad_enabled", "is_grad_enabled",
    "set_printoptions", "typename", "save", "load", "make_graph", "set_num_threads",
    "get_num_threads", "use_deterministic_algorithms")
_torch_function.expose(_sys.modules[__name__], "torch.",
                       left_alone=_TORCH_FUNCTION_LEFT_ALONE)
