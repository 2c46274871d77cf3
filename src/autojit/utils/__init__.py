"""autojit.utils: data loading (autojit.utils.data) and activation checkpointing
(autojit.utils.checkpoint), with torch.utils' names, and safetensors files
(autojit.utils.safetensors, imported on its own: it needs the optional safetensors package)."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
