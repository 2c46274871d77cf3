"""torch._C._functorch under the drop-in, as an attribute of torch._C: `TransformType`, the
names of functorch's interpreters that a HigherOrderOperator's rules are registered under
(`@op.py_impl(TransformType.Vmap)`), and `is_legacy_batchedtensor` (False: autojit has no
legacy batched tensors). functorch's wrapped tensors and its interpreter stack
(`_add_batch_dim`, `_wrap_for_grad`, `peek_interpreter_stack`, `dlevel`) have no counterpart:
autojit's transforms do not wrap tensors, and asking for one raises the drop-in's
AttributeError.
"""

from __future__ import annotations

import enum
import sys

from .names import explain_missing_attributes


class TransformType(enum.Enum):
    """The kinds of functorch interpreter, by torch's names."""

    Torch = 0
    Vmap = 1
    Grad = 2
    Jvp = 3
    Functionalize = 4


def is_legacy_batchedtensor(tensor) -> bool:
    """Whether `tensor` is a batched tensor of torch's legacy vmap: never here. autojit has
    none; its vmap's tensors, autograd.grad(is_grads_batched=True)'s among them, belong to
    functorch-style levels (`torch._C._are_functorch_transforms_active()` reports them), as
    torch's torch.func.vmap's do, for which this is False too."""
    from ..tensor.tensor import Tensor

    if not isinstance(tensor, Tensor):
        raise TypeError("is_legacy_batchedtensor(): incompatible function arguments. The "
                        "following argument types are supported:\n    1. (arg0: torch.Tensor) "
                        f"-> bool\n\nInvoked with: {tensor!r}")
    return False


explain_missing_attributes(sys.modules[__name__], "torch._C._functorch")

__all__ = ["TransformType", "is_legacy_batchedtensor"]
