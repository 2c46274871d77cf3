"""The weights of a model's convolutions laid out in a memory format, as torch.nn.utils's
convert_conv2d_weight_memory_format and convert_conv3d_weight_memory_format do (channels last,
the layout autojit's convolution routines read an operand of as it lies)."""

from __future__ import annotations

from ..convolution import Conv2d, Conv3d
from ..convolution_transpose import ConvTranspose2d, ConvTranspose3d


def _convert(module, memory_format, kinds: tuple):
    if isinstance(module, kinds):
        data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = data.resize_(data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """`module` with the weight of every Conv2d and ConvTranspose2d in it (itself included)
    in `memory_format` (autojit.channels_last or autojit.contiguous_format).

        >>> import autojit
        >>> model = autojit.nn.Sequential(autojit.nn.Conv2d(8, 4, 3))
        >>> model = autojit.nn.utils.convert_conv2d_weight_memory_format(
        ...     model, autojit.channels_last)
        >>> model[0].weight.stride()
        (72, 1, 24, 8)
    """
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """`module` with the weight of every Conv3d and ConvTranspose3d in it in `memory_format`
    (autojit.channels_last_3d or autojit.contiguous_format)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
