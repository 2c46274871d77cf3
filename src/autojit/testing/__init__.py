"""autojit.testing: torch.testing's assert_close (and its deprecated assert_allclose), with
torch's tolerances and messages, and make_tensor; for the tests of programs ported from torch.

It sits in the layer of nn, optim and utils (docs/layout.md): built on the tensor and ops
layers, imported by nothing below it.
"""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
