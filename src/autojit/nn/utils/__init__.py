"""autojit.nn.utils: helpers around modules, with torch.nn.utils's names. rnn.py packs and pads
variable-length sequences for the recurrent layers (nn/rnn.py)."""

from . import rnn  # noqa: F401

__all__ = ["rnn"]
