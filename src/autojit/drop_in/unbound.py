"""torch's functions kept as class attributes, under the drop-in: most of torch's public
functions are builtins, which do not bind an instance when read through it, so a library's
`class Loss(nn.Module): conv = torch.conv2d` calls `self.conv(x, w)` as `torch.conv2d(x, w)`
(kornia's HausdorffERLoss). autojit's are Python functions, which would bind `self` as the
first argument; the drop-in's class-statement hook (`drop_in/__init__.py`) hands each new
class here, which keeps such an attribute as a `staticmethod` of the same function, so that
`Loss.conv is torch.conv2d` still holds.

Which functions torch defines in Python, and so binds as torch does, are listed below
(checked against torch by tests/test_drop_in_unbound_torch.py).
"""

from __future__ import annotations

import sys
import types

# torch's top-level functions written in Python (the rest are builtins).
TORCH_PYTHON = frozenset((
    "are_deterministic_algorithms_enabled", "atleast_1d", "atleast_2d", "atleast_3d",
    "block_diag", "broadcast_shapes", "broadcast_tensors", "cartesian_prod", "cdist",
    "chain_matmul", "classproperty", "compile", "compiled_with_cxx11_abi", "cond", "eig",
    "einsum", "from_dlpack", "get_default_device", "get_deterministic_debug_mode",
    "get_file_path", "get_float32_matmul_precision", "get_rng_state", "initial_seed",
    "is_deterministic_algorithms_warn_only_enabled", "is_storage", "is_tensor",
    "is_warn_always_enabled", "load", "lobpcg", "lstsq", "lu", "manual_seed", "matrix_rank",
    "meshgrid", "norm", "pca_lowrank", "prepare_multiprocessing_environment",
    "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12", "save", "seed", "set_default_device",
    "set_default_dtype", "set_default_tensor_type", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_printoptions", "set_rng_state", "set_warn_always",
    "solve", "split", "stft", "svd_lowrank", "sym_float", "sym_fresh_size", "sym_int",
    "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "symeig", "tensordot",
    "thread_safe_generator", "typename", "unique", "unique_consecutive", "unravel_index",
    "use_deterministic_algorithms", "vmap", "while_loop",
))

# torch.nn.functional's builtins (the rest of it is Python).
FUNCTIONAL_BUILTINS = frozenset((
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu", "hardshrink",
    "hardtanh_", "has_torch_function", "has_torch_function_unary",
    "has_torch_function_variadic", "leaky_relu_", "linear", "logsigmoid",
    "native_channel_shuffle", "one_hot", "pairwise_distance", "pdist", "pixel_shuffle",
    "pixel_unshuffle", "prelu", "relu_", "rrelu_", "scaled_dot_product_attention", "selu_",
    "softplus", "softshrink", "threshold_",
))

# autojit's module for each torch namespace, torch's name of it, and whether a function of
# that name is a builtin in torch's.
_NAMESPACES = (
    ("autojit", "torch.", lambda name: name not in TORCH_PYTHON),
    ("autojit.nn.functional", "torch.nn.functional.", FUNCTIONAL_BUILTINS.__contains__),
    ("autojit.linalg", "torch.linalg.", lambda name: True),
    ("autojit.fft", "torch.fft.", lambda name: True),
    ("autojit.special", "torch.special.", lambda name: True),
)


def is_torch_builtin(value) -> bool:
    """Whether `value` is one of autojit's public functions whose torch counterpart is a
    builtin: reached under its own name in its namespace, or a `__torch_function__`
    dispatching wrapper of one (which carries torch's name)."""
    if value.__class__ is not types.FunctionType:
        return False
    module = getattr(value, "__module__", None) or ""
    if not (module == "autojit" or module.startswith("autojit.")):
        return False
    public = getattr(value, "__torch_function_name__", None)
    if public is not None:
        prefix, _, name = public.rpartition(".")
        for _, torch_prefix, builtin in _NAMESPACES:
            if torch_prefix == prefix + ".":
                return builtin(name)
        return False
    name = value.__name__
    for namespace_name, _, builtin in _NAMESPACES:
        namespace = sys.modules.get(namespace_name)
        if namespace is not None and vars(namespace).get(name) is value:
            return builtin(name)
    return False


def keep_unbound(kind: type) -> None:
    """Make each attribute of a class just defined that is one of torch's builtin functions a
    staticmethod of it, so that reading it through an instance does not bind."""
    for key, value in list(vars(kind).items()):
        if value.__class__ is types.FunctionType and is_torch_builtin(value):
            setattr(kind, key, staticmethod(value))
