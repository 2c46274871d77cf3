"""autojit.types: the type aliases of torch.types, for annotations in programs that import them
(`from autojit.types import Number, Device`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Union

from .tensor.device import device as _device_class
from .tensor.dtypes import DType
from .tensor.symbolic import SymFloat, SymInt
from .tensor.tensor import Size, Tensor

__all__ = ["BoolLikeType", "Device", "FileLike", "FloatLikeType", "IntLikeType", "Number",
           "Size", "SymFloat", "SymInt", "Tensor"]

_bool = bool
_int = int
_float = float
_complex = complex
_dtype = DType
_device = _device_class
_size = Union[Size, list, tuple]  # noqa: UP007 - an alias value, as torch.types spells it
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]  # noqa: UP007
IntLikeType = Union[int, SymInt]  # noqa: UP007
FloatLikeType = Union[float, SymFloat]  # noqa: UP007
BoolLikeType = bool
Number = Union[int, float, bool]  # noqa: UP007
Device = Union[_device_class, str, int, None]  # noqa: UP007
FileLike = Union[str, os.PathLike, IO[bytes]]  # noqa: UP007
