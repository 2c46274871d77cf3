"""autojit.utils: data loading (autojit.utils.data), with torch.utils' names."""

from . import data

__all__ = ["data"]
