"""autojit.utils.safetensors: dicts of tensors in the safetensors format, as safetensors.torch
reads and writes them (`save_file`, `load_file`, `save`, `load`), through the safetensors
package's NumPy API.

A safetensors file is a JSON header (names, dtypes, shapes, offsets) followed by the raw
bytes of each tensor: it holds no code, and its tensors are contiguous and do not overlap, so
saving refuses tensors that share memory or are not contiguous, as safetensors.torch does.
The package is an optional dependency (`pip install autojit[safetensors]`); importing this
module without it raises ModuleNotFoundError naming it.

    >>> import autojit
    >>> from autojit.utils.safetensors import load, save
    >>> load(save({"w": autojit.ones(2, 3)}))["w"].shape
    autojit.Size([2, 3])
"""

from __future__ import annotations

import os

import numpy as np
from safetensors import numpy as safetensors_numpy

from ..tensor.creation import as_tensor
from ..tensor.device import check_device
from ..tensor.tensor import Tensor

__all__ = ["save_file", "load_file", "save", "load"]


def _arrays(tensors: dict) -> dict[str, np.ndarray]:
    """The tensors' data as NumPy arrays, after safetensors.torch's checks."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    arrays, roots = {}, {}
    for name, tensor in tensors.items():
        if not isinstance(tensor, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received "
                             f"{type(tensor)}")
        array = tensor._host("safetensors")
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        if array.size:
            roots.setdefault(id(root), []).append(name)
        arrays[name] = array
    shared = [set(names) for names in roots.values() if len(names) > 1]
    if shared:
        raise RuntimeError(
            "Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {shared}. A potential way to correctly save "
            "your model is to save a copy of one of them (`.clone()`).")
    for name, array in arrays.items():
        if not array.flags.c_contiguous:
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. "
                "It either means you are trying to save tensors which are reference of each "
                "other in which case it's recommended to save only the full tensors, and "
                "reslice at load time, or simply call `.contiguous()` on your tensor to pack it "
                "before saving.")
    return arrays


def _tensors(arrays: dict, device="cpu") -> dict[str, Tensor]:
    target = check_device(device)
    loaded = {}
    for name, array in arrays.items():
        tensor = as_tensor(np.array(array))  # a writable array of the tensor's own
        loaded[name] = tensor if target.type == "cpu" else tensor.to(target)
    return loaded


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of a dict of tensors (metadata: an optional dict of str to str).

    >>> import autojit
    >>> from autojit.utils.safetensors import save
    >>> save({"b": autojit.zeros(1)})[:8]  # the header's length, then the header
    b'8\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
    """
    return safetensors_numpy.save(_arrays(tensors), metadata=metadata)


def save_file(tensors: dict, filename: str | os.PathLike, metadata: dict | None = None) -> None:
    """Write a dict of tensors to a safetensors file."""
    safetensors_numpy.save_file(_arrays(tensors), filename, metadata=metadata)


def load(data: bytes) -> dict[str, Tensor]:
    """The dict of tensors in safetensors bytes."""
    return _tensors(safetensors_numpy.load(data))


def load_file(filename: str | os.PathLike, device="cpu") -> dict[str, Tensor]:
    """The dict of tensors of a safetensors file, on `device`.

    >>> import os, tempfile, autojit
    >>> from autojit.utils.safetensors import load_file, save_file
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "model.safetensors")
    ...     save_file({"w": autojit.arange(3)}, path, metadata={"step": "7"})
    ...     load_file(path)
    {'w': tensor([0, 1, 2])}
    """
    return _tensors(safetensors_numpy.load_file(filename), device)
