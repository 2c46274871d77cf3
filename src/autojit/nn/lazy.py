"""Lazy modules: layers whose input size (in_features, in_channels, num_features) is read from
their first input, as torch.nn's LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm* and
LazyInstanceNorm* do.

Until that first call their parameters and buffers are UninitializedParameter and
UninitializedBuffer (nn/parameter.py); a forward pre-hook materializes them with the input's
size, draws the layer's default initialization (reset_parameters) and turns the module into its
non-lazy class (`cls_to_become`). Inside a compiled function the first call cannot be traced
(it draws random values and changes the module), so it breaks the graph and runs eagerly; the
calls after it compile the ordinary layer.
"""

from __future__ import annotations

import inspect
import itertools

from ..tensor import dtypes
from ..tensor.creation import tensor
from ..tensor.graph_break import graph_break
from ..tensor.state import state
from .convolution import Conv1d, Conv2d, Conv3d
from .convolution_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d
from .normalization_extra import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
    "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class LazyModuleMixin:
    """The lazy half of a lazy layer: the first call's pre-hook that infers the parameters, and
    state dicts that hold (and load into) uninitialized tensors."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._register_initialize_hook()

    def _register_initialize_hook(self) -> None:
        # The hook's id, not its handle (which holds a weak reference), so that a lazy module
        # pickles.
        self._initialize_hook_id = self.register_forward_pre_hook(self._infer_parameters,
                                                                  with_kwargs=True).id

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(value) for value in
                   itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        if state.tracer is not None:
            graph_break(f"the first call of {type(self).__name__}, which infers the shapes of "
                        "its parameters and initializes them (it runs eagerly; later calls "
                        "compile)", needs_data=False)
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._forward_pre_hooks.pop(self._initialize_hook_id, None)
        self._forward_pre_hooks_with_kwargs.discard(self._initialize_hook_id)
        del self._initialize_hook_id
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        # An uninitialized tensor is saved as itself: it has no data to detach.
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else \
                    param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars or is_lazy(buffer) else \
                    buffer.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        # An initialized tensor loaded into an uninitialized one gives it its shape first (the
        # module stays lazy: its first call then skips initialization).
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and value is not None and is_lazy(value):
                loaded = state_dict[key]
                if not is_lazy(loaded):
                    value.materialize(loaded.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of its first input.

        >>> import autojit
        >>> layer = autojit.nn.LazyLinear(2)
        >>> layer
        LazyLinear(in_features=0, out_features=2, bias=True)
        >>> layer(autojit.ones(5, 3)).shape
        autojit.Size([5, 2])
        >>> layer
        Linear(in_features=3, out_features=2, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False, device, dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    """The lazy convolutions: in_channels from dim 1 of a batched input (dim 0 unbatched)."""

    def _make_lazy(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        unbatched = self._spatial + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        self.in_channels = input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        per_group = (self.in_channels, self.out_channels // self.groups) if self.transposed \
            else (self.out_channels, self.in_channels // self.groups)
        self.weight.materialize((*per_group, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


def _lazy_conv(conv: type, doc: str) -> type:
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        conv.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                      padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)

    return _lazy_class(conv, __init__, _LazyConvXdMixin, doc)


def _lazy_conv_transpose(conv: type, doc: str) -> type:
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        conv.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                      dilation, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)

    return _lazy_class(conv, __init__, _LazyConvXdMixin, doc)


def _lazy_class(base: type, init, mixin: type, doc: str) -> type:
    """The lazy form of `base`: `init` builds the non-lazy layer with size 0 and puts
    uninitialized tensors in place; the mixin's hook is then registered."""

    def __init__(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        self._register_initialize_hook()

    __init__.__signature__ = inspect.signature(init)
    name = "Lazy" + base.__name__
    return type(name, (mixin, base), {"__init__": __init__, "cls_to_become": base,
                                      "__doc__": doc, "__module__": __name__,
                                      "__qualname__": name})


class _LazyNormBase(LazyModuleMixin):
    """The lazy batch and instance norms: num_features from dim 1 of the first input."""

    def _make_lazy(self, affine: bool, track_running_stats: bool, bias: bool, device,
                   dtype) -> None:
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=dtypes.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()


def _lazy_norm(norm: type, doc: str) -> type:
    # The lazy instance norms too are affine and track running stats by default, as torch's.
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        norm.__init__(self, 0, eps, momentum, False, False, device, dtype, bias=False)
        self._make_lazy(affine, track_running_stats, bias, device, dtype)

    return _lazy_class(norm, __init__, _LazyNormBase, doc)


LazyConv1d = _lazy_conv(Conv1d, "Conv1d whose in_channels is read from its first input.")
LazyConv2d = _lazy_conv(Conv2d, "Conv2d whose in_channels is read from its first input.")
LazyConv3d = _lazy_conv(Conv3d, "Conv3d whose in_channels is read from its first input.")
LazyConvTranspose1d = _lazy_conv_transpose(
    ConvTranspose1d, "ConvTranspose1d whose in_channels is read from its first input.")
LazyConvTranspose2d = _lazy_conv_transpose(
    ConvTranspose2d, "ConvTranspose2d whose in_channels is read from its first input.")
LazyConvTranspose3d = _lazy_conv_transpose(
    ConvTranspose3d, "ConvTranspose3d whose in_channels is read from its first input.")
LazyBatchNorm1d = _lazy_norm(BatchNorm1d, "BatchNorm1d whose num_features is read from its "
                             "first input.")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "BatchNorm2d whose num_features is read from its "
                             "first input.")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "BatchNorm3d whose num_features is read from its "
                             "first input.")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, "InstanceNorm1d whose num_features is read from "
                                "its first input.")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, "InstanceNorm2d whose num_features is read from "
                                "its first input.")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, "InstanceNorm3d whose num_features is read from "
                                "its first input.")
