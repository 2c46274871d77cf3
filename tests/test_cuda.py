"""The CUDA target against the CPU results, under Numba's CUDA simulator when no GPU is used.

tests/cuda_simulator.py enables the simulator (NUMBA_ENABLE_CUDASIM=0 runs these tests on a
real GPU instead). Sizes are tiny: the simulator runs one Python thread per GPU thread.
tests/test_cuda_op_table.py runs every row of the op table on CUDA tensors.
"""

import os
import sys

import numpy as np
import pytest
from cuda_simulator import MARKS, SIMULATED  # before autojit: it enables the simulator

import autojit

pytestmark = MARKS

RNG = np.random.default_rng(0)


def pair(shape, dtype=autojit.float32, requires_grad=False, low=-2.0, high=2.0):
    data = RNG.uniform(low, high, shape).astype(dtype.numpy)
    cpu = autojit.tensor(data, requires_grad=requires_grad)
    cuda = autojit.tensor(data, device="cuda", requires_grad=requires_grad)
    return cpu, cuda


def check(cpu, cuda, tolerance=1e-5):
    assert cuda.is_cuda and not cpu.is_cuda
    assert cuda.shape == cpu.shape and cuda.dtype is cpu.dtype
    np.testing.assert_allclose(cuda.cpu().numpy(), cpu.numpy(), rtol=tolerance, atol=tolerance)


# ---- devices ----------------------------------------------------------------------------------

def test_devices_and_transfers():
    assert autojit.cuda.is_available() and autojit.cuda.device_count() >= 1
    assert autojit.device("cuda") == autojit.device("cuda")
    assert str(autojit.device("cuda:0")) == "cuda:0"
    x = autojit.tensor([1.0, 2.0], device="cuda")
    assert x.device == autojit.device("cuda:0") and x.is_cuda and x.get_device() == 0
    assert repr(x) == "tensor([1., 2.], device='cuda:0')"
    back = x.cpu()
    assert back.device == autojit.device("cpu") and not back.is_cuda
    assert back.tolist() == [1.0, 2.0] and x.tolist() == [1.0, 2.0]
    assert autojit.ones(2, 3).cuda().to("cpu").numpy().sum() == 6
    assert x.to(autojit.float64).dtype is autojit.float64 and x.to(autojit.float64).is_cuda
    assert autojit.zeros(2).to(x).is_cuda
    assert x.to("cuda") is x
    for factory in (autojit.zeros, autojit.ones, autojit.empty, autojit.randn, autojit.rand):
        assert factory(2, 3, device="cuda").is_cuda
    assert autojit.arange(5, device="cuda").tolist() == [0, 1, 2, 3, 4]
    assert autojit.zeros_like(x).is_cuda and autojit.full((2,), 3.0, device="cuda").is_cuda
    assert x.sum().item() == 3.0
    autojit.cuda.synchronize()
    autojit.cuda.empty_cache()


def test_device_errors():
    x = autojit.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, but "
                       r"found at least two devices, cuda:0 and cpu!"):
        x + autojit.ones(3)
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                       r"Use Tensor.cpu\(\) to copy the tensor to host memory first\."):
        x.numpy()
    # A 0-d CPU tensor may join a CUDA op, as in torch.
    check(autojit.ones(3) * autojit.tensor(2.0), x * autojit.tensor(2.0))


def test_caching_allocator_reuses_buffers():
    autojit.cuda.empty_cache()
    before = autojit.cuda.memory_stats()["reused"]
    for _ in range(3):
        y = autojit.ones(5, device="cuda") + 1
        del y
    assert autojit.cuda.memory_stats()["reused"] > before


# ---- eager ops ------------------------------------------------------------------------------

UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "erf", "log1p",
         "expm1", "floor", "sign"]


def test_unary_elementwise():
    cpu, cuda = pair((3, 4), low=0.1, high=3.0)
    for name in UNARY:
        check(getattr(autojit, name)(cpu), getattr(autojit, name)(cuda), 2e-5)
    check(cpu.relu(), cuda.relu())


