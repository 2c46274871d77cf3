"""Tensor printing in torch's format: ``tensor([1., 2.], requires_grad=True)``."""

from __future__ import annotations

import numpy as np

from . import dtypes


def tensor_repr(x) -> str:
    suffixes = []
    if x._data is None:
        body = f"<symbolic {x._value.dtype.short}{list(x._value.shape)}>"
    else:
        body = np.array2string(x._data, separator=", ", prefix="tensor(")
    if x.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={x.dtype!r}")
    if x.grad_fn is not None:
        suffixes.append(f"grad_fn=<{x.grad_fn.name()}>")
    elif x.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *suffixes]) + ")"
