"""Attention in autojit.nn.functional: scaled_dot_product_attention and
multi_head_attention_forward, as composites.

scaled_dot_product_attention is two matrix products around a softmax: the scores q @ k^T are
scaled, masked (a bool mask through `where`, a float mask added, the causal mask a constant
made from the sizes), normalized along the keys and dropped out, then multiplied by v. Every
step is an autojit op, so the function differentiates twice and traces into one graph, where
the scaling, the mask and the softmax fuse into the kernels around the products. A row whose
keys are all masked gives zeros, as torch's attention kernels do, not the NaN of a plain
softmax over -inf.

multi_head_attention_forward is torch's function of that name, step for step: the input
projections (one product for self-attention, whose result is split into q, k and v), the
heads split off the embedding dim, the masks merged into one additive mask, attention (the
explicit softmax when the weights are returned, scaled_dot_product_attention otherwise), and
the output projection. nn.MultiheadAttention (attention.py) calls it.
"""

from __future__ import annotations

import math
import warnings

from ...backends.cuda import math_sdp_enabled
from ...ops import elementwise as ew
from ...ops.autocast import LOWER, autocast_op
from ...ops.layout import cat
from ...ops.linalg import matmul
from ...ops.nn.softmax import safe_softmax_along, softmax_along
from ...tensor import dtypes
from ...tensor.creation import arange, zeros
from ...tensor.dtypes import SCALAR_TYPE_NAMES
from ...tensor.graph_break import user_frame
from ...tensor.tensor import Tensor
from ..layer_functions import dropout, linear
from .padding import pad

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

# torch's C++ spelling of a dtype, used in the messages of its attention checks.
_CPP_TYPE_NAMES = dtypes.C_TYPE_NAMES
_SDPA = "scaled_dot_product_attention"