def test_binary_broadcast_compare_and_dtypes():
    a_cpu, a = pair((2, 3))
    b_cpu, b = pair((3,))
    for name in ("add", "sub", "mul", "div", "maximum", "minimum", "remainder"):
        check(getattr(autojit, name)(a_cpu, b_cpu), getattr(autojit, name)(a, b))
    check(a_cpu ** 2, a ** 2)
    check(a_cpu.abs() ** b_cpu, a.abs() ** b, 1e-4)
    check(2.5 - a_cpu, 2.5 - a)
    check(a_cpu > b_cpu, a > b)
    check(autojit.where(a_cpu > 0, a_cpu, b_cpu), autojit.where(a > 0, a, b))
    i_cpu, i = pair((2, 3), autojit.int64, low=-9, high=9)
    check(i_cpu // 4, i // 4)
    check(i_cpu % 4, i % 4)
    check(i_cpu + a_cpu, i + a)  # int64 + float32 promotes to float32
    check(a_cpu.to(autojit.float64) * 3, a.to(autojit.float64) * 3)
    check(a_cpu.to(autojit.int32), a.to(autojit.int32))
    nan = autojit.tensor([float("nan"), float("inf"), -1.0])
    check(nan.log(), nan.cuda().log())
    check(autojit.isnan(nan), autojit.isnan(nan.cuda()))


def test_reductions():
    cpu, cuda = pair((3, 5, 4))
    for dim in ((0,), (1,), (2,), (0, 2), None):
        for name in ("sum", "amax", "amin", "prod"):
            function = getattr(autojit, name)
            expected = function(cpu) if dim is None else function(cpu, dim=dim)
            got = function(cuda) if dim is None else function(cuda, dim=dim)
            check(expected, got, 1e-4)
    check(cpu.mean(dim=1, keepdim=True), cuda.mean(dim=1, keepdim=True))
    check(cpu.sum(dim=1, dtype=autojit.float64), cuda.sum(dim=1, dtype=autojit.float64))
    flags = cpu > 0
    check(flags.any(dim=1), (cuda > 0).any(dim=1))
    check(flags.all(), (cuda > 0).all())
    check(flags.sum(), (cuda > 0).sum())
    wide_cpu, wide = pair((70,))  # more elements than a simulated block has threads
    check(wide_cpu.sum(), wide.sum(), 1e-4)


def test_layout_ops():
    cpu, cuda = pair((2, 3, 4))
    check(cpu.reshape(6, 4), cuda.reshape(6, 4))
    check(cpu.permute(2, 0, 1), cuda.permute(2, 0, 1))
    check(cpu.transpose(0, 2), cuda.transpose(0, 2))
    check(cpu[:, 1:, ::2], cuda[:, 1:, ::2])
    check(cpu[1], cuda[1])
    check(cpu[:, :1].expand(2, 5, 4), cuda[:, :1].expand(2, 5, 4))
    check(autojit.cat([cpu, cpu * 2], dim=1), autojit.cat([cuda, cuda * 2], dim=1))
    check(cpu.flatten(), cuda.flatten())
    check(cpu.unsqueeze(1), cuda.unsqueeze(1))


def test_matmul():
    a_cpu, a = pair((5, 7))
    b_cpu, b = pair((7, 6))
    check(a_cpu @ b_cpu, a @ b, 1e-5)
    c_cpu, c = pair((2, 3, 5))
    d_cpu, d = pair((5, 2))
    check(c_cpu @ d_cpu, c @ d, 1e-5)
    check(autojit.matmul(a_cpu[0], b_cpu), autojit.matmul(a[0], b))


class FakeCupy:
    """What cuda/matmul.py asks of CuPy, over the simulator's arrays (NumPy arrays inside):
    checks the route to cuBLAS, its shapes and its writing in place; CuPy itself needs a
    GPU."""

    def __init__(self, fail=False):
        self.calls, self.fail = [], fail
        self.cuda = self

    def Device(self, index):  # noqa: N802 - CuPy's name
        import contextlib

        return contextlib.nullcontext()

    def asarray(self, flat):
        return flat._ary  # the simulator's device array keeps a NumPy array

    def matmul(self, a, b, out):
        if self.fail:
            raise RuntimeError("CUDA driver version is insufficient")
        self.calls.append((a.shape, b.shape, out.shape, out.dtype))
        np.matmul(a, b, out=out)


@pytest.mark.skipif(not SIMULATED, reason="the fake CuPy reads the simulator's arrays")
@pytest.mark.parametrize("fail", [False, True])
def test_matmul_through_cupy(monkeypatch, fail):
    from autojit.cuda import matmul

    fake = FakeCupy(fail)
    monkeypatch.setattr(matmul, "_CUPY", [fake])
    a_cpu, a = pair((2, 5, 7))
    b_cpu, b = pair((7, 6))
    if fail:
        with pytest.warns(RuntimeWarning, match="CuPy's matmul failed .*tiled kernel"):
            check(a_cpu @ b_cpu, a @ b, 1e-5)
        assert matmul._CUPY == [None]
        check(a_cpu @ b_cpu, a @ b, 1e-5)  # no second warning: the kernel runs from now on
        return
    check(a_cpu @ b_cpu, a @ b, 1e-5)
    # a's batch dim folds into its rows (ops/linalg/__init__.py: matmul): one (10, 7) by (7, 6)
    # product.
    assert fake.calls == [((1, 10, 7), (1, 7, 6), (1, 10, 6), np.float32)]
    # Gradients go through it too; integer products keep the tiled kernel.
    x_cpu, x = pair((4, 3), requires_grad=True)
    (x @ x.t()).sum().backward()
    (x_cpu @ x_cpu.t()).sum().backward()
    check(x_cpu.grad, x.grad, 1e-5)
    assert len(fake.calls) == 4  # the product and its two gradients
    integers = autojit.ones(3, 3, dtype=autojit.int64, device="cuda")
    check(autojit.full((3, 3), 3, dtype=autojit.int64), integers @ integers)
    assert len(fake.calls) == 4


def test_small_integer_dtypes_wrap_as_on_the_cpu():
    """uint8, int8 and int16 kernels: arithmetic and literals wrap, comparisons and division
    of uint8 are unsigned, casts from floats and the bitwise ops agree with the CPU."""
    for dtype, low, high in ((autojit.uint8, 0, 256), (autojit.int8, -128, 128),
                             (autojit.int16, -3000, 3000)):
        data = RNG.integers(low, high, (2, 5)).astype(dtype.numpy)
        cpu, cuda = autojit.tensor(data), autojit.tensor(data, device="cuda")

        def program(x):
            return (x * 3 + 300, x - 1, x // 7, x % 5, x < 100, x.amax(1), x.sum(0), ~x,
                    (x >> 1) ^ x, (x.float() * 2.7).to(x.dtype), x.any(1))

        for expected, got in zip(program(cpu), program(cuda), strict=True):
            check(expected, got, 0)
        check(program(cpu)[0], autojit.compile(program)(cuda)[0], 0)


def test_unsupported_dtype_names_itself():
    x = autojit.ones(3, dtype=autojit.float16, device="cuda")
    with pytest.raises(Exception, match="add: the CUDA backend does not support float16"):
        x + 1


def test_argmax_argmin_nan_and_ties():
    data = RNG.standard_normal((3, 5, 4)).astype(np.float32)
    data[0, 1, 2] = np.nan
    data[1, :, 3] = 1.0  # ties keep the first index
    cpu, cuda = autojit.tensor(data), autojit.tensor(data, device="cuda")
    for dim in (None, -1):
        for name in ("argmax", "argmin"):
            check(getattr(cpu, name)(dim=dim), getattr(cuda, name)(dim=dim, keepdim=False))
    check(cpu.argmax(dim=0, keepdim=True), cuda.argmax(dim=0, keepdim=True))
    # a bool tensor's index of its maximum (argmax refuses bools, as torch's)
    check((cpu > 0).max(dim=2).indices, (cuda > 0).max(dim=2).indices)
    check(cpu.max(dim=1).indices, cuda.max(dim=1).indices)
    check(cpu.min(dim=2).values, cuda.min(dim=2).values)


def test_indexing_gather_scatter_with_gradients():
    cpu, cuda = pair((4, 5), requires_grad=True)
    index = autojit.tensor([[0, 1, 2, 3, 0], [3, 2, 1, 0, 1]])
    for x in (cpu, cuda):
        rows = x[[2, 0, 2]] * 2  # repeated rows accumulate their gradients
        picked = x.gather(1, autojit.tensor([[1], [0], [4], [2]], device=x.device)) ** 2
        (rows.sum() + picked.sum() + x[x.detach() > 0].sum()).backward()
    check(cpu.grad, cuda.grad)
    check(cpu[:, [1, 4]].detach(), cuda[:, [1, 4]].detach())
    rows, columns = autojit.tensor([0, 1]), autojit.tensor([2, 3])
    check(cpu[rows, columns].detach(), cuda[rows, columns].detach())  # CPU indices, as torch
    check(cpu[rows, columns].detach(), cuda[rows.cuda(), columns.cuda()].detach())
    check(cpu.detach().nonzero(), (cuda.detach()).nonzero())
    check(autojit.zeros(4, 5).scatter_add(0, index, cpu.detach()),
          autojit.zeros(4, 5, device="cuda").scatter_add(0, index.cuda(), cuda.detach()))
    copies = [cpu.detach().clone(), cuda.detach().clone()]
    for x in copies:
        x[[1, 2]] = 5.0
        x[:, 1] = autojit.arange(4.0, device=x.device)
    check(*copies)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 4"):
        cuda[autojit.tensor([7]).cuda()]


def test_embedding_cross_entropy_and_prod_double_backward():
    import autojit.nn.functional as F

    weight_cpu, weight = pair((6, 3), requires_grad=True)
    logits_cpu, logits = pair((4, 6), requires_grad=True)
    ids = autojit.tensor([[1, 5], [0, 1]])
    target = autojit.tensor([1, 5, 0, 2])
    for w, z, device in ((weight_cpu, logits_cpu, "cpu"), (weight, logits, "cuda")):
        loss = F.embedding(ids.to(device), w).sum() + F.cross_entropy(
            z, target.to(device), label_smoothing=0.1)
        loss.backward()
    check(weight_cpu.grad, weight.grad)
    check(logits_cpu.grad, logits.grad)
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        F.cross_entropy(logits, autojit.tensor([1, 9, 0, 2]).cuda())
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(autojit.tensor([0.5, 1.5]).cuda(), autojit.ones(2).cuda())
    data = np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]], np.float32)  # one zero; two zeros
    results = []
    for x in (autojit.tensor(data, requires_grad=True),
              autojit.tensor(data, device="cuda", requires_grad=True)):
        (first,) = autojit.autograd.grad(x.prod(dim=1).sum(), x, create_graph=True)
        (second,) = autojit.autograd.grad(first.sum(), x)
        results.append((first, second))
    check(results[0][0].detach(), results[1][0].detach())
    check(results[0][1], results[1][1])


