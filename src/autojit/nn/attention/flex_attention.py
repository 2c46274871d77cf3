"""torch.nn.attention.flex_attention: attention whose scores a program modifies
(`score_mod(score, b, h, q_idx, kv_idx)`) and masks (`mask_mod(b, h, q_idx, kv_idx)`, made into a
BlockMask by create_block_mask), with torch's names and results.

autojit computes it densely, as a composite of its ops: the mods run once on index tensors
broadcast to (batch, heads, queries, keys) (torch runs them under vmap, one position at a
time; a mod written with tensor ops gives the same values either way), the scores are masked,
softmaxed and multiplied by the values, and a query whose every key is masked gets zeros (and a
log-sum-exp of -inf), as in torch. The BlockMask keeps torch's block tables (kv_num_blocks,
kv_indices and the full-block ones, per BLOCK_SIZE blocks), which flex_attention honours: a
block left out of them is masked whatever mask_mod says. Gradients, double backward and
compiling come from the ops it is made of; there is no fused kernel that skips masked blocks.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ...ops.composite import logsumexp
from ...tensor.creation import arange, tensor
from ...tensor.dtypes import bool_, int32
from ...tensor.tensor import Tensor

__all__ = ["AuxOutput", "AuxRequest", "BlockMask", "and_masks", "create_block_mask",
           "create_mask", "flex_attention", "noop_mask", "or_masks"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention's `return_aux` asks for."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs: each None unless asked for."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def noop_mask(b, h, q_idx, kv_idx) -> Tensor:
    """The mask_mod that keeps every position."""
    return q_idx.new_ones((), dtype=bool_) if isinstance(q_idx, Tensor) else True


def and_masks(*mask_mods):
    """The mask_mod keeping the positions every one of `mask_mods` keeps."""
    def combined(b, h, q_idx, kv_idx):
        result = True
        for mod in mask_mods:
            result = mod(b, h, q_idx, kv_idx) & result
        return result
    return combined


def or_masks(*mask_mods):
    """The mask_mod keeping the positions any of `mask_mods` keeps."""
    def combined(b, h, q_idx, kv_idx):
        result = False
        for mod in mask_mods:
            result = mod(b, h, q_idx, kv_idx) | result
        return result
    return combined


def _indices(B: int, H: int, Q: int, KV: int, device=None) -> tuple:
    """(b, h, q_idx, kv_idx) as int64 tensors broadcasting to (B, H, Q, KV)."""
    return (arange(B, device=device).view(B, 1, 1, 1), arange(H, device=device).view(1, H, 1, 1),
            arange(Q, device=device).view(1, 1, Q, 1), arange(KV, device=device).view(1, 1, 1, KV))


def create_mask(mod_fn, B, H, Q_LEN: int, KV_LEN: int, device="cpu") -> Tensor:  # noqa: N803
    """The dense (B, H, Q_LEN, KV_LEN) bool mask of a mask_mod (B and H None: 1)."""
    B, H = B or 1, H or 1  # noqa: N806 - torch's names
    b, h, q, kv = _indices(B, H, Q_LEN, KV_LEN, device if device != "cuda" else None)
    kept = mod_fn(b, h, q, kv)
    if not isinstance(kept, Tensor):
        kept = tensor(bool(kept))
    return kept.to(bool_).expand(B, H, Q_LEN, KV_LEN)


def _blocks(dense: Tensor, q_block: int, kv_block: int) -> tuple:
    """(partial, full) block tables, (B, H, q blocks, kv blocks) bools, of a dense mask."""
    B, H, Q, KV = dense.shape  # noqa: N806
    nq, nkv = -(-Q // q_block), -(-KV // kv_block)
    padded = dense.new_zeros((B, H, nq * q_block, nkv * kv_block), dtype=bool_)
    padded[:, :, :Q, :KV] = dense
    tiles = padded.view(B, H, nq, q_block, nkv, kv_block)
    some = tiles.any(dim=5).any(dim=3)
    # A block is full where each of its positions is kept: one past a sequence's end is not.
    full = tiles.all(dim=5).all(dim=3)
    return some & ~full, full


def _table(blocks: Tensor) -> tuple:
    """(counts, indices) of a block table: per row, how many blocks are set and their
    indices first, in order (torch's kv_num_blocks and kv_indices), as int32."""
    counts = blocks.sum(dim=-1).to(int32)
    order = (~blocks).to(int32).argsort(dim=-1, stable=True).to(int32)
    return counts, order


class BlockMask:
    """Which (query block, key block) pairs flex_attention computes, and the mask_mod for the
    partial ones: torch's BlockMask, made by create_block_mask."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE, mask_mod):  # noqa: N803
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod if mask_mod is not None else noop_mask

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,  # noqa: N803
                       mask_mod=None, seq_lengths=None, compute_q_blocks: bool = True):
        """A BlockMask from its key-block tables (the query-block ones are derived)."""
        block = BLOCK_SIZE if isinstance(BLOCK_SIZE, tuple) else (BLOCK_SIZE, BLOCK_SIZE)
        partial = _set_blocks(kv_num_blocks, kv_indices)
        full = None if full_kv_num_blocks is None else \
            _set_blocks(full_kv_num_blocks, full_kv_indices)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * block[0], kv_indices.shape[-1] * block[1])
        q_partial = _table(partial.transpose(-1, -2))
        q_full = (None, None) if full is None else _table(full.transpose(-1, -2))
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                   *q_partial, *q_full, block, mask_mod)

    @property
    def shape(self) -> tuple:
        return (*self.kv_indices.shape[:2], *self.seq_lengths)

    def _computed(self) -> Tensor:
        """(B, H, q blocks, kv blocks) bools: the blocks computed, partial or full."""
        blocks = _set_blocks(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            blocks = blocks | _set_blocks(self.full_kv_num_blocks, self.full_kv_indices)
        return blocks

    def to_dense(self) -> Tensor:
        """The block table as 0/1 int32s, (B, H, q blocks, kv blocks)."""
        return self._computed().to(int32)

    def sparsity(self) -> float:
        """The percentage of the mask's positions in blocks skipped (torch's count: the
        blocks computed at their whole size, past the sequences' ends too)."""
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - size / self.numel())

    def numel(self) -> int:
        return math.prod(self.shape)

    def __getitem__(self, index) -> BlockMask:
        def pick(t):
            return None if t is None else t[index]
        return BlockMask(self.seq_lengths, pick(self.kv_num_blocks), pick(self.kv_indices),
                         pick(self.full_kv_num_blocks), pick(self.full_kv_indices),
                         pick(self.q_num_blocks), pick(self.q_indices),
                         pick(self.full_q_num_blocks), pick(self.full_q_indices),
                         self.BLOCK_SIZE, self.mask_mod)

    def to(self, device) -> BlockMask:
        def move(t):
            return None if t is None else t.to(device)
        return BlockMask(self.seq_lengths, *(move(t) for t in (
            self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
            self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices)),
            self.BLOCK_SIZE, self.mask_mod)

    def __repr__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"mask_mod={getattr(self.mask_mod, '__name__', self.mask_mod)}\n)")