def _check_tensor(name: str, argument: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' must be Tensor, not "
                        f"{type(value).__name__}")


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim, with zeros (and zero gradients) in rows that are all -inf
    (aten's _safe_softmax)."""
    return safe_softmax_along(scores, scores.ndim - 1)


def _softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim (NaN in a row of all -inf, as torch.softmax gives)."""
    return softmax_along(scores, scores.ndim - 1)


def _causal_keep(rows: int, columns: int, device) -> Tensor:
    """The bool mask of the keys each query may attend under is_causal: key j for query i
    where j <= i (the upper-left aligned triangle, also when rows != columns)."""
    device = device if device is not None and device.type == "cuda" else None
    return (arange(columns, dtype=dtypes.int64, device=device).reshape(1, columns)
            <= arange(rows, dtype=dtypes.int64, device=device).reshape(rows, 1))


def _repeat_heads(x: Tensor, repeats: int) -> Tensor:
    """x.repeat_interleave(repeats, dim=-3): each head of x `repeats` times in a row."""
    if repeats == 1:
        return x
    shape = tuple(x.shape)
    expanded = x.unsqueeze(-3).expand(*shape[:-2], repeats, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * repeats, *shape[-2:])


def _check_attention_inputs(query, key, value, attn_mask, dropout_p, is_causal) -> None:
    for argument, tensor in (("query", query), ("key", key), ("value", value)):
        _check_tensor(_SDPA, argument, tensor)
    if attn_mask is not None:
        _check_tensor(_SDPA, "attn_mask", attn_mask)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and "
                           f"value.dim: {value.ndim} instead.")
    if not query.dtype is key.dtype is value.dtype:
        names = [_CPP_TYPE_NAMES[t.dtype.name] for t in (query, key, value)]
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {names[0]} key.dtype: {names[1]} and value.dtype: "
                           f"{names[2]} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found "
                           f"{SCALAR_TYPE_NAMES[query.dtype.name]}")
    if attn_mask is not None:
        if attn_mask.dtype not in (dtypes.bool_, dtypes.float32, query.dtype):
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                               f"dtype, but got attn_mask.dtype: "
                               f"{_CPP_TYPE_NAMES[attn_mask.dtype.name]} and  query.dtype: "
                               f"{_CPP_TYPE_NAMES[query.dtype.name]} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        if attn_mask.ndim < 2:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(attn_mask.ndim, 1)}, {max(attn_mask.ndim, 1) - 1}], but "
                             f"got -2)")
    if dropout_p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p:g}")
    # The products' own checks, with torch's messages (its products run as batched ones).
    batch = math.prod(query.shape[:-2])
    if key.shape[-1] != query.shape[-1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {query.shape[-1]}] but got: [{batch}, {key.shape[-1]}].")
    if value.shape[-2] != key.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {key.shape[-2]}] but got: [{batch}, {value.shape[-2]}].")


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """softmax(q @ k^T * scale + mask) @ v over the last two dims, with optional dropout.

    query is (..., L, E), key (..., S, E) and value (..., S, Ev), the leading dims broadcast;
    the result is (..., L, Ev). `attn_mask` broadcasts to (..., L, S): a bool mask keeps the
    positions that are True, a float mask is added to the scores. `is_causal` lets query i see
    keys 0..i (and takes no attn_mask); `scale` defaults to 1 / sqrt(E); `dropout_p` drops
    attention weights whatever the caller's training mode; `enable_gqa` lets key and value
    have fewer heads (dim -3) than query, each serving a group of query heads.

        >>> import autojit
        >>> from autojit.nn import functional as F
        >>> q, k, v = autojit.randn(2, 4, 8), autojit.randn(2, 6, 8), autojit.randn(2, 6, 3)
        >>> F.scaled_dot_product_attention(q, k, v).shape
        autojit.Size([2, 4, 3])
        >>> F.scaled_dot_product_attention(q, q, q, is_causal=True)[:, 0].allclose(q[:, 0])
        True
    """
    _check_attention_inputs(query, key, value, attn_mask, dropout_p, is_causal)
    if not math_sdp_enabled():
        # The composite below is torch's math backend, autojit's only attention kernel.
        frame = user_frame()
        warnings.warn_explicit(
            "autojit's scaled_dot_product_attention has one kernel, the math backend, and the "
            "enabled backends (autojit.nn.attention.sdpa_kernel, "
            "autojit.backends.cuda.enable_math_sdp) leave it out", UserWarning,
            frame.f_code.co_filename if frame else __file__, frame.f_lineno if frame else 0)
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        heads = query.shape[-3]
        if heads % key.shape[-3] or heads % value.shape[-3]:
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in query")
        key = _repeat_heads(key, heads // key.shape[-3])
        value = _repeat_heads(value, heads // value.shape[-3])
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = matmul(query, key.transpose(-2, -1)) * scale_factor
    rows, columns = query.shape[-2], key.shape[-2]
    if is_causal:
        # Query i sees key 0 at least, so no row is all masked: the plain softmax will do.
        scores = ew.where(_causal_keep(rows, columns, query.device), scores, -math.inf)
        weights = _softmax(scores)
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = ew.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask.to(query.dtype)
        weights = _safe_softmax(scores)
    else:
        weights = _softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return matmul(weights, value)


# ---- multi-head attention ------------------------------------------------------------------------


def _none_or_dtype(input) -> object:  # noqa: A002
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True):
    """A bool mask as the float mask it means (-inf where True, 0 elsewhere); a float mask
    unchanged. Warns, as torch does, when the other mask's dtype differs."""
    if mask is None:
        return None
    if mask.dtype is not dtypes.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", UserWarning, stacklevel=3)
    if not mask.dtype.is_floating_point:
        mask = zeros(tuple(mask.shape), dtype=target_type, device=mask.device).masked_fill(
            mask, -math.inf)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Check the dims of the inputs and masks; return whether the input is batched."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     f"instead")
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k and v projected by the (3E, E) weight packed as [w_q; w_k; w_v]: one product when
    q, k and v are one tensor (self-attention), two when k and v are (encoder-decoder)."""
    embed = q.shape[-1]
    if k is v:
        if q is k:
            projected = linear(q, w, b)
            return projected.chunk(3, -1)
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        k_projected, v_projected = linear(k, w_kv, b_kv).chunk(2, -1)
        return linear(q, w_q, b_q), k_projected, v_projected
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k and v projected by their own weights (kdim or vdim differs from embed_dim)."""
    e_q, e_k, e_v = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, weight, shape in (("query", w_q, (e_q, e_q)), ("key", w_k, (e_q, e_k)),
                                ("value", w_v, (e_q, e_v))):
        if tuple(weight.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got "
                                 f"{weight.shape}")
    for name, bias in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bias is not None and tuple(bias.shape) != (e_q,):
            raise AssertionError(f"expecting {name} bias shape of {(e_q,)}, but got "
                                 f"{bias.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_static(name: str, static: Tensor, heads_times_batch: int, head_dim: int) -> None:
    if static.shape[0] != heads_times_batch:
        raise AssertionError(f"expecting {name}.size(0) of {heads_times_batch}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor,
                                 embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias,
                                 training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """Multi-head attention of sequence-first inputs: returns (output, weights or None).

    query is (L, N, E) (or (L, E) unbatched), key (S, N, Ek) and value (S, N, Ev); the weights
    are those of nn.MultiheadAttention, which calls this. `key_padding_mask` (N, S) and
    `attn_mask` (L, S) or (N * num_heads, L, S) mask out keys where a bool mask is True, or add
    a float mask to the scores. With need_weights the attention weights are returned too,
    averaged over the heads unless average_attn_weights=False.

        >>> import autojit
        >>> from autojit.nn import functional as F
        >>> x = autojit.randn(5, 2, 8)
        >>> w, b = autojit.randn(24, 8), autojit.zeros(24)
        >>> out, weights = F.multi_head_attention_forward(
        ...     x, x, x, 8, 2, w, b, None, None, False, 0.0, autojit.eye(8), None)
        >>> out.shape, weights.shape
        (autojit.Size([5, 2, 8]), autojit.Size([2, 5, 5]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # An unbatched input runs as a batch of one.
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # attn_mask is the causal mask: attention makes it from the sizes.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer the causal one
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, weight in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if weight is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     f"is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # The heads split off the embedding dim, batch first: (N * num_heads, length, head_dim).
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static("static_k", static_k, bsz * num_heads, head_dim)
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static("static_v", static_v, bsz * num_heads, head_dim)
        v = static_v

    if add_zero_attn:
        zero_shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, zeros(zero_shape, dtype=k.dtype, device=k.device)], 1)
        v = cat([v, zeros(zero_shape, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len)
                            .expand(bsz, num_heads, 1, src_len)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        scores = matmul(q_scaled, k.transpose(-2, -1))
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = _softmax(scores)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        output = matmul(weights, v)
        output = output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        output = linear(output, out_proj_weight, out_proj_bias)
        output = output.reshape(tgt_len, bsz, output.shape[1])
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            output, weights = output.squeeze(1), weights.squeeze(0)
        return output, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    output = output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    output = linear(output, out_proj_weight, out_proj_bias)
    output = output.reshape(tgt_len, bsz, output.shape[1])
    if not is_batched:
        output = output.squeeze(1)
    return output, None