def test_split_block_sum():
    # More reduced elements than one simulated block covers in its share: the sum is split
    # over blocks that add atomically into a zeroed output.
    cpu, cuda = pair((2, 700))
    check(cpu.sum(), cuda.sum(), 1e-4)
    check(cpu.sum(dim=1), cuda.sum(dim=1), 1e-4)
    check((cpu > 0).sum(), (cuda > 0).sum())


# ---- autograd -----------------------------------------------------------------------------

def test_backward_keeps_gradients_on_device():
    w_cpu, w = pair((3, 4), requires_grad=True)
    x_cpu, x = pair((4, 2))
    for weight, data in ((w_cpu, x_cpu), (w, x)):
        loss = ((weight @ data).tanh() * 2 + weight.sum(dim=1, keepdim=True).exp()[:, :1]).sum()
        loss.backward()
    assert w.grad.is_cuda
    check(w_cpu.grad, w.grad, 1e-4)


def test_create_graph_second_order():
    x_cpu, x = pair((4,), requires_grad=True)
    results = []
    for leaf in (x_cpu, x):
        (first,) = autojit.autograd.grad((leaf.sin() * leaf).sum(), leaf, create_graph=True)
        (second,) = autojit.autograd.grad(first.sum(), leaf)
        results.append(second)
    check(*results, 1e-5)


