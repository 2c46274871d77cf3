"""Helpers of the tests that run one program under torch and under autojit and compare what
each gives (the test_torch_autograd_* modules, from torch's own autograd tests): the two
results of a program written against a module `t`, and an outcome's error as torch words it.
Callers importorskip torch first."""

from __future__ import annotations

import autojit


def both(program):
    """program(t) run with torch and with autojit: the two results."""
    import torch

    return program(torch), program(autojit)


def error_of(function):
    """(error class name, message with autojit's name read as torch's) of what `function()`
    raises, or None."""
    try:
        function()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error).__name__, str(error).replace("autojit", "torch")
    return None
