"""Complex tensors stay on the CPU: the CUDA kernels are generated for real values, so a copy
of a complex tensor to a GPU is refused with a clear error rather than computed on wrongly
(docs/notes/complex.md). Runs under Numba's CUDA simulator (tests/cuda_simulator.py).
"""

from __future__ import annotations

import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit

pytestmark = MARKS


@pytest.mark.parametrize("make", [
    lambda: autojit.ones(2, dtype=autojit.cfloat).to("cuda"),
    lambda: autojit.zeros(2, dtype=autojit.cdouble, device="cuda"),
    lambda: autojit.tensor([1j], device="cuda"),
    lambda: autojit.ones(2, device="cuda").to(autojit.cfloat),
])
def test_complex_tensors_are_refused_on_the_gpu(make):
    # A copy says so; an op on the GPU that would make one has no kernel for the dtype.
    with pytest.raises(Exception, match="CUDA device has no complex tensors|the CUDA backend "
                                        "does not support dtype complex64"):
        make()


def test_a_compiled_function_making_a_complex_gpu_tensor_raises_eagers_error():
    # Compiled complex ops run on the CPU only: on a GPU the call raises what eager raises.
    def function(x):
        return autojit.view_as_complex(x.reshape(-1, 2)).abs()

    x = autojit.ones(4, device="cuda")
    for run in (function, autojit.compile(function, fullgraph=True)):
        with pytest.raises(RuntimeError, match="CUDA device has no complex tensors"):
            run(x)


@pytest.mark.parametrize("make", [
    lambda: autojit.ones(2, dtype=autojit.uint64).to("cuda"),
    lambda: autojit.zeros(2, dtype=autojit.uint16, device="cuda"),
    lambda: autojit.ones(2, device="cuda").to(autojit.uint32),
    lambda: autojit.tensor([1j], dtype=autojit.chalf).to("cuda"),
])
def test_uint16_to_uint64_and_complex32_stay_on_the_cpu(make):
    # The CUDA kernels render none of torch's limited-support dtypes (docs/notes/
    # unsigned-integers.md, docs/notes/complex32.md): refused as complex tensors are.
    with pytest.raises(Exception, match="CUDA device has no (uint16|uint32|uint64|complex) "
                                        "tensors|the CUDA backend does not support dtype"):
        make()
