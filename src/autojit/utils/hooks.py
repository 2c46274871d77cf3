"""autojit.utils.hooks: torch.utils.hooks' names for code that registers hooks of its own. The
handle every `register_*hook` returns lives with the hook machinery in autograd/hooks.py; this
module only gives it torch's import path."""

from ..autograd.hooks import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]


def unserializable_hook(function):
    """Mark a tensor hook as one that need not survive pickling, as torch's decorator does
    (autojit pickles no hooks, so the mark is only read by code that looks for it)."""
    function.__torch_unserializable__ = True
    return function
