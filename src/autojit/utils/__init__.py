"""autojit.utils: data loading (autojit.utils.data), with torch.utils' names, and safetensors
files (autojit.utils.safetensors, imported on its own: it needs the optional safetensors
package)."""

from . import data

__all__ = ["data"]
