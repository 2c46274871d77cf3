"""What the op families' rules need to know about the dtypes torch supports only in part
(`DType.limited`: uint16, uint32, uint64, complex32, the float8 dtypes): the error of a
primitive whose torch kernel does not take one (registry.py reads its Op.limited and
Op.kernel), and the same check for the composites whose torch kernel refuses such a dtype
where the primitives they run would not (`index_select` on uint64 runs the indexing
primitive, which takes it, while torch's index_select kernel does not).
docs/notes/unsigned-integers.md, docs/notes/complex32.md and docs/notes/float8.md have the
design.
"""

from __future__ import annotations

from ..tensor import dtypes
from ..tensor.tensor import Tensor

# The dtypes an op computes in by default: none of the limited ones, but for a Layout
# lowering, which moves elements whatever their type (registry.define_op).
UNSIGNED = dtypes.UNSIGNED
COMPLEX32 = (dtypes.complex32,)
FLOAT8 = dtypes.FLOAT8  # stored as float32, computing in almost nothing (tensor/float8.py)
LIMITED = UNSIGNED + COMPLEX32 + FLOAT8
BOTH = UNSIGNED + COMPLEX32  # an op both kinds take (mul, eq, where, casts, copies, indexing)
# An op every limited dtype takes, float8 too: casts, copies, fills, indexing, eq, ne, isnan.
ALL_LIMITED = LIMITED


# torch's error for a kernel that has no loop for a dtype: '"add_stub" not implemented for
# 'UInt64''. The factories of the tensor layer raise it too.
not_implemented = dtypes.kernel_error


def refused_dtype(op, inputs: tuple, compute, out_dtype):
    """The limited dtype `op` would compute in or make and does not take (Op.limited), or
    None. The compute dtype is the kernel's, as in torch: `x * 1.5` on uint64 computes in
    float32 and is not refused; an op without one (None) computes in its inputs' dtypes."""
    taken = op.limited
    if compute is not None:
        if compute.limited and compute not in taken:
            return compute
    else:
        for x in inputs:
            if isinstance(x, Tensor) and x._dtype.limited and x._dtype not in taken:
                return x._dtype
    if out_dtype.limited and out_dtype not in taken:
        return out_dtype
    return None


def limited_error(op, dtype: dtypes.DType) -> NotImplementedError:
    """The error of `op` computing in `dtype`, which it does not take: its kernel's name
    (Op.kernel) as torch's message quotes it."""
    return not_implemented(op.kernel, dtype)


def refuse_limited(kernel: str, *operands, taken: tuple = ()) -> None:
    """Raise torch's NotImplementedError for `kernel` when one of `operands` (Tensors, the
    DType a composite computes in, or anything else, which is skipped) has a limited dtype
    other than those in `taken`: for a composite whose torch kernel refuses such a dtype
    (masked_fill, topk, trace)."""
    for x in operands:
        dtype = x._dtype if isinstance(x, Tensor) else x if isinstance(x, dtypes.DType) \
            else None
        if dtype is not None and dtype.limited and dtype not in taken:
            raise not_implemented(kernel, dtype)
