"""Layouts: `autojit.strided` (every dense tensor's) and `autojit.sparse_coo` (the sparse
tensors of ops/sparse/coo.py), instances of `autojit.layout`, with torch's other layouts named
so that code comparing with them runs; `Tensor.layout`.
"""

from __future__ import annotations

from .dtypes import REPR_PREFIX
from .tensor import Tensor


class layout:  # noqa: N801 - torch's name
    """How a tensor's elements are stored: `autojit.strided` or `autojit.sparse_coo`."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"{REPR_PREFIX[0]}.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return self.name  # pickled by reference: the module attribute of that name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
# torch's other layouts: named, never the layout of an autojit tensor.
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")

Tensor.layout = property(lambda self: strided, doc="How the elements are stored: "
                         "autojit.strided (autojit.sparse_coo for a sparse tensor).")


def check_layout(value, function: str, sparse_allowed: bool = False):
    """The `layout=` argument of a factory: None or strided, or sparse_coo where the factory
    makes sparse tensors; torch's errors otherwise."""
    if value is None or value is strided or (sparse_allowed and value is sparse_coo):
        return value
    if not isinstance(value, layout):
        raise TypeError(f"{function}(): argument 'layout' must be autojit.layout, not "
                        f"{type(value).__name__}")
    if not sparse_allowed and value is not _mkldnn:
        raise RuntimeError(f"{function}(...) is not implemented for sparse layout")
    raise NotImplementedError(f"{function}(): autojit has no tensors of layout {value!r}; its "
                              "layouts are strided and sparse_coo")
