"""The internal torch names the autograd test files import that autojit provides as names only
or as small counterparts: torch.utils.cpp_extension (builds refuse), torch.utils._python_dispatch
and flop_counter (a dispatch mode can be defined, not entered), torch.utils._mode_utils,
torch.profiler.itt and emit_itt (no ITT ranges), kineto_available, profiler_util's private
formatters and torch.autograd._functions.Resize (against torch's)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _module(name: str):
    return importlib.import_module(name)


def test_cpp_extension_builds_refuse_as_a_failed_build():
    ext = _module("autojit.utils.cpp_extension")
    assert ext.CUDA_HOME is None and ext.ROCM_HOME is None
    for call in (lambda: ext.load("m", ["m.cpp"]), lambda: ext.load_inline("m", "int x;"),
                 lambda: ext.CppExtension("m", ["m.cpp"]), lambda: ext.BuildExtension()):
        with pytest.raises(OSError, match="cannot build torch C\\+\\+/CUDA extensions"):
            call()


def test_dispatch_modes_are_names_only():
    dispatch = _module("autojit.utils._python_dispatch")
    flops = _module("autojit.utils.flop_counter")

    class Mode(dispatch.TorchDispatchMode):  # defining one works, as test files do at import
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(NotImplementedError, match="Mode: __torch_dispatch__ modes"):
        with Mode():
            pass
    with pytest.raises(NotImplementedError, match="FlopCounterMode"):
        flops.FlopCounterMode(display=False)
    with _module("autojit.utils._mode_utils").no_dispatch():
        assert autojit.ones(2).sum().item() == 2.0


def test_profiler_names_without_kineto_or_itt():
    assert autojit.profiler.itt.is_available() is False
    assert autojit.autograd.kineto_available() is False
    with autojit.autograd.profiler.emit_itt():
        assert autojit.ones(1).item() == 1.0
    util = _module("autojit.autograd.profiler_util")
    assert util._format_time(1500.0) == torch.autograd.profiler_util._format_time(1500.0)


@pytest.mark.parametrize("framework", ["torch", "autojit"])
def test_resize_and_type_functions(framework):
    t = torch if framework == "torch" else autojit
    functions = _module(f"{framework}.autograd._functions")
    x = t.arange(6.0, requires_grad=True)
    y = functions.Resize.apply(x, (2, 3))
    (y * t.arange(6.0).reshape(2, 3)).sum().backward()
    assert tuple(y.shape) == (2, 3)
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0))
    with pytest.raises(RuntimeError, match="requested resize to 4x2 \\(8 elements in total\\)"):
        functions.Resize.apply(x, (4, 2))


def test_get_accelerator_answers_as_torch_without_a_gpu():
    """transformers' distributed helpers read `torch._C._get_accelerator().type`."""
    from autojit.drop_in import _C

    # Without a GPU both say the CPU; where the tests run CUDA's simulator, autojit's is cuda.
    expected = "device(type='cuda')" if autojit.cuda.is_available() else \
        repr(torch._C._get_accelerator())
    assert repr(_C._get_accelerator()) == expected
