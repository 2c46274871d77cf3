"""The functional forms of the simple layers: linear, bilinear, embedding and dropout.

nn.functional re-exports these; the modules in linear.py, sparse.py and dropout.py call them.
Each is a composite of autojit ops (matmul, index_select, where, mul), so it differentiates
twice and traces into a compiled graph with no rule of its own, but linear, which is the
primitive of ops/nn/linear.py (torch's addmm) for a matrix weight. Dropout draws its mask from
autojit's global generator (autojit.manual_seed); in a compiled function the draw is a
"random" graph input, drawn anew on every call in the same order as eager draws it.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..ops import elementwise as ew
from ..ops.autocast import LOWER, PROMOTE, autocast_op
from ..ops.indexing import index_select
from ..ops.layout import reshape, t, unsqueeze
from ..ops.linalg import matmul
from ..ops.linalg.norms import vector_norm
from ..ops.linalg.products import check_addmm_dtypes
from ..ops.nn.linear import linear_map
from ..ops.random import bernoulli_noise
from ..ops.reduction import sum_
from ..tensor import dtypes
from ..tensor.creation import ones, zeros
from ..tensor.layouts import strided
from ..tensor.tensor import Tensor
from .module import typename

__all__ = ["linear", "bilinear", "embedding", "dropout"]


def _check_tensor(name: str, argument: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' must be Tensor, not "
                        f"{type(value).__name__}")


def check_dropout_dtype(input: Tensor, alpha: bool = False) -> None:  # noqa: A002
    """torch's error for dropping out an integer or bool tensor in training (0 < p < 1): its
    noise, made in the input's dtype, is divided by 1 - p (alpha dropout: scaled, after a bool
    noise became int64) in place. Such a tensor's dropout gave a float32 result."""
    dtype = input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        name = "Long" if alpha and dtype is dtypes.bool_ else dtypes.scalar_type_name(dtype)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """y = x @ weight.T + bias, for x of shape (*, in_features) and weight (out, in).

        >>> import autojit
        >>> from autojit.nn import functional as F
        >>> F.linear(autojit.ones(2, 3), autojit.ones(4, 3), autojit.zeros(4)).shape
        autojit.Size([2, 4])
    """
    _check_tensor("linear", "input", input)
    _check_tensor("linear", "weight", weight)
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): weight should be 1-D or 2-D, got {weight.ndim}-D with "
                           f"shape {list(weight.shape)}")
    if input.ndim == 0:
        raise RuntimeError("linear(): input should be at least 1-D, got a 0-D tensor")
    if input.shape[-1] != weight.shape[-1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        weight_text = ("x".join(str(s) for s in reversed(weight.shape)) if weight.ndim == 2
                       else f"{weight.shape[0]}")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{input.shape[-1]} and {weight_text})")
    if weight.ndim == 2 and input.layout is strided:
        if bias is not None and isinstance(bias, Tensor):
            check_addmm_dtypes(bias, input, weight)  # torch runs it as addmm: addmm's messages
        if bias is None or isinstance(bias, Tensor):
            return linear_map(input, weight, bias)
    # a sparse input (COO, CSR, CSC): its product with the weight, dense
    output = matmul(input, t(weight) if weight.ndim == 2 else weight)
    if bias is not None:
        output = output + bias
    return output


