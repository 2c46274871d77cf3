"""torch._C._functorch under the drop-in, as an attribute of torch._C: `TransformType`, the
names of functorch's interpreters that a HigherOrderOperator's rules are registered under
(`@op.py_impl(TransformType.Vmap)`), `is_legacy_batchedtensor` (False: autojit has no
legacy batched tensors) and `dlevel`, the level of the grad transform a tensor belongs to
(autograd/transform_levels.py numbers the levels as torch does). functorch's wrapped tensors
and its interpreter stack (`_add_batch_dim`, `_wrap_for_grad`, `peek_interpreter_stack`) have
no counterpart: autojit's transforms do not wrap tensors, and asking for one raises the
drop-in's AttributeError.
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


def dlevel(tensor) -> int:
    """The level (torch's number: 1 for the outermost transform) of the grad transform (grad,
    vjp, jvp) whose function made `tensor` or took it as an input, while that runs; -1 once it
    has returned (a tensor that escaped it); 0 for any other tensor."""
    from ..autograd.transform_levels import dlevel as level_of
    from ..tensor.tensor import Tensor

    if not isinstance(tensor, Tensor):
        raise TypeError("dlevel(): incompatible function arguments. The following argument "
                        "types are supported:\n    1. (arg0: torch.Tensor) -> int\n\n"
                        f"Invoked with: {tensor!r}")
    return level_of(tensor)


explain_missing_attributes(sys.modules[__name__], "torch._C._functorch")

__all__ = ["TransformType", "is_legacy_batchedtensor", "dlevel"]
