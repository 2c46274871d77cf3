"""torch.utils._python_dispatch's names. autojit dispatches its own primitives, not aten
operators, so it has no __torch_dispatch__: a TorchDispatchMode can be defined (libraries and
tests define them at import time) but entering one raises NotImplementedError naming it.
docs/drop-in.md lists this."""

from __future__ import annotations


class TorchDispatchMode:
    """torch's base class of dispatch modes; entering one raises NotImplementedError."""

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        raise NotImplementedError(
            f"{type(self).__name__}: __torch_dispatch__ modes are not supported by autojit, "
            "which dispatches its own primitives rather than aten operators")

    def __exit__(self, exc_type, exc, tb):
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _get_current_dispatch_mode():
    return None


def _get_current_dispatch_mode_stack():
    return []


def is_traceable_wrapper_subclass(t) -> bool:
    return False


def is_traceable_wrapper_subclass_type(t) -> bool:
    return False


def _disable_current_modes():
    import contextlib
    return contextlib.nullcontext([])