@autocast_op(cuda=PROMOTE)
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y[..., k] = sum_ij x1[..., i] weight[k, i, j] x2[..., j] + bias[k].

    input1 is (*, in1), input2 (*, in2) with the same leading dims, weight (out, in1, in2).
    """
    _check_tensor("bilinear", "input1", input1)
    _check_tensor("bilinear", "input2", input2)
    _check_tensor("bilinear", "weight", weight)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for dim in range(input1.ndim - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: "
                               f"got {input1.shape[dim]} and {input2.shape[dim]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight should be 3-D (out, in1, in2), got shape "
                           f"{list(weight.shape)}")
    if input1.ndim == 0 or input1.shape[-1] != weight.shape[1]:
        got = input1.shape[-1] if input1.ndim else 0
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {got} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        got = bias.shape[-1] if bias.ndim else 0
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {got} but "
                           f"expected {weight.shape[0]}")
    out_features, in1, in2 = weight.shape
    batch = tuple(input1.shape[:-1])
    # x1 @ W viewed as an (in1, out * in2) matrix, then the contraction with x2 over in2:
    # two matmul-sized steps instead of an (N, out, in1, in2) intermediate.
    stacked = reshape(weight.permute(1, 0, 2), in1, out_features * in2)
    left = reshape(matmul(reshape(input1, -1, in1), stacked), -1, out_features, in2)
    output = sum_(left * unsqueeze(reshape(input2, -1, in2), 1), -1)
    output = reshape(output, *batch, out_features)
    if bias is not None:
        output = output + bias
    return output


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of weight (num_embeddings, dim) at the integer positions in input.

    The result has shape (*input.shape, dim). Positions equal to padding_idx get no gradient.

        >>> import autojit
        >>> from autojit.nn import functional as F
        >>> F.embedding(autojit.tensor([[0, 2]]), autojit.eye(3)).tolist()
        [[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]]
    """
    _check_tensor("embedding", "indices", input)
    _check_tensor("embedding", "weight", weight)
    if input.dtype not in (dtypes.int64, dtypes.int32):
        # torch names a dtype without a legacy tensor class (uint16) by its dispatch type
        given = f"CPU{dtypes.scalar_type_name(input.dtype)}Type" if input.dtype.limited else \
            typename(input)
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{given} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D, got shape {list(weight.shape)}")
    if sparse:
        raise NotImplementedError("embedding(): sparse gradients are not supported by autojit "
                                  "(it has no sparse tensors)")
    count = weight.shape[0]
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += count
        if not 0 <= padding_idx < count:
            raise ValueError(f"embedding(): padding_idx must be within num_embeddings "
                             f"[{-count}, {count}), got {padding_idx}")
    ids = reshape(input, -1)
    if max_norm is not None:
        renorm_rows_(weight, ids, max_norm, norm_type)
    # index_select checks the positions, with the message torch's embedding gives too.
    rows = index_select(weight, 0, ids)
    if scale_grad_by_freq:
        rows = scale_grad_by_frequency(rows, ids, count)
    if padding_idx is not None:
        # The padding row's entries are detached, so no gradient reaches that row of weight.
        at_padding = unsqueeze(ids == padding_idx, 1)
        rows = ew.where(at_padding, rows.detach(), rows)
    if input.ndim == 1:  # rows has the shape already: no view of it to make and record
        return rows
    return reshape(rows, *input.shape, weight.shape[1])


def renorm_rows_(weight: Tensor, ids: Tensor, max_norm: float, norm_type: float) -> None:
    """torch.embedding_renorm_: scale each row of `weight` that `ids` names and whose
    `norm_type` norm exceeds max_norm down to norm max_norm / (norm + 1e-7) * norm, in place
    and outside autograd (a compiled step writes the rows back as one of its effects)."""
    with no_grad():
        rows = index_select(weight, 0, ids)
        norms = vector_norm(rows, norm_type, dim=1, keepdim=True)
        scale = ew.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        # Repeated ids write the same scaled row, so the order of the writes does not matter.
        weight.index_copy_(0, ids, (rows * scale).to(weight.dtype))


def scale_grad_by_frequency(rows: Tensor, ids: Tensor, count: int) -> Tensor:
    """`rows` (the lookups of `ids`), whose gradient is divided by the number of times each
    id occurs in `ids` (torch's scale_grad_by_freq). The value is the rows' own: the scaled
    rows enter only as (scaled - scaled.detach()), which is zero."""
    frequency = zeros(count, dtype=rows.dtype, device=rows.device).index_add(
        0, ids, ones(ids.shape[0], dtype=rows.dtype, device=rows.device))
    scaled = rows / unsqueeze(index_select(frequency, 0, ids), 1)
    return rows.detach() + (scaled - scaled.detach())


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only).

    In evaluation (training=False), or with p=0, the input is returned unchanged.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    _check_tensor("dropout", "input", input)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        scale = ew.fill_like(input, 0)
    else:
        check_dropout_dtype(input)
        # torch's: noise = empty_like(input).bernoulli_(1 - p), divided by 1 - p.
        scale = bernoulli_noise(input.shape, input.dtype, 1 - p, input.device) / (1.0 - p)
    if inplace:
        return input.mul_(scale)
    return input * scale