def _set_blocks(counts: Tensor, indices: Tensor) -> Tensor:
    """The bool block table of (counts, indices): row r holds indices[r, :counts[r]]."""
    n = indices.shape[-1]
    listed = arange(n).view(*([1] * (indices.dim() - 1)), n) < counts.unsqueeze(-1)
    blocks = indices.new_zeros(indices.shape, dtype=bool_)
    return blocks.scatter(-1, indices.long(), listed)


def create_block_mask(mask_mod, B, H, Q_LEN: int, KV_LEN: int, device="cuda",  # noqa: N803
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile: bool = False) -> BlockMask:
    """The BlockMask of `mask_mod` over (B, H, Q_LEN, KV_LEN) (B and H None: broadcast, 1),
    in blocks of BLOCK_SIZE (an int, or (query, key) sizes)."""
    block = BLOCK_SIZE if isinstance(BLOCK_SIZE, tuple) else (BLOCK_SIZE, BLOCK_SIZE)
    dense = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, "cpu")
    partial, full = _blocks(dense, *block)
    return BlockMask((Q_LEN, KV_LEN), *_table(partial), *_table(full),
                     *_table(partial.transpose(-1, -2)), *_table(full.transpose(-1, -2)),
                     block, mask_mod)


def _dense_mask(block_mask: BlockMask, B: int, H: int, Q: int, KV: int) -> Tensor:  # noqa: N803
    """The positions a BlockMask keeps: its mask_mod's, inside the blocks it computes (a full
    block's every position)."""
    kept = create_mask(block_mask.mask_mod, B, H, Q, KV, "cpu")
    q_block, kv_block = block_mask.BLOCK_SIZE
    partial = _set_blocks(block_mask.kv_num_blocks, block_mask.kv_indices)
    full = partial.new_zeros(partial.shape) if block_mask.full_kv_num_blocks is None else \
        _set_blocks(block_mask.full_kv_num_blocks, block_mask.full_kv_indices)

    def spread(blocks):  # block table -> positions, trimmed to the sequences
        wide = blocks.repeat_interleave(q_block, dim=-2).repeat_interleave(kv_block, dim=-1)
        return wide[..., :Q, :KV]

    return (spread(partial) & kept) | spread(full)


def flex_attention(query: Tensor, key: Tensor, value: Tensor, score_mod=None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False, kernel_options=None,
                   *, return_aux=None):
    """softmax(score_mod(q @ k^T * scale) masked by block_mask) @ v, for (B, H, L, E) query,
    (B, H_kv, S, E) key and (B, H_kv, S, Ev) value; with return_lse, also the log-sum-exp of
    each query's scores, (B, H, L); with return_aux (an AuxRequest), an AuxOutput of the
    log-sum-exp and each query's largest score, as asked. See the module docstring."""
    if any(not isinstance(t, Tensor) or t.dim() != 4 for t in (query, key, value)):
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    B, Hq, L, E = query.shape  # noqa: N806
    Hkv, S = key.shape[1], key.shape[2]  # noqa: N806
    if Hq != Hkv:
        if not enable_gqa or Hq % Hkv:
            raise ValueError(f"Expect query and key/value to have the same number of heads but "
                             f"got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if score_mod is not None:
        b, h, q, kv = _indices(B, Hq, L, S)
        scores = score_mod(scores, b, h, q, kv)
    if block_mask is not None:
        mask_b = block_mask.kv_num_blocks.shape[0]
        mask_h = block_mask.kv_num_blocks.shape[1]
        kept = _dense_mask(block_mask, mask_b, mask_h, L, S)
        scores = scores.masked_fill(~kept, -math.inf)
    # A query whose every key is masked gets zero weights and a log-sum-exp of -inf; its
    # scores are read as zeros for the log-sum-exp, so that no NaN reaches a gradient.
    some = (scores > -math.inf).any(dim=-1, keepdim=True).detach()
    lse = logsumexp(scores.masked_fill(~some, 0.0), dim=-1)
    weights = (scores - lse.unsqueeze(-1)).exp()
    out = weights.to(value.dtype) @ value
    lse = lse.masked_fill(~some.squeeze(-1), -math.inf)
    if return_aux is not None:
        return out, AuxOutput(lse if return_aux.lse else None,
                              scores.amax(dim=-1) if return_aux.max_scores else None)
    if return_lse:
        return out, lse
    return out
