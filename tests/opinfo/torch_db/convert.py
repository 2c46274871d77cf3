"""Values crossing from torch's OpInfo samples to autojit: tensors (through NumPy, keeping
requires_grad), dtypes, devices, memory formats, sizes and generators, inside lists, tuples and
dicts; and results brought back to NumPy for the comparison.
"""

from __future__ import annotations

import numpy as np
import torch

import autojit

_MEMORY_FORMATS = {
    torch.contiguous_format: autojit.contiguous_format,
    torch.channels_last: autojit.channels_last,
    torch.channels_last_3d: autojit.channels_last_3d,
    torch.preserve_format: autojit.preserve_format,
}


def dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


def to_numpy(tensor) -> np.ndarray:
    """A tensor of either library as a NumPy array (bfloat16 through float32, complex32
    through complex64: NumPy has neither)."""
    if isinstance(tensor, torch.Tensor):
        tensor = tensor.detach().cpu().resolve_conj().resolve_neg()
        if tensor._is_zerotensor():     # a gradient torch knows is zero, stored as none
            tensor = torch.zeros(tensor.shape, dtype=tensor.dtype)
        if tensor.dtype == torch.bfloat16:
            return tensor.float().numpy()
        if tensor.dtype == torch.complex32:
            return tensor.to(torch.complex64).numpy()
        return tensor.numpy()
    if dtype_name(tensor.dtype) == "bfloat16":
        tensor = tensor.float()
    elif dtype_name(tensor.dtype) == "complex32":
        tensor = tensor.to(autojit.complex64)
    return tensor.detach().cpu().resolve_conj().numpy()


class Unsupported(Exception):
    """A sample of a kind the harness does not convert (a dtype or layout autojit lacks): not
    run, counted apart."""


class Converter:
    """Maps torch values to autojit values; the same torch tensor seen twice becomes the same
    autojit tensor (a sample passing one tensor as two arguments keeps that aliasing)."""

    def __init__(self):
        self.tensors: dict = {}
        self.leaves: list = []      # (torch tensor, autojit tensor) of the inputs requiring grad

    def __call__(self, value):
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if isinstance(value, torch.dtype):
            if not hasattr(autojit, dtype_name(value)):
                raise Unsupported(f"dtype {dtype_name(value)}")
            return getattr(autojit, dtype_name(value))
        if isinstance(value, torch.device):
            return autojit.device(value.type)
        if isinstance(value, torch.memory_format):
            return _MEMORY_FORMATS[value]
        if isinstance(value, torch.Size):
            return autojit.Size(tuple(value))
        if isinstance(value, torch.Generator):
            return autojit.Generator().manual_seed(value.initial_seed())
        if isinstance(value, torch.nn.PairwiseDistance):    # a distance_function argument
            return autojit.nn.PairwiseDistance(value.norm, value.eps, value.keepdim)
        if isinstance(value, torch.layout):
            return value    # only torch.strided reaches here; autojit has one layout
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self(v) for v in value)
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        return value

    def tensor(self, value: torch.Tensor):
        key = id(value)
        if key in self.tensors:
            return self.tensors[key][1]
        if not hasattr(autojit, dtype_name(value.dtype)):
            raise Unsupported(f"a {dtype_name(value.dtype)} tensor")
        if value.layout != torch.strided:
            raise Unsupported(f"a {value.layout} tensor")
        if value.ndim > 64:
            raise Unsupported("a tensor of more than 64 dims (NumPy's limit, and autojit's)")
        dtype = getattr(autojit, dtype_name(value.dtype))
        slices = _slices_of_base(value)
        if value.device.type == "meta":
            result = autojit.empty(tuple(value.shape), dtype=dtype, device="meta")
        elif slices is not None:
            # a slice of another tensor stays one, of the same autojit tensor: an out= into
            # it that overlaps an input slice is refused, as torch refuses it
            result = self.tensor(value._base)[slices]
        elif _broadcast(value) and not value.requires_grad:
            # an expanded tensor stays one (an out= into it is refused, as torch refuses it)
            compact = value[tuple(0 if stride == 0 else slice(None)
                                  for stride in value.stride())]
            result = autojit.tensor(to_numpy(compact).copy(), dtype=dtype)
            result = result.reshape(tuple(1 if stride == 0 else size for size, stride
                                          in zip(value.shape, value.stride(), strict=True)))
            result = result.expand(tuple(value.shape))
        else:
            result = autojit.tensor(to_numpy(value).copy(), dtype=dtype)
        if value.requires_grad and not _no_grad_view(value):
            result.requires_grad_(True)
            self.leaves.append((value, result))
        self.tensors[key] = (value, result)
        return result


def _no_grad_view(value: torch.Tensor) -> bool:
    """Whether `value` is a view taken in no-grad mode of a tensor requiring grad (istft's
    `window[:8]`, sliced while torch's op database makes its samples): torch reports
    requires_grad through the base but gives the view no gradient edge, so no gradient ever
    reaches it (autograd.grad gives None); converted, it is a tensor of its values alone."""
    return value.grad_fn is None and value._base is not None and value._base.requires_grad


def _slices_of_base(value: torch.Tensor):
    """The basic slices of its contiguous base that `value` is (`x[1:]`, `z[:2, :]`), or
    None (not a view, a view of another kind, or one on a gradient path: a view made a leaf of
    its own, `base[5:15].requires_grad_()`, stays a view, its storage the base's)."""
    base = value._base
    if base is None or value.grad_fn is not None or base.requires_grad or \
            value.ndim != base.ndim \
            or not base.is_contiguous() or value.stride() != base.stride():
        return None
    offset = value.storage_offset() - base.storage_offset()
    slices = []
    for size, stride, extent in zip(value.shape, base.stride(), base.shape, strict=True):
        start, offset = (offset // stride, offset % stride) if stride else (0, offset)
        if start + size > extent:
            return None
        slices.append(slice(start, start + size))
    return tuple(slices) if offset == 0 else None


def _broadcast(value: torch.Tensor) -> bool:
    """Whether some dim of `value` repeats one element (an expand's zero stride)."""
    return any(stride == 0 and size > 1
               for size, stride in zip(value.shape, value.stride(), strict=True))


def flat(value) -> list:
    """The leaves of nested tuples, lists and namedtuples (a torch.Size stays one leaf)."""
    if isinstance(value, (torch.Size, autojit.Size)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in flat(item)]
    return [value]


def is_tensor(value) -> bool:
    return isinstance(value, (torch.Tensor, autojit.Tensor))
