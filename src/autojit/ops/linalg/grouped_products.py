"""torch._grouped_mm: matrix products of groups of rows, columns or inner slices, as
mixture-of-experts layers run each expert's tokens through its own weight. A composite of
slicing, matmul and concatenation, so its gradients come from theirs; the group boundaries
(`offs`, cumulative int32 ends) are read as numbers, so a traced call reads its data."""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..layout.joining import cat, stack

__all__ = ["grouped_mm"]


def grouped_mm(mat_a: Tensor, mat_b: Tensor, offs: Tensor | None = None, bias=None,
               out_dtype=None) -> Tensor:
    """Group products: (M, K) @ (G, K, N) with `offs` over the rows of mat_a gives (M, N),
    rows of group g times mat_b[g]; (G, M, K) @ (G, K, N) without offs a batch of products;
    (M, K) @ (K, N) with offs over K gives (G, M, N), one product per inner slice; (G, M, K)
    @ (K, N) with offs over the columns of mat_b gives (M, N)."""
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dtype not in (dtypes.float32, dtypes.bfloat16, dtypes.float16):
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{dtypes.scalar_type_name(mat.dtype)}")
    if bias is not None:
        raise RuntimeError("_grouped_mm: bias is not supported yet")
    two_d = mat_a.dim() == 2 or mat_b.dim() == 2
    if two_d != (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype is not dtypes.int32:
        raise RuntimeError("Offsets have to be int32")
    if not two_d:
        out = mat_a @ mat_b
    else:
        ends = [int(end) for end in offs.tolist()]
        starts = [0, *ends[:-1]]
        if mat_a.dim() == 2 and mat_b.dim() == 3:
            parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(zip(starts, ends))]
            rest = mat_a.shape[0] - ends[-1]
            if rest > 0:  # rows past the last group: no product (zeros)
                parts.append(mat_a.new_zeros((rest, mat_b.shape[-1])))
            out = cat(parts, 0)
        elif mat_a.dim() == 2:
            out = stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in zip(starts, ends)], 0)
        else:
            parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(zip(starts, ends))]
            out = cat(parts, 1)
    return out if out_dtype is None else out.to(out_dtype)
