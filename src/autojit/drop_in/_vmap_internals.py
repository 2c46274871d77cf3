"""torch._vmap_internals under the drop-in: torch's first vmap (`_vmap`, and the deprecated
`vmap`), which older libraries and torch.autograd.functional's callers import; both are
autojit's legacy_vmap (autograd/vmap.py), whose random ops raise that vmap's own message.
"""

from __future__ import annotations

from ..autograd.vmap import legacy_vmap


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through: bool = False):
    """`func` mapped over the dim `in_dims` of its inputs, stacking its outputs on `out_dims`
    (allow_none_pass_through: None outputs stay None, which autojit's vmap gives anyway)."""
    return legacy_vmap(func, in_dims, out_dims)


vmap = _vmap
__all__ = ["vmap"]
