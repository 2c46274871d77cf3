"""The CUDA kernels compiled for a real GPU (PTX for sm_80) on a machine without one.

The other CUDA tests run the kernels' source under Numba's CUDA simulator, which never types
or lowers it, so source that numba.cuda cannot compile for a GPU would pass them. Here, under
the simulator, each op table row's forward runs eagerly on CUDA tensors in every dtype, its
second-order gradient compiled, and two optimizers' training steps compiled, while
tools/cuda_ptx_check.py records every distinct kernel launched (generated and hand-written);
a process without the simulator then compiles each one with numba-cuda's compiler. Skipped
where numba-cuda and NVVM are not installed (`pip install "numba-cuda[cu12]"`); the check over
every CUDA test's kernels, for sm_80 and sm_90, is `python tools/cuda_ptx_check.py`.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest
from cuda_simulator import MARKS, SIMULATED  # before autojit: it enables the simulator
from test_compile_op_table import ROWS, forward_cases, gradient_cases
from test_cuda_op_table import DTYPES

import autojit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import cuda_ptx_check  # noqa: E402

pytestmark = MARKS


def run_quietly(function, tensors) -> None:
    """Run a case for the kernels it launches; its values are checked elsewhere (errors too:
    a case may raise as it does on the CPU)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            function(*tensors)
        except Exception:  # noqa: BLE001, S110 - test_cuda_op_table checks what it raises
            pass


def op_table_workload(recorder) -> None:
    """Each row's forward in each dtype eagerly (one kernel per op), and a differentiable row's
    gradients compiled, to second order where it has one (fused forward and backward kernels)."""
    for row in ROWS:
        for dtype in row.dtypes:
            if dtype not in DTYPES:
                continue
            for where, function, make_tensors in list(forward_cases(row, dtype))[:1]:
                recorder.where = where
                run_quietly(function, make_tensors("cuda"))
        if "float64" in row.dtypes and row.differentiable:
            cases = gradient_cases(row, "float64", second_order=row.gradgrad)
            for where, function, make_tensors in list(cases)[:1]:
                recorder.where = where
                run_quietly(autojit.compile(function, backend="cuda"), make_tensors("cuda"))


def training_workload(recorder) -> None:
    from test_cuda_training import OPTIMIZERS, train

    for name, options in OPTIMIZERS[:2]:
        recorder.where = f"compiled training step with {name}"
        train("cuda", name, options, compiled=True, steps=2)


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                    reason="numba-cuda is not installed (pip install 'numba-cuda[cu12]')")
@pytest.mark.skipif(not SIMULATED, reason="on a GPU every CUDA test compiles its kernels for "
                    "the device itself (this workload's compiles there outlast the device "
                    "check's 120 s a test)")
def test_every_kernel_of_the_op_table_and_a_training_step_compiles_for_a_gpu():
    with cuda_ptx_check.Recorder() as recorder:
        op_table_workload(recorder)
        training_workload(recorder)
    records = list(recorder.records.values())
    hand_written = {record.name for record in records if record.hand_written}
    # The workload reaches the hand-written kernels as well as the generated ones.
    assert {"matmul_kernel", "gather_kernel", "arg_kernel"} <= hand_written, hand_written
    assert len(records) > 300, len(records)
    result = cuda_ptx_check.compile_in_subprocess(records, [(8, 0)], jobs=2)
    if result.returncode == cuda_ptx_check.UNAVAILABLE:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]


def vector_workload() -> None:
    """Elementwise kernels that take the vector path: float32 and float64, a bias broadcast
    over rows, a bool result beside float operands."""
    for dtype in ("float32", "float64"):
        x = autojit.ones(8, 64, dtype=getattr(autojit, dtype), device="cuda")
        bias = autojit.ones(64, dtype=x.dtype, device="cuda")
        (x * 2 + bias).exp()
        assert (x < bias).shape == x.shape


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                    reason="numba-cuda is not installed (pip install 'numba-cuda[cu12]')")
def test_vector_kernels_compile_to_vector_loads_and_stores(tmp_path):
    with cuda_ptx_check.Recorder() as recorder:
        vector_workload()
    records = [record for record in recorder.records.values()
               if "load_vector" in record.source]
    assert len(records) >= 4, [record.source for record in recorder.records.values()]
    result = cuda_ptx_check.compile_in_subprocess(records, [(8, 0)], ptx_directory=tmp_path)
    if result.returncode == cuda_ptx_check.UNAVAILABLE:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    for index, record in enumerate(records):
        ptx = next(tmp_path.glob(f"{index:05d}_*.ptx")).read_text()
        width = 4 if "load_vector4" in record.source else 2
        kind = "f32" if width == 4 else "f64"
        assert f"ld.global.v{width}.{kind}" in ptx, record.source
        if "store_vector" in record.source:
            assert f"st.global.v{width}.{kind}" in ptx, record.source