def test_to_device_is_differentiable():
    x = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x.cuda() ** 2).sum().backward()
    assert not x.grad.is_cuda
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    y = autojit.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    (y.cpu() * 3).sum().backward()
    assert y.grad.is_cuda and y.grad.tolist() == [3.0, 3.0]


def test_in_place_update():
    x = autojit.ones(4, device="cuda")
    x.add_(2.0)
    x.mul_(autojit.full((4,), 3.0, device="cuda"))
    assert x.tolist() == [9.0, 9.0, 9.0, 9.0]


# ---- compiled ---------------------------------------------------------------------------------

def _training_run(device):
    weight = autojit.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=autojit.float32,
                            device=device, requires_grad=True)
    bias = autojit.zeros(3, device=device, requires_grad=True)

    @autojit.compile
    def step(x, y):
        loss = ((x @ weight + bias - y).tanh() ** 2).mean()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.1 * weight.grad)
            bias.sub_(0.1 * bias.grad)
        weight.grad = None
        bias.grad = None
        return loss.detach()

    x = autojit.tensor(np.linspace(0, 1, 24).reshape(6, 4), dtype=autojit.float32,
                       device=device)
    y = autojit.zeros(6, 3, device=device)
    losses = [step(x, y).item() for _ in range(3)]
    return step, losses, weight, bias


