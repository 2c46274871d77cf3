"""The native worker threads (codegen/cpu/workers.py) and what runs on them: split products
(codegen/cpu/gemm/blas.py), products side by side (matmul_steps.py) and split kernels (parallel.py).
Each is checked against NumPy or eager, including after the workers have gone to sleep, from two
threads at once, in a forked child, and with a kernel error raised from a worker's part.
"""

import multiprocessing
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import parallel, workers
from autojit.codegen.cpu.gemm import blas
from autojit.codegen.cpu.jit import compile_kernel
from autojit.codegen.cpu.parallel import split_kernel
from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
from autojit.ops.registry import REGISTRY
from autojit.tensor.dtypes import int64 as I64

pytestmark = pytest.mark.skipif(workers.shared() is None,
                                reason="no native workers here (not x86-64 Linux)")
# On one core a job is one part, run by the caller: nothing is split or runs side by side.
needs_two_cores = pytest.mark.skipif(workers.usable_cores() < 2,
                                     reason="one core: a job is one part, nothing is split")
generator = np.random.default_rng(11)


def array(*shape, dtype=np.float32):
    return generator.standard_normal(shape).astype(dtype)


def sleeping(pool) -> int:
    return int(pool._state.view(np.int32)[workers.SLOTS["sleeping"] // 4])


def test_usable_cores_are_within_the_affinity_mask():
    assert 1 <= workers.usable_cores() <= len(os.sched_getaffinity(0))
    assert workers.shared().count == workers.usable_cores() - 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("by_columns", [False, True])
def test_gemm_parts_on_the_workers_match_numpy(dtype, by_columns):
    a, b = array(96, 40, dtype=dtype), array(40, 72, dtype=dtype).T.copy().T  # b transposed
    accumulate = array(96, 72, dtype=dtype)
    out = accumulate.copy()
    keep: list = []
    records = blas.gemm_records(a, b, out, -0.5, 2.0, workers.shared().parts, by_columns, keep)
    assert len(records) == workers.shared().parts
    blas.run_records(records)
    expected = -0.5 * (a.astype(np.float64) @ b) + 2.0 * accumulate
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_a_large_product_wider_than_tall_splits_by_columns():
    parts = workers.shared().parts
    wide_a, wide_b = array(64, 1024), array(1024, 512)  # 2^25 multiply-adds
    assert blas.split_of(wide_a, wide_b) == (parts, True)
    # Taller than wide, or below the threshold: by rows.
    assert blas.split_of(array(784, 256), array(256, 512)) == (parts, False)
    assert blas.split_of(array(128, 256), array(256, 256)) == (parts, False)

    @autojit.compile
    def product(a, b):
        return a @ b

    result = product(autojit.tensor(wide_a), autojit.tensor(wide_b)).numpy()
    np.testing.assert_allclose(result, wide_a.astype(np.float64) @ wide_b, rtol=1e-4,
                               atol=1e-3)


@pytest.mark.parametrize("native", [False, True])
def test_a_large_product_over_a_few_rows_is_one_part(native):
    """An extent below the least rows of a part still makes one part (0 parts divided by 0)."""
    parts, by_columns = blas._parts(4, 1 << 20, 8, native)
    assert parts == 1 and by_columns in (False, True)
    a, b = array(4, 4096), array(4096, 8)
    out = np.empty((4, 8), dtype=a.dtype)
    blas.gemm(a, b, out, 1.0, 0.0)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_more_records_than_cores_run_in_rounds():
    pool = workers.shared()
    a, b = array(64, 32), array(32, 48)
    out = np.full((64, 48), np.nan, np.float32)
    records = blas.gemm_records(a, b, out, 1.0, 0.0, pool.parts * 2 + 1, False)
    blas.run_records(records)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_sleeping_workers_are_woken_by_the_next_job():
    pool = workers.shared()
    a, b = array(256, 64), array(64, 256)
    np.testing.assert_allclose(blas.matmul(a, b), a @ b, rtol=1e-5, atol=1e-4)
    deadline = time.monotonic() + 5
    while sleeping(pool) < pool.count and time.monotonic() < deadline:
        time.sleep(0.01)  # the workers spin about half a millisecond, then sleep
    assert sleeping(pool) == pool.count
    np.testing.assert_allclose(blas.matmul(b, a), b @ a, rtol=1e-5, atol=1e-4)


def test_a_job_of_one_part_leaves_the_sleeping_workers_asleep():
    """The caller runs a one-part job (a product too small to split) alone: a worker woken
    for it finds nothing to claim and spins meanwhile on a core the caller may need (the 9
    small products of a Mixture-of-Experts step took 165-270 us each under load, 9-22 us
    with the workers left asleep)."""
    pool = workers.shared()
    if pool.count == 0:
        pytest.skip("no worker threads: every job is the caller's")
    a, b = array(16, 16), array(16, 16)

    def asleep_throughout(seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if sleeping(pool) != pool.count:
                return False
        return True

    def woken_by(run) -> bool:
        deadline = time.monotonic() + 5
        while sleeping(pool) < pool.count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sleeping(pool) == pool.count
        run()
        return not asleep_throughout(0.03)

    out = np.empty((16, 16), np.float32)
    # (At most one of five: a futex wait may end early on its own, a signal say.)
    assert sum(woken_by(lambda: blas.run_records(blas.gemm_records(
        a, b, out, 1.0, 0.0, 1, False))) for _ in range(5)) <= 1
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_two_threads_hand_off_jobs_at_once():
    pairs = [(array(256, 64), array(64, 192)) for _ in range(2)]
    failures = []

    def work(a, b):
        for _ in range(50):
            if not np.allclose(blas.matmul(a, b), a @ b, rtol=1e-5, atol=1e-4):
                failures.append((a.shape, b.shape))

    threads = [threading.Thread(target=work, args=pair) for pair in pairs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def _product_in_child(queue):
    a = np.arange(256 * 64, dtype=np.float32).reshape(256, 64) / 1000
    b = np.ones((64, 128), np.float32)
    queue.put(bool(np.allclose(blas.matmul(a, b), a @ b, rtol=1e-5)))


def test_a_forked_child_starts_its_own_workers():
    blas.matmul(array(256, 64), array(64, 128))  # the parent's workers exist
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_product_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    if child.is_alive():  # hung: end it, or the interpreter would wait for it at exit
        child.kill()
        child.join()
    assert child.exitcode == 0
    assert queue.get(timeout=1) is True


def test_a_stopped_pool_lets_its_threads_end():
    pool = workers.Workers(1)
    a, b = array(128, 32), array(32, 64)
    out = np.empty((128, 64), np.float32)
    table = np.array(blas.gemm_records(a, b, out, 1.0, 0.0, 2, False), np.int64)
    assert pool.run(pool.gemm_part, table.ctypes.data, 2) == 0
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    pool.stop()
    assert not any(thread.is_alive() for thread in pool._threads)


def test_a_worker_runs_a_job_published_before_it_reached_its_loop():
    pool = workers.shared()
    memory = np.zeros(64, np.int64)  # a state of its own, 64-byte alignment not needed here
    words = memory.view(np.int32)
    memory[workers.SLOTS["spin"] // 8] = workers.SPIN_CYCLES
    memory[workers.SLOTS["function"] // 8] = pool._nothing
    # The job (generation 1, two parts, none claimed), published before the loop starts.
    memory[workers.SLOTS["job"] // 8] = (1 << 32) | (2 << 16)
    thread = threading.Thread(target=pool._loop, args=(memory.ctypes.data,), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while memory[workers.SLOTS["finished"] // 8] < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    finished = int(memory[workers.SLOTS["finished"] // 8])
    words[workers.SLOTS["stop"] // 4] = 1
    thread.join(timeout=10)
    assert finished == 2  # the worker claimed both parts: no caller took any


def test_the_caller_runs_part_0_of_every_job():
    """Part 0 is the caller's, so consecutive split steps keep their rows on one core."""
    import ctypes

    pool = workers.shared()
    ran: dict = {}

    @ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
    def part(argument, index):
        ran.setdefault(index, set()).add(threading.get_ident())
        time.sleep(0.002)  # long enough for a spinning worker to come for the other part
        return 0

    address = ctypes.cast(part, ctypes.c_void_p).value
    for _ in range(20):
        assert pool.run(address, 0, 2) == 0
    assert ran[0] == {threading.get_ident()}
    assert len(ran[1]) >= 1


def test_a_job_finishes_without_a_worker_that_never_comes():
    """The caller claims what the workers do not: a pool whose worker is held off (here, one
    that has already left its loop) still runs every part, on the calling thread."""
    pool = workers.Workers(1)
    # Stopped as Workers.stop stops it: the flag, then a job of no parts that wakes a worker
    # asleep on the futex (setting the flag alone left a sleeping worker in its loop, which
    # the job below then woke, on a loaded machine: a crash of the test process in CI).
    pool.stop()
    for thread in pool._threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    a, b = array(128, 32), array(32, 64)
    out = np.empty((128, 64), np.float32)
    table = np.array(blas.gemm_records(a, b, out, 1.0, 0.0, 2, False), np.int64)
    assert pool.run(pool.gemm_part, table.ctypes.data, 2) == 0
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@needs_two_cores
def test_a_split_kernel_error_raised_from_a_workers_part_names_the_op():
    op = REGISTRY["pow"]
    rows = 4096
    kernel = Kernel("pow_int", (rows, 64), [KernelInput(I64, (64, 1)), KernelInput(I64, (64, 1))],
                    [Step(op, (Operand("input", 0), Operand("input", 1)), {}, I64, I64)],
                    [KernelOutput(0, I64)])
    split = split_kernel(kernel, compile_kernel)
    assert split is not None
    base = np.full((rows, 64), 2, np.int64)
    exponent = np.ones((rows, 64), np.int64)
    out = np.empty((rows, 64), np.int64)
    split.run([base, exponent], [out])
    assert (out == 2).all()
    exponent[-1, -1] = -1  # in the last part: a worker's, not the calling thread's
    with pytest.raises(RuntimeError, match="negative integer powers"):
        split.run([base, exponent], [out])


@needs_two_cores
def test_split_kernels_with_reductions_match_eager_on_the_workers():
    compiled = autojit.compile(lambda x: ((x.tanh() * 2).sum(0), x.exp().sum(), x.tanh()))
    # Calls with new input arrays, and again with the same: the kept pointer table of a split
    # kernel must follow its arrays.
    for x in [autojit.tensor(array(512, 256)), autojit.tensor(-array(512, 256))] * 2:
        results = compiled(x)
        (step,) = [step for step in compiled.executables[0].plan.steps
                   if getattr(step, "split", None) is not None]
        assert isinstance(step.split, parallel.SplitKernel)
        expected = (np.tanh(x.numpy()) * 2).sum(0), np.exp(x.numpy()).sum(), np.tanh(x.numpy())
        for mine, theirs in zip(results, expected):
            np.testing.assert_allclose(mine.numpy(), theirs, rtol=1e-5, atol=1e-4)


def test_partial_blocks_of_a_split_reduction_do_not_share_cache_lines():
    blocks = parallel._partial_blocks((1, 500), np.float32, 2)
    assert blocks.shape == (2, 1, 500)
    first = workers.data_address(blocks)
    second = workers.data_address(blocks[1])
    assert first % 128 == 0 and second % 128 == 0
    assert second - (first + blocks[0].nbytes) >= 128  # a pair of lines between them


def test_cheap_small_kernels_stay_on_one_core():
    x = autojit.tensor(array(128, 256))
    for function in (lambda x: x * 2 + 1, lambda x: ((x * 2 + 1).sum(0), x * 3, x - 1)):
        compiled = autojit.compile(function)
        compiled(x)
        (step,) = compiled.executables[0].plan.steps
        assert step.split is None


def test_costly_kernels_split():
    # Transcendental functions: 128x256 add-tanh took 20 us on one core, 14 us split.
    assert parallel.one_core_ns(_kernel_of(lambda x: (x + 1).tanh(), (128, 256))) > 8000
    assert parallel.one_core_ns(_kernel_of(lambda x: x * 2 + 1, (128, 256))) < 8000


def _kernel_of(function, shape):
    compiled = autojit.compile(function)
    compiled(autojit.tensor(array(*shape)))
    (step,) = compiled.executables[0].plan.steps
    return step.kernel


@needs_two_cores
def test_mid_size_float_products_pair_on_the_workers_and_integer_ones_do_not():
    from autojit.codegen.schedule.matmul_steps import ConcurrentProducts

    def function(a, b, c):
        return a @ b, c @ a  # 128x64x256 and 256x128x64: 2^21 multiply-adds each

    for dtype, paired in ((np.float32, True), (np.float64, True), (np.int64, False)):
        a = autojit.tensor((array(128, 64) * 4).astype(dtype))
        b = autojit.tensor((array(64, 256) * 4).astype(dtype))
        c = autojit.tensor((array(256, 128) * 4).astype(dtype))
        compiled = autojit.compile(function)
        for mine, theirs in zip(compiled(a, b, c), function(a, b, c)):
            # Sums of 64 to 256 terms of up to about 10^2: their float32 rounding (in another
            # order than eager's library product) is relative to the terms, not to the sum.
            scale = np.abs(theirs.numpy()).max()
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5,
                                       atol=4e-6 * scale)
        steps = compiled.executables[0].plan.steps
        assert any(isinstance(step, ConcurrentProducts) for step in steps) is paired


_ONE_CORE_STEP = """
import os
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import numpy as np
import autojit
from autojit.codegen.cpu import program, workers
from autojit.codegen.cpu.gemm import blas
native = workers.shared()
assert native is not None and native.parts == 1 and native.count == 0, native
assert blas.native_gemm(np.float32) and program.available()
rng = np.random.default_rng(0)
a = rng.standard_normal((64, 48)).astype(np.float32)
b = rng.standard_normal((48, 32)).astype(np.float32)
assert np.allclose(blas.matmul(a, b), a @ b, rtol=1e-5, atol=1e-5)

def losses(compiled):
    autojit.manual_seed(0)
    model = autojit.nn.Linear(48, 32)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    def step(x):
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        return loss.detach()
    run = autojit.compile(step) if compiled else step
    values = [run(autojit.tensor(a)).item() for _ in range(4)]
    if compiled:
        assert run.executables[0].plan.program is not None
    return values

np.testing.assert_allclose(losses(True), losses(False), rtol=1e-5)
print("ok")
"""


def test_one_core_runs_the_native_gemm_and_programs():
    """A process limited to one core has workers without threads (one part a job, run by the
    caller), so its products take the native gemm and a compiled step runs as one native
    program, as on more cores: without them a compiled GPT step took 1.7 times as long."""
    result = subprocess.run([sys.executable, "-c", _ONE_CORE_STEP], capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
