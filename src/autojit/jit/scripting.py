"""Whether code runs as a scripted module or function: torch.jit.is_scripting().

A call of what `jit.script` returns (a scripted module, an exported method, a ScriptFunction,
a ScriptModule subclass's instance) runs with is_scripting() True, in this thread, for the
whole call: its trace by autojit.compile, and the eager run of a call that falls back. Code
that asks takes the branch TorchScript would compile, as torch runs it for a scripted module:
torchvision's detection models return their `(losses, detections)` tuple there, GoogLeNet its
`GoogLeNetOutputs`. Traced modules and functions (`jit.trace`) and autojit.compile's own calls
run with it False, as torch.jit.trace runs Python.

This sits at the bottom of autojit.jit: jit/__init__.py sets it around scripted calls, and the
drop-in's torch._jit_internal reads it.
"""

from __future__ import annotations

import threading

__all__ = ["is_scripting", "run_as_script"]

_state = threading.local()


def is_scripting() -> bool:
    """True inside a call of a scripted module or function (jit.script's), False elsewhere:
    code written for TorchScript takes its scripting branch there, as it does in torch."""
    return getattr(_state, "depth", 0) > 0


def run_as_script(call, *args, **kwargs):
    """call(*args, **kwargs) with is_scripting() True until it returns."""
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    try:
        return call(*args, **kwargs)
    finally:
        _state.depth = depth