def test_compiled_training_step_matches_cpu():
    step_cpu, losses_cpu, weight_cpu, bias_cpu = _training_run("cpu")
    step, losses, weight, bias = _training_run("cuda")
    assert len(step.executables) == 1 and step.executables[0].calls == 3
    assert "kernel" in step.fusion_groups()
    assert "cuda.grid" in step.kernel_source() or "cuda.threadIdx" in step.kernel_source()
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5)
    assert weight.is_cuda and bias.is_cuda
    check(weight_cpu.detach(), weight.detach(), 1e-5)
    check(bias_cpu.detach(), bias.detach(), 1e-5)


def test_compiled_guards_on_device():
    f = autojit.compile(lambda x: (x * 2).exp().sum(dim=0))
    cpu = f(autojit.ones(3, 2))
    cuda = f(autojit.ones(3, 2, device="cuda"))
    assert cuda.is_cuda and len(f.executables) == 2
    check(cpu, cuda)
    with pytest.raises(RuntimeError, match="same device"):
        autojit.compile(lambda a, b: a + b)(autojit.ones(2, 2), autojit.ones(2, 2,
                                                                            device="cuda"))


def test_render_reduction_with_warp_shuffles():
    from autojit.codegen.cuda.render import render
    from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
    from autojit.ops.registry import REGISTRY

    kernel = Kernel("sum", (4, 300), reduce_axes=(1,))
    kernel.inputs.append(KernelInput(autojit.float32, (300, 1)))
    kernel.steps.append(Step(REGISTRY["exp"], (Operand("input", 0),), {}, autojit.float32,
                             autojit.float32))
    kernel.outputs.append(KernelOutput(0, autojit.float32, "sum"))
    source = render(kernel, block=256, warp_shuffle=True).source
    assert "cuda.shfl_down_sync" in source and "cuda.shared.array(256" in source
    assert "shfl" not in render(kernel, block=32, warp_shuffle=False).source
    compile(source, "<kernel>", "exec")  # valid Python


@pytest.mark.parametrize("dtype, reduce", [("uint8", "max"), ("int8", "min"), ("int16", "max")])
def test_reductions_whose_accumulator_no_shuffle_moves_stay_in_shared_memory(dtype, reduce):
    """numba's shfl_down_sync takes 32- and 64-bit ints and floats only (a uint8 max failed
    to compile on an H200): such reductions finish their tree in shared memory."""
    from autojit.codegen.cuda.render import render
    from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
    from autojit.ops.registry import REGISTRY

    kind = getattr(autojit, dtype)
    kernel = Kernel(reduce, (4, 300), reduce_axes=(1,))
    kernel.inputs.append(KernelInput(kind, (300, 1)))
    kernel.steps.append(Step(REGISTRY["neg"], (Operand("input", 0),), {}, kind, kind))
    kernel.outputs.append(KernelOutput(0, kind, reduce))
    source = render(kernel, block=256, warp_shuffle=True).source
    assert "shfl" not in source and "if thread < 1:" in source
    compile(source, "<kernel>", "exec")


def test_kernels_first_compiled_inside_a_trace_see_maths_own_functions():
    """A trace wraps math's functions (ir/scalars.SymbolicMath); an eager CUDA op run inside
    one compiled its kernel with the wrapper in its namespace, which numba cannot lower (on an
    H200: allclose compiled, 'No definition for lowering SymbolicMath._wrap...')."""
    import math

    from autojit.codegen.cuda.jit import MATH_FUNCTIONS, MATH_NAMES, _math
    from autojit.ir.scalars import SymbolicMath

    originals = {name: getattr(math, name) for name in (*MATH_NAMES, *MATH_FUNCTIONS, "erf")}
    with SymbolicMath():
        assert math.exp is not originals["exp"]
        for name, original in originals.items():
            assert _math(name) is original


