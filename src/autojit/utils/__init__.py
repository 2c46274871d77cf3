"""autojit.utils: data loading (autojit.utils.data), activation checkpointing
(autojit.utils.checkpoint) and the deterministic-algorithms setting (autojit.utils.deterministic),
with torch.utils' names, and safetensors files (autojit.utils.safetensors, imported on its own:
it needs the optional safetensors package)."""

from . import checkpoint, data, deterministic

__all__ = ["checkpoint", "data", "deterministic"]
