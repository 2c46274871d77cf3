"""autojit.utils: data loading (autojit.utils.data), activation checkpointing
(autojit.utils.checkpoint), the deterministic-algorithms setting (autojit.utils.deterministic),
statement timing (autojit.utils.benchmark) and hook handles (autojit.utils.hooks), with
torch.utils' names, and safetensors files (autojit.utils.safetensors, imported on its own: it
needs the optional safetensors package)."""

from . import benchmark, checkpoint, data, deterministic, hooks

__all__ = ["benchmark", "checkpoint", "data", "deterministic", "hooks"]