def test_numba_compiles_inside_a_trace_with_maths_own_functions():
    """numba's own lowerings find math's functions by identity (abs of a float lowers through
    math.fabs, a float power through math.pow): a kernel first compiled inside a trace failed
    with 'No definition for lowering SymbolicMath._wrap...' (on an H200, allclose compiled
    after the namespace's fix above). Kernels compile under ir/scalars.real_math
    (cuda/handwritten.compiling_with_real_math, CudaCompiledKernel._bind); numba's CPU target
    shows the same lowering without a GPU."""
    import math

    import numba

    from autojit.ir.scalars import SymbolicMath, real_math

    def kernel(x):
        return abs(x) + x ** 2.5

    fabs = math.fabs
    with SymbolicMath():
        wrapped = math.fabs
        # (numba's first compile in a process reads math's names and fails otherwise)
        with pytest.raises(Exception, match="No definition for lowering|autojit.ir.scalars"):
            numba.njit(kernel)(2.0)
        with SymbolicMath():
            with real_math():
                assert math.fabs is fabs
                assert numba.njit(kernel)(2.0) == pytest.approx(2 + 2 ** 2.5)
            assert math.fabs.__wrapped__ is wrapped
        assert math.fabs is wrapped
    assert math.fabs is fabs
    with real_math():  # no trace: nothing to restore
        assert math.fabs is fabs


def test_a_numba_cuda_that_cannot_compile_with_this_numpy_is_named(monkeypatch):
    """numba-cuda 0.30.4 with NumPy 2.5 fails every kernel's compile deep inside numba (it
    registers np.row_stack); autojit.cuda names the cause when CUDA is first used."""
    import types

    import numba

    from autojit.cuda import _check_compiler

    class Typing:
        def refresh(self):
            raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    monkeypatch.setitem(sys.modules, "numba.cuda.target",
                        types.SimpleNamespace(CUDATypingContext=Typing))
    monkeypatch.setattr(sys.modules["numba.cuda"], "target",
                        sys.modules["numba.cuda.target"], raising=False)
    monkeypatch.setattr(numba.config, "ENABLE_CUDASIM", 0)
    with pytest.raises(RuntimeError, match=r"numba-cuda cannot compile kernels with NumPy "
                       r".*row_stack.*numpy<2\.5"):
        _check_compiler()


@pytest.mark.skipif("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS" in os.environ,
                    reason="the environment asks for numba's warning")
def test_small_launches_do_not_warn():
    """Small tensors launch small grids; numba's NumbaPerformanceWarning for each (tens of
    lines a training step on an H200) is off, as torch prints nothing."""
    import numba

    autojit.cuda.driver()
    assert numba.config.CUDA_LOW_OCCUPANCY_WARNINGS == 0


def test_a_buffer_collected_in_a_cycle_goes_back_to_the_pool_alive():
    """A CudaArray collected as part of a reference cycle (a traceback's frames, an autograd
    graph) must not take its pooled buffer into the garbage with it: numba frees a device
    buffer from a weakref.finalize on the buffer's pointer object, which the collector runs for
    everything in the cycle before __del__ returns the buffer to the pool. On an H200 the next
    allocation of that size then read freed memory (ReferenceError from numba)."""
    import gc
    import weakref

    from autojit.cuda.allocator import _POOL
    from autojit.cuda.array import CudaArray

    autojit.cuda.empty_cache()
    array = CudaArray((300,), np.float32)
    finalized = []
    weakref.finalize(array._buffer, finalized.append, True)
    cycle = [array]
    cycle.append(cycle)
    del array, cycle
    gc.collect()
    assert not finalized
    assert any(buffers for buffers in _POOL.values())


def test_compiled_step_uploads_constants_once():
    import autojit.nn.functional as F

    # arange(classes), a constant: made on z's device while tracing (ir/trace_devices.py),
    # or uploaded once, never on every call.
    loss = autojit.compile(lambda z, t: F.cross_entropy(z, t))
    z_cpu, z = pair((4, 3))
    target = autojit.tensor([0, 2, 1, 1])
    values = [loss(z, target.cuda()).item() for _ in range(3)]
    np.testing.assert_allclose(values, [F.cross_entropy(z_cpu, target).item()] * 3, rtol=1e-5)
    assert loss.executables[0].plan.uploads <= 1
    scale = autojit.tensor(2.0)  # a captured 0-d CPU tensor, updated in place below
    scaled = autojit.compile(lambda x: x * scale)
    x = autojit.ones(2, device="cuda")
    assert scaled(x).tolist() == [2.0, 2.0] and scaled(x).tolist() == [2.0, 2.0]
    scale.add_(1.0)
    assert scaled(x).tolist() == [3.0, 3.0]
    assert scaled.executables[0].plan.uploads == 2


