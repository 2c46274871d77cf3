"""torch._C._functorch under the drop-in, as an attribute of torch._C: `TransformType`, the
names of functorch's interpreters that a HigherOrderOperator's rules are registered under
(`@op.py_impl(TransformType.Vmap)`). functorch's wrapped tensors and its interpreter stack
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


explain_missing_attributes(sys.modules[__name__], "torch._C._functorch")

__all__ = ["TransformType"]
