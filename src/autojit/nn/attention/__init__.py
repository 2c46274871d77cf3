"""MultiheadAttention: torch's attention layer, with its parameters, names and initialization;
and torch.nn.attention's SDPBackend and sdpa_kernel (backends/cuda.py holds their flags).

The layer holds the input projections, packed as in_proj_weight (3 * embed_dim, embed_dim)
when keys and values have embed_dim features, or q_proj_weight, k_proj_weight and
v_proj_weight when kdim or vdim differ; in_proj_bias (3 * embed_dim); the output projection
out_proj; and, with add_bias_kv, bias_k and bias_v (1, 1, embed_dim). These are torch's names
and shapes, so a torch state_dict loads as it is. forward transposes batch-first inputs to
sequence-first, turns bool masks into additive ones, and calls
nn/functional/attention.py's multi_head_attention_forward, a composite of autojit ops.
"""

from __future__ import annotations

from ...backends.cuda import SDPBackend, sdpa_kernel
from ...tensor.creation import empty
from .. import init
from ..functional.attention import _canonical_mask, _none_or_dtype, multi_head_attention_forward
from ..linear import Linear
from ..module import Module
from ..parameter import Parameter

__all__ = ["MultiheadAttention", "SDPBackend", "sdpa_kernel"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name torch gives MultiheadAttention's output projection (the name
    shows in the layer's repr); it computes what Linear computes."""


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim / num_heads features each.

    forward(query, key, value) returns (output, weights): the output has query's shape, the
    weights (N, L, S) are averaged over the heads (per head with average_attn_weights=False),
    or None with need_weights=False. Inputs are (L, N, E), or (N, L, E) with batch_first.

        >>> import autojit
        >>> attention = autojit.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = autojit.randn(3, 5, 8)
        >>> output, weights = attention(x, x, x)
        >>> output.shape, weights.shape
        (autojit.Size([3, 5, 8]), autojit.Size([3, 5, 5]))
        >>> list(attention.state_dict())
        ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **factory))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Xavier-uniform projections, zero biases and xavier-normal bias_k, bias_v (torch's
        initialization; out_proj's weight keeps Linear's)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        """Attend from query to key and value: returns (output, weights or None)."""
        is_batched = query.ndim == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if self.batch_first and is_batched:
            # Sequence first for the functional form; `is` is kept, which picks its
            # self-attention (one packed product) and encoder-decoder paths.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        output, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return output.transpose(1, 0), weights
        return output, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """One mask from attn_mask (L, L) or (N * heads, L, L) and key_padding_mask (N, L),
        expanded to (N, heads, L, L), with its type: 0 attn_mask, 1 key padding, 2 both."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                expanded = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.reshape(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, seq_len, seq_len)
            merged = expanded
            if key_padding_mask is not None:
                padding = key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(
                    batch_size, self.num_heads, seq_len, seq_len)
                merged = expanded + padding
        return merged, mask_type