# ---- DLPack -----------------------------------------------------------------------------------

def test_dlpack_cuda_tensors():
    x = autojit.ones(3, device="cuda")
    assert x.__dlpack_device__() == (2, 0)
    assert autojit.from_dlpack(x)._payload is x._payload  # shares the device buffer
    with pytest.raises(BufferError, match="cannot be exported to DLPack device"):
        x.__dlpack__(dl_device=(1, 0))
    if autojit.cuda.is_simulator():  # the simulator has no device pointers to hand out
        assert not hasattr(x, "__cuda_array_interface__")
        with pytest.raises(BufferError, match="simulator has no device pointers"):
            x.__dlpack__()
        return
    interface = x.__cuda_array_interface__
    assert interface["shape"] == (3,) and interface["typestr"] == "<f4"
    y = autojit.from_dlpack(x.cuda())  # a consumer of the interface: numba itself
    assert y.is_cuda and y.tolist() == [1.0, 1.0, 1.0]


class _CapsuleOnly:
    """Exports a CUDA tensor through its capsule alone, as CuPy and torch do."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **options):
        return self.tensor.__dlpack__(**options)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.skipif(autojit.cuda.is_simulator(), reason="the simulator has no device pointers")
def test_dlpack_capsules_of_cuda_tensors_share_device_memory():
    x = autojit.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    for versioned in (False, True):
        y = autojit.from_dlpack(_CapsuleOnly(x) if versioned else x.__dlpack__())
        assert y.is_cuda and y.shape == (2, 2) and y._payload is not x._payload
        y.mul_(2.0)
    assert x.tolist() == [[4.0, 8.0], [12.0, 16.0]]  # both imports wrote into x's buffer
    copied = autojit.from_dlpack(x.__dlpack__(copy=True))
    copied.zero_()
    assert x.sum().item() == 40.0
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    shared = torch.from_dlpack(x)
    shared[0, 0] = -1.0
    assert x[0, 0].item() == -1.0
    back = autojit.from_dlpack(torch.arange(3.0, device="cuda"))
    assert back.is_cuda and back.tolist() == [0.0, 1.0, 2.0]


# ---- benchmarks -------------------------------------------------------------------------------

def test_cuda_benchmarks_run_quick():
    import importlib

    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
    sys.path.insert(0, bench)
    try:
        elementwise = importlib.import_module("cuda_elementwise")
        mlp = importlib.import_module("cuda_mlp_step")
    finally:
        sys.path.remove(bench)
    rows = elementwise.main(["--quick"])
    assert [row[0] for row in rows][:2] == ["device copy (read + write)", "autojit.compile"]
    rows = mlp.main(["--quick"])
    assert rows[0][0] == "autojit.compile" and rows[0][1] > 0


def test_an_extern_routine_without_a_cuda_kernel_runs_on_the_host_with_one_warning():
    from autojit.cuda.eager import HostFallbackWarning
    from autojit.ops.registry import REGISTRY, Extern, bind, define_op, rule_first

    op = define_op(name="reverse_host_test_op", arity=1, shape=lambda shape: shape,
                   dtype=rule_first, impl=lambda x: x[::-1].copy(), vjp=None, saves=(),
                   lowering=Extern("reverse_for_test", ("data",)))
    try:
        x = autojit.arange(4.0).cuda()
        with pytest.warns(HostFallbackWarning, match="reverse_host_test_op on cuda tensors "
                          "runs on the host"):
            first = bind(op, (x,), {})
        assert first.is_cuda and first.cpu().tolist() == [3.0, 2.0, 1.0, 0.0]
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", HostFallbackWarning)  # warned once per op
            assert bind(op, (x * 2,), {}).cpu().tolist() == [6.0, 4.0, 2.0, 0.0]
    finally:
        del REGISTRY[op.name]
