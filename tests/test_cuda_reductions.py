"""CUDA column reductions (outer axes only, coalesced) and mixed devices in compiled functions.

Run under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM is set (see tests/test_cuda.py);
every result is compared with the CPU's. Sizes are tiny: the simulator runs one Python thread
per GPU thread.
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit

pytestmark = MARKS

RNG = np.random.default_rng(1)


def pair(shape, dtype=np.float32, low=-2.0, high=2.0):
    data = RNG.uniform(low, high, shape).astype(dtype)
    return autojit.tensor(data), autojit.tensor(data, device="cuda")


def check(cpu, cuda, tolerance=1e-5, exact=False):
    assert cuda.is_cuda and not cpu.is_cuda
    assert cuda.shape == cpu.shape and cuda.dtype is cpu.dtype
    if exact:
        np.testing.assert_array_equal(cuda.cpu().numpy(), cpu.numpy())
    else:
        np.testing.assert_allclose(cuda.cpu().numpy(), cpu.numpy(), rtol=tolerance,
                                   atol=tolerance)


def column_kernel(shape, dims, dtype=autojit.float32, reduce="sum"):
    from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
    from autojit.ops.registry import REGISTRY

    strides = tuple(int(np.prod(shape[axis + 1:])) for axis in range(len(shape)))
    kernel = Kernel("columns", tuple(shape), reduce_axes=tuple(dims))
    kernel.inputs.append(KernelInput(dtype, strides))
    kernel.steps.append(Step(REGISTRY["neg"], (Operand("input", 0),), {}, dtype, dtype))
    kernel.outputs.append(KernelOutput(0, dtype, reduce))
    return kernel


# ---- column reductions ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (37, 40), (1, 6), (6, 1)])
def test_column_sum_max_min_prod(shape):
    cpu, cuda = pair(shape, low=0.5, high=1.5)  # prod of up to 37 rows stays in range
    for name in ("sum", "amax", "amin", "prod"):
        check(getattr(cpu, name)(dim=0), getattr(cuda, name)(dim=0), 1e-5,
              exact=name in ("amax", "amin"))
    check(cpu.sum(dim=0, keepdim=True), cuda.sum(dim=0, keepdim=True))


def test_column_reductions_of_integers_bools_and_nan():
    data = RNG.integers(-9, 9, (13, 5))
    for dtype in (np.int32, np.int64):
        cpu, cuda = autojit.tensor(data.astype(dtype)), autojit.tensor(data.astype(dtype),
                                                                       device="cuda")
        for name in ("sum", "amax", "amin"):
            check(getattr(cpu, name)(dim=0), getattr(cuda, name)(dim=0), exact=True)
    cpu, cuda = pair((9, 4))
    for name in ("any", "all"):
        check(getattr(cpu > 0, name)(dim=0), getattr(cuda > 0, name)(dim=0), exact=True)
    check((cpu > 0).sum(dim=0), (cuda > 0).sum(dim=0), exact=True)
    data = RNG.uniform(-1, 1, (6, 3)).astype(np.float32)
    data[2, 1] = np.nan
    for name in ("amax", "amin", "sum"):
        got = getattr(autojit.tensor(data, device="cuda"), name)(dim=0).cpu().numpy()
        np.testing.assert_array_equal(np.isnan(got), [False, True, False])


def test_column_reductions_in_three_dimensions():
    cpu, cuda = pair((3, 4, 5))
    check(cpu.sum(dim=(0, 1)), cuda.sum(dim=(0, 1)))
    check(cpu.amax(dim=(0, 1), keepdim=True), cuda.amax(dim=(0, 1), keepdim=True), exact=True)
    check(cpu.sum(dim=1), cuda.sum(dim=1))  # the middle axis: outer and inner axes kept
    check(cpu.amin(dim=0), cuda.amin(dim=0), exact=True)


def test_tall_column_sums_split_over_blocks():
    # More rows than one simulated block's share: partial sums added atomically.
    cpu, cuda = pair((300, 3))
    check(cpu.sum(dim=0), cuda.sum(dim=0), 1e-4)
    integers = np.arange(900, dtype=np.int32).reshape(300, 3) % 7
    check(autojit.tensor(integers).sum(dim=0),
          autojit.tensor(integers, device="cuda").sum(dim=0), exact=True)


def test_column_schedule_is_chosen_only_for_outer_axes():
    from autojit.codegen.cuda.render import render

    columns = render(column_kernel((64, 40), (0,)), block=256).source
    assert "lane = thread % 32" in columns and "row = thread // 32" in columns
    assert "in0[ki0 + ri0 * 40]" in columns  # adjacent threads, adjacent addresses
    rows = render(column_kernel((64, 40), (1,)), block=256).source
    assert "lane" not in rows and "shfl_down_sync" in rows
    narrow = render(column_kernel((64, 3), (0,)), block=32, warp_shuffle=False).source
    assert "lane = thread % 4" in narrow and "row = thread // 4" in narrow
    split = render(column_kernel((4096, 10), (0,)), block=256)
    # A float32 sum's blocks add into a float64 array (rounded into the output after).
    assert split.wide == (0,) and split.total > 1 and "cuda.atomic.add(wide0" in split.source
    split = render(column_kernel((4096, 10), (0,), dtype=autojit.float64), block=256)
    assert split.zeroed == (0,) and split.total > 1 and "cuda.atomic.add(out0" in split.source
    maximum = render(column_kernel((4096, 10), (0,), reduce="max"), block=256)
    assert maximum.zeroed == () and "atomic" not in maximum.source


def test_column_schedule_with_a_larger_block():
    # Blocks of 64 threads (two rows of 32 lanes) under the simulator: two tiles, one of
    # them partly past the last column.
    from autojit.codegen.cuda import jit as backend
    from autojit.codegen.cuda.render import render
    from autojit.cuda import driver, is_simulator
    from autojit.cuda.array import CudaArray

    data = RNG.uniform(-1, 1, (7, 40)).astype(np.float32)
    for reduce, expected in (("sum", -data.sum(axis=0)), ("min", (-data).min(axis=0))):
        rendered = render(column_kernel((7, 40), (0,), reduce=reduce), "wide", block=64,
                          warp_shuffle=False, max_blocks=4)
        function = driver().jit(backend.kernel_function(rendered.source, "wide", driver(),
                                                        is_simulator()))
        source, out = CudaArray.from_host(data), CudaArray((1, 40), np.float32)
        function[min(rendered.total, 4), 64](source.flat, out.flat)
        np.testing.assert_allclose(out.to_host().ravel(), expected, rtol=1e-5, atol=1e-5)


def test_compiled_column_sum_with_prologue():
    f = autojit.compile(lambda x, y: ((x * y).relu().sum(dim=0), (x * y).exp()))
    (x_cpu, x), (y_cpu, y) = pair((11, 5)), pair((11, 5))
    for expected, got in zip(f(x_cpu, y_cpu), f(x, y)):
        check(expected, got)
    assert "lane" in f.kernel_source()


def _mlp_step(device):
    rng = np.random.default_rng(3)
    parameters = [autojit.tensor(rng.uniform(-0.5, 0.5, shape).astype(np.float32),
                                 device=device, requires_grad=True)
                  for shape in ((4, 6), (6,), (6, 3), (3,))]
    w1, b1, w2, b2 = parameters

    @autojit.compile
    def step(x, y):
        loss = (((x @ w1 + b1).relu() @ w2 + b2 - y) ** 2).mean()
        loss.backward()
        gradients = [p.grad for p in parameters]
        for p in parameters:
            p.grad = None
        return (loss.detach(), *gradients)

    x = autojit.tensor(rng.uniform(-1, 1, (10, 4)).astype(np.float32), device=device)
    y = autojit.tensor(rng.uniform(-1, 1, (10, 3)).astype(np.float32), device=device)
    return step, step(x, y)


def test_compiled_mlp_bias_gradients():
    _, expected = _mlp_step("cpu")
    step, got = _mlp_step("cuda")
    for cpu, cuda in zip(expected, got):
        check(cpu, cuda, 1e-5)
    assert "lane" in step.kernel_source()  # the bias gradients are column sums


# ---- accuracy of float32 sums --------------------------------------------------------------------

@pytest.mark.parametrize("shape, dim", [((100_000,), None), ((25_000, 4), 0), ((4, 25_000), 1)])
def test_float32_sums_stay_within_a_millionth_of_float64(shape, dim):
    """A thread adds CHUNK elements into a float32 partial sum, then that into a float64
    accumulator; the block's tree and the split blocks' atomic additions run in float64,
    rounded to float32 once (docs/notes/accurate-numerics.md). Values of 0.1 round the same
    way at every addition: a thread adding its 800 of them in float32 was 8e-6 off."""
    data = np.full(shape, 0.1, np.float32)
    x = autojit.tensor(data, device="cuda")
    wide = data.astype(np.float64)
    eager_sum = x.sum() if dim is None else x.sum(dim)
    compiled_mean = autojit.compile(lambda x: x.mean() if dim is None else x.mean(dim))(x)
    for result, truth in ((eager_sum, wide.sum(dim)), (compiled_mean, wide.mean(dim))):
        got = result.cpu().numpy()
        assert got.dtype == np.float32 and got.shape == np.shape(truth)
        error = np.max(np.abs(got.astype(np.float64) - truth) / truth)
        assert error < 1e-6, (shape, dim, error)


def test_sums_of_other_dtypes_keep_their_accumulators():
    from autojit.codegen.cuda.render import render

    for dtype, wide in ((autojit.float32, True), (autojit.float64, False),
                        (autojit.int32, False), (autojit.int64, False)):
        for dims in ((0,), (1,), (0, 1)):
            rendered = render(column_kernel((100_000, 3), dims, dtype=dtype), block=256)
            assert ("f64(0.0)" in rendered.source) == (wide or dtype is autojit.float64)
            assert ("part0" in rendered.source) == wide, (dtype, dims)
    data = RNG.integers(2**30, 2**31 - 1, (300, 7)).astype(np.int32)
    got = autojit.tensor(data, device="cuda").sum(0).cpu().numpy()
    np.testing.assert_array_equal(got, data.sum(0, dtype=np.int64))


# ---- mixed devices in compiled functions --------------------------------------------------------

MIXED = r"Expected all tensors to be on the same device, but found at least two devices, " \
        r"cuda:0 and cpu!"


def test_compiled_call_refuses_a_captured_cpu_parameter():
    weight = autojit.randn(4, 3, requires_grad=True)  # left on the CPU
    f = autojit.compile(lambda x: (x @ weight).relu().sum())
    x = autojit.ones(2, 4, device="cuda")
    with pytest.raises(RuntimeError, match=MIXED):
        x @ weight  # eager
    # Raised while tracing: the call runs eagerly and raises eager's error, from the user's
    # line (compiler/api.py).
    for rows in (2, 2, 3, 5):  # every call, also once sizes turn dynamic
        with pytest.raises(RuntimeError, match=MIXED + "$"):
            f(autojit.ones(rows, 4, device="cuda"))
    buffer = autojit.ones(3)  # no grad, named in the function's reach
    with pytest.raises(RuntimeError, match=MIXED + "$"):
        autojit.compile(lambda x: x * buffer)(autojit.ones(3, device="cuda"))
    # A CPU tensor combined with CPU values first still meets the CUDA values later.
    with pytest.raises(RuntimeError, match=MIXED + "$"):
        autojit.compile(lambda x: x + buffer * 2)(autojit.ones(3, device="cuda"))


def test_a_function_of_captured_cuda_tensors_alone_refuses_cpu_values():
    """No argument on the GPU: the first captured CUDA tensor places the trace, and the CPU
    values made before it (a factory's, an op of CPU tensors) raise eager's error when an op
    mixes them with it; compiled returned a value where eager raised."""
    import autojit.nn.functional as F

    weight = autojit.randn(3, 4, device="cuda", requires_grad=True)

    def mixed():
        return (F.one_hot(autojit.tensor([1, 0]), 3) * weight[0, 0]).sum()

    def scalar_joins():  # a 0-d CPU tensor may join, as in torch
        return (weight * autojit.tensor(2.0)).sum()

    with pytest.raises(RuntimeError, match=MIXED):
        mixed()
    with pytest.raises(RuntimeError, match=MIXED + "$"):
        autojit.compile(mixed)()
    f = autojit.compile(scalar_joins)
    assert f().device.type == "cuda"
    np.testing.assert_allclose(f().detach().cpu().numpy(), scalar_joins().detach().cpu().numpy(),
                               rtol=1e-6)


def test_compiled_call_accepts_what_eager_accepts():
    import autojit.nn.functional as F

    scale = autojit.tensor(2.0)  # 0-d CPU tensors may join CUDA ops, as in torch
    f = autojit.compile(lambda x: x * scale + 1)
    assert f(autojit.ones(3, device="cuda")).tolist() == [3.0, 3.0, 3.0]
    index = autojit.tensor([2, 0])  # a CPU index of x[index], as in torch
    g = autojit.compile(lambda x: x[index] * 2)
    assert g(autojit.arange(3.0, device="cuda")).tolist() == [4.0, 0.0]
    # Constants made while tracing (arange(classes) in cross_entropy) are uploaded.
    loss = autojit.compile(lambda z, t: F.cross_entropy(z, t))
    z_cpu, z = pair((4, 3))
    target = autojit.tensor([0, 2, 1, 1])
    check(F.cross_entropy(z_cpu, target), loss(z, target.cuda()))
