"""autojit.nn.utils: helpers around modules, with torch.nn.utils's names. rnn.py packs and pads
variable-length sequences for the recurrent layers (nn/rnn.py); clip_grad.py clips gradients
between backward and the optimizer's step; convert_parameters.py flattens parameters into one
vector and back; weight_norm.py splits a weight into magnitude and direction (the hook form);
stateless.py calls a module with replacement parameters; fusion.py folds an eval-mode batch
norm into the layer before it; parametrize.py computes a parameter from an `original` on
every access, and parametrizations.py holds ready-made ones (weight_norm, spectral_norm,
orthogonal, whose maps are in orthogonal_maps.py); spectral_norm.py divides a weight by its
power-iteration spectral norm (the hook form); prune.py zeroes entries or channels of a
parameter through a mask that a forward pre-hook multiplies in; init.py makes a module
without initializing it (skip_init); memory_format.py lays convolution weights out channels
last."""

from . import (  # noqa: F401
    clip_grad,
    convert_parameters,
    fusion,
    parametrizations,
    parametrize,
    prune,
    rnn,
    stateless,
)
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init
from .memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["rnn", "clip_grad", "convert_parameters", "clip_grad_norm", "clip_grad_norm_",
           "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "stateless", "weight_norm", "remove_weight_norm",
           "fusion", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "parametrize", "parametrizations", "spectral_norm",
           "remove_spectral_norm", "prune", "skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]
