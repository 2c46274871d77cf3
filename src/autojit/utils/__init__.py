"""autojit.utils: data loading (autojit.utils.data), activation checkpointing
(autojit.utils.checkpoint), the deterministic-algorithms setting (autojit.utils.deterministic),
statement timing (autojit.utils.benchmark), hook handles (autojit.utils.hooks) and DLPack
exchange (autojit.utils.dlpack), with torch.utils' names, and safetensors files
(autojit.utils.safetensors, imported on its own: it needs the optional safetensors package)."""

from . import benchmark, checkpoint, data, deterministic, dlpack, hooks

__all__ = ["benchmark", "checkpoint", "data", "deterministic", "dlpack", "hooks"]
