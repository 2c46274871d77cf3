"""The vector path of CUDA elementwise kernels (render_cuda.vector_plan, codegen/cuda/vector.py).

Run under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM is set (see tests/test_cuda.py).
The simulator runs the vector loads and stores element by element, so these tests check which
kernels take the path, the group and tail arithmetic, and the alignment test that sends a
kernel whose arrays start off a vector boundary to the scalar loop; each result is compared
with NumPy's. The loads themselves compile to `ld.global.v4` (tests/test_cuda_ptx.py).
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit.codegen.cuda.render import render
from autojit.codegen.kernel import (
    Kernel,
    KernelInput,
    KernelOutput,
    Operand,
    Step,
    contiguous_strides,
)
from autojit.ops.registry import REGISTRY

pytestmark = MARKS

RNG = np.random.default_rng(7)


def binary_kernel(shape, name="mul", dtype=autojit.float32, strides=None, out_dtype=None):
    """in0 (shape, C order or `strides`) `name` in1 (broadcast along the last axis when 1-d
    rows are given by strides of 0), one output."""
    out_dtype = out_dtype or dtype
    kernel = Kernel("vector", tuple(shape))
    first, second = strides or (contiguous_strides(shape), contiguous_strides(shape))
    kernel.inputs.append(KernelInput(dtype, first))
    kernel.inputs.append(KernelInput(dtype, second))
    kernel.steps.append(Step(REGISTRY[name], (Operand("input", 0), Operand("input", 1)), {},
                             dtype, out_dtype))
    kernel.outputs.append(KernelOutput(0, out_dtype))
    return kernel


def test_which_kernels_take_the_vector_path():
    contiguous = render(binary_kernel((64,)))
    assert contiguous.vector_width == 4 and contiguous.groups == 16
    assert contiguous.vector_arrays == (0, 1, 2)
    assert "load_vector4(in0" in contiguous.source and "store_vector4(out0" in contiguous.source
    assert render(binary_kernel((64,), dtype=autojit.float64)).vector_width == 2
    # Rows of 512 with a bias broadcast over them: every row starts on a group.
    bias = render(binary_kernel((8, 512), "add", strides=((512, 1), (0, 1))))
    assert bias.vector_width == 4 and bias.groups == 8 * 128
    # A transposed input, rows whose length the width does not divide, a bool operand.
    assert render(binary_kernel((8, 8), strides=((1, 8), (8, 1)))).vector_width == 0
    assert render(binary_kernel((8, 6), strides=((6, 1), (6, 1)))).vector_width == 4  # merged
    assert render(binary_kernel((8, 6), strides=((6, 1), (0, 1)))).vector_width == 0
    boolean = render(binary_kernel((64,), "logical_and", dtype=autojit.bool))
    assert boolean.vector_width == 0
    # A bool result beside float operands is stored lane by lane.
    compare = render(binary_kernel((64,), "lt", out_dtype=autojit.bool))
    assert compare.vector_arrays == (0, 1) and "out0[gi0 * 4 + 3]" in compare.source
    # A reduction never takes it.
    summed = binary_kernel((64,))
    summed.outputs[0] = KernelOutput(0, autojit.float32, "sum")
    summed.reduce_axes = (0,)
    assert render(summed).vector_width == 0


@pytest.mark.parametrize("size", [1, 3, 4, 7, 37, 130])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_vector_and_tail_elements(size, dtype):
    a = (RNG.uniform(-5, 5, size) * 10).astype(dtype)
    b = (RNG.uniform(1, 5, size) * 10).astype(dtype)
    x, y = autojit.tensor(a, device="cuda"), autojit.tensor(b, device="cuda")
    np.testing.assert_array_equal((x * y).cpu().numpy(), a * b)
    np.testing.assert_array_equal((x - y).cpu().numpy(), a - b)
    np.testing.assert_array_equal((x < y).cpu().numpy(), a < b)


def launch(kernel, arrays):
    from autojit.cuda.kernels import compile_kernel

    compiled = compile_kernel(kernel)
    inputs = [autojit.tensor(array, device="cuda")._payload for array in arrays]
    output = autojit.empty(*kernel.shape, dtype=kernel.outputs[0].dtype, device="cuda")._payload
    groups = compiled.arguments(inputs, [output])[-1]
    compiled(inputs, [output])
    return output.to_host(), groups


def test_rows_with_a_broadcast_operand():
    x = RNG.uniform(-1, 1, (5, 8)).astype(np.float32)
    column = RNG.uniform(-1, 1, (5, 1)).astype(np.float32)
    row = RNG.uniform(-1, 1, 8).astype(np.float32)
    # Broadcast along the rows (read once per group) and along the columns (a vector).
    result, groups = launch(binary_kernel((5, 8), "add", strides=((8, 1), (1, 0))),
                            [x, column])
    np.testing.assert_array_equal(result, x + column)
    assert groups == 10
    result, groups = launch(binary_kernel((5, 8), "sub", strides=((8, 1), (0, 1))), [x, row])
    np.testing.assert_array_equal(result, x - row)
    assert groups == 10


def test_arrays_off_a_vector_boundary_run_scalar():
    """A view that starts one element into its base cannot be read by vectors: the launch
    passes 0 groups and the scalar loop takes every element."""
    from autojit.cuda.kernels import compile_kernel

    base = autojit.tensor(RNG.uniform(-1, 1, 41).astype(np.float32), device="cuda")
    other = autojit.tensor(RNG.uniform(-1, 1, 40).astype(np.float32), device="cuda")
    shifted = base[1:]
    compiled = compile_kernel(binary_kernel((40,)))
    output = autojit.empty(40, device="cuda")._payload
    assert compiled.arguments([base[:40]._payload, other._payload], [output])[-1] == 10
    assert compiled.arguments([shifted._payload, other._payload], [output])[-1] == 0
    before = base.cpu().numpy()
    expected = before[1:] * other.cpu().numpy()
    np.testing.assert_array_equal((shifted * other).cpu().numpy(), expected)
    np.testing.assert_array_equal((other * shifted).cpu().numpy(), expected)
    # Written through a view off the boundary: an in-place op's output is that view.
    shifted.mul_(2)
    np.testing.assert_array_equal(base.cpu().numpy(), np.append(before[:1], before[1:] * 2))


def test_compiled_training_step_with_vector_kernels():
    """A fused forward and backward whose kernels take the vector path, against the CPU."""
    weights = RNG.uniform(-1, 1, (12, 8)).astype(np.float32)
    data = RNG.uniform(-1, 1, (6, 12)).astype(np.float32)

    def run(device):
        weight = autojit.tensor(weights, device=device, requires_grad=True)

        @autojit.compile
        def step(x):
            hidden = (x @ weight).tanh() * 0.5 + (x @ weight).sigmoid()
            loss = (hidden * hidden).mean()
            loss.backward()
            with autojit.no_grad():
                weight.sub_(0.1 * weight.grad)
            weight.grad = None
            return loss.detach()

        x = autojit.tensor(data, device=device)
        losses = [step(x).item() for _ in range(3)]
        return losses, weight.detach().cpu().numpy(), step

    cpu_losses, cpu_weight, _ = run("cpu")
    cuda_losses, cuda_weight, step = run("cuda")
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-5)
    np.testing.assert_allclose(cuda_weight, cpu_weight, rtol=1e-5, atol=1e-6)
    assert "load_vector4" in step.kernel_source()
