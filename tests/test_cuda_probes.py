"""The torch.cuda questions programs ask (memory counters and peaks, device properties, free
memory, the current device, bfloat16 support), with a GPU (Numba's CUDA simulator in CI) and,
in a process of its own, without one; and the attention backend flags of
torch.nn.attention and torch.backends.cuda against torch's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator
from torch_compare import torch

import autojit

F = autojit.nn.functional


@MARKS[0]
def test_memory_counters_follow_the_allocator():
    cuda = autojit.cuda
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    x = autojit.ones(1000, device="cuda")  # 4000 bytes, pooled as 4096
    assert cuda.memory_allocated() == base + 4096
    assert cuda.max_memory_allocated() >= base + 4096
    del x
    assert cuda.memory_allocated() == base
    assert cuda.memory_reserved() == base + 4096  # cached for reuse
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    assert cuda.max_memory_reserved() == base + 4096
    cuda.empty_cache()
    assert cuda.memory_reserved() == base
    properties = cuda.get_device_properties(0)
    assert properties.total_memory > 0 and properties.multi_processor_count > 0
    assert properties.name == cuda.get_device_name("cuda:0")
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    assert cuda.current_device() == 0 and cuda.set_device(0) is None
    assert cuda.set_device(autojit.device("cuda", 0)) is None
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(cuda.device_count())
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(cuda.device_count())
    assert cuda.is_bf16_supported() is False


def test_without_a_gpu_counters_are_zero_and_device_questions_raise():
    script = (
        "import autojit\n"
        "c = autojit.cuda\n"
        "if c.is_available():\n    print('gpu'); raise SystemExit\n"
        "print(c.memory_allocated(), c.max_memory_allocated(), c.memory_reserved(),\n"
        "      c.max_memory_reserved(), c.is_bf16_supported(), c.empty_cache())\n"
        "for f in (c.synchronize, c.get_device_name, c.get_device_properties, c.current_device,\n"
        "          lambda: c.set_device(0), c.mem_get_info, c.reset_peak_memory_stats):\n"
        "    try:\n        f()\n    except RuntimeError as error:\n"
        "        print(str(error).split(':')[0])\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}, check=True)
    lines = result.stdout.splitlines()
    if lines == ["gpu"]:
        pytest.skip("a GPU is present")
    assert lines[0] == "0 0 0 0 False None"
    assert lines[1:] == ["device 'cuda' is not available"] * 7


# ---- attention backends ----------------------------------------------------------------------

def _flags(lib) -> list:
    cuda = lib.backends.cuda
    return [cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(),
            cuda.cudnn_sdp_enabled()]


def test_attention_backend_flags_as_torch():
    for lib in (torch, autojit):
        assert _flags(lib) == [True] * 4
        attention = lib.nn.attention
        with attention.sdpa_kernel([attention.SDPBackend.MATH]):
            assert _flags(lib) == [False, False, True, False]
        with attention.sdpa_kernel(attention.SDPBackend.EFFICIENT_ATTENTION):
            assert _flags(lib) == [False, True, False, False]
        lib.backends.cuda.enable_flash_sdp(False)
        assert _flags(lib) == [False, True, True, True]
        lib.backends.cuda.enable_flash_sdp(True)
        with pytest.raises(RuntimeError, match="set_sdp_use_math expects a bool, but got int"):
            lib.backends.cuda.enable_math_sdp(1)
        with pytest.raises(AssertionError, match="got str"):
            with attention.sdpa_kernel("math"):
                pass
        with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
            with lib.backends.cuda.sdp_kernel(enable_flash=False, enable_cudnn=False):
                assert _flags(lib) == [False, True, True, False]
        assert _flags(lib) == [True] * 4
    assert {name: int(b) for name, b in autojit.nn.attention.SDPBackend.__members__.items()} \
        == {name: int(b) for name, b in torch.nn.attention.SDPBackend.__members__.items()}
    assert repr(autojit.nn.attention.SDPBackend.MATH) == "<SDPBackend.MATH: 0>"
    assert not autojit.backends.cuda.is_flash_attention_available()


def test_attention_runs_only_with_the_math_backend():
    q = autojit.randn(1, 2, 4, 8)
    expected = F.scaled_dot_product_attention(q, q, q)
    SDPBackend = autojit.nn.attention.SDPBackend
    with autojit.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert bool((F.scaled_dot_product_attention(q, q, q) == expected).all())
    # torch's message where no enabled kernel fits; autojit has only the math one.
    with autojit.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        with warnings.catch_warnings(record=True) as caught, pytest.raises(
                RuntimeError, match="No viable backend for scaled_dot_product_attention"):
            warnings.simplefilter("always")
            F.scaled_dot_product_attention(q, q, q)
    assert caught[0].filename == __file__ and "math backend" in str(caught[0].message)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
        with pytest.raises(RuntimeError, match="No viable backend"):
            torch.nn.functional.scaled_dot_product_attention(*[torch.randn(1, 2, 4, 8)] * 3)
