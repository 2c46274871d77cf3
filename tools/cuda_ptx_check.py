"""Compile the CUDA kernels a workload launches for a real GPU, on a machine without one.

Numba's CUDA simulator runs the kernels' Python source as Python, so the CUDA tests never show
whether numba.cuda can compile that source for a GPU: typing, lowering and NVVM are never run.
This tool closes that gap without a GPU. It runs a workload under the simulator, records each
distinct kernel launched (the generated ones re-rendered for a GPU's block and grid sizes, and
the hand-written ones) with the numba types of the arguments it was launched with, then, in a
process without the simulator, compiles every record to PTX with numba-cuda's compiler
(`cuda.compile_ptx`), which needs numba-cuda and NVVM (`pip install "numba-cuda[cu12]"`) but
no driver or device.

    python tools/cuda_ptx_check.py                       # the kernels of the CUDA test modules
    python tools/cuda_ptx_check.py tests/test_cuda.py    # of chosen pytest arguments
    python tools/cuda_ptx_check.py --cc 9.0 --jobs 2
    python tools/cuda_ptx_check.py --ptx /tmp/ptx        # and keep each kernel's PTX

It prints the number of kernels compiled and each failure with its source, and exits 1 when
one fails, 3 when numba-cuda's compiler is missing. tests/test_cuda_ptx.py runs it on a small
workload. See docs/notes/cuda.md.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNAVAILABLE = 3  # exit status: numba-cuda or NVVM is not installed
NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


@dataclass
class KernelRecord:
    """One kernel to compile: its Python source, the function's name, and what defines the
    namespace it runs in: `hand_written` (name, dtype, device functions) or None for a
    generated kernel; `signature` holds the numba types of the launch's arguments."""

    name: str
    source: str
    signature: tuple
    hand_written: tuple | None = None
    where: str = ""


@dataclass
class Recorder:
    """While active (`with Recorder() as recorder:`), every CUDA kernel launch is recorded
    once per (source with its numbers masked, argument types)."""

    records: dict = field(default_factory=dict)
    where: str = ""
    _undo: list = field(default_factory=list)

    def __enter__(self) -> Recorder:
        import numpy as np

        from autojit.codegen.cuda import jit as generated
        from autojit.cuda import handwritten, indexing, kernels, matmul, views

        recorder = self
        launch = kernels.CudaCompiledKernel.__call__

        def call(kernel, inputs, outputs, status=None):
            if kernel._launch is not None:
                rendered = generated.render_for(kernel.kernel, kernel.rendered.name,
                                                simulated=False)
                # The GPU's launch adds the float64 arrays of its own split sums.
                wide = [np.empty(1, np.float64)] * len(rendered.wide)
                arguments = kernel.arguments(inputs, outputs, wide, status)
                recorder.add(KernelRecord(rendered.name, rendered.source,
                                          _signature(arguments)))
            return launch(kernel, inputs, outputs, status)

        original = handwritten.hand_written

        def hand_written(name, source, dtype=None, devices=()):
            function, tile = original(name, source, dtype, devices)
            definition = (name, None if dtype is None else str(dtype), tuple(devices))
            return _RecordedKernel(recorder, function, source, definition), tile

        self._undo = [(kernels.CudaCompiledKernel, "__call__", launch),
                      (matmul, "hand_written", original), (indexing, "hand_written", original),
                      (kernels, "hand_written", original), (views, "hand_written", original)]
        kernels.CudaCompiledKernel.__call__ = call
        matmul.hand_written = indexing.hand_written = kernels.hand_written = hand_written
        views.hand_written = hand_written
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, value in self._undo:
            setattr(owner, name, value)

    def add(self, record: KernelRecord) -> None:
        # Kernels that differ only in their numbers (extents, strides, the counter in a
        # generated kernel's name) type and lower alike: one of them is compiled.
        key = (NUMBER.sub("N", record.source.replace(record.name, "kernel")), record.signature)
        if key not in self.records:
            record.where = self.where
            self.records[key] = record


class _RecordedKernel:
    """A hand-written kernel whose launches are recorded: `kernel[grid, block](*args)`."""

    def __init__(self, recorder: Recorder, function, source: str, definition: tuple):
        self.recorder, self.function = recorder, function
        self.source, self.definition = source, definition

    def __getitem__(self, configuration):
        launch = self.function[configuration]

        def run(*args):
            self.recorder.add(KernelRecord(self.definition[0], self.source, _signature(args),
                                           self.definition))
            return launch(*args)

        return run


def _signature(args) -> tuple:
    """The numba types a GPU launch would give these arguments: device arrays are C-contiguous
    arrays of their dtype (autojit's are flat), scalars and tuples are typed as numba does."""
    import numba
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support

    found = []
    for arg in args:
        if hasattr(arg, "shape") and not isinstance(arg, (tuple, np.generic)):
            found.append(types.Array(numpy_support.from_dtype(arg.dtype), len(arg.shape), "C"))
        else:
            found.append(numba.typeof(arg))
    return tuple(found)


# ---- compiling the records (a process without the simulator) -----------------------------------

def _fake_device(cc: tuple) -> None:
    """numba-cuda asks the current device for its compute capability when a kernel calls a
    device function; there is no device here, so answer with the target's."""
    from numba.cuda import dispatcher

    class Device:
        compute_capability = cc

    dispatcher.get_current_device = Device


def compile_record(record: KernelRecord, cc: tuple) -> str:
    """The record compiled to PTX for compute capability `cc` (raises what numba raises)."""
    from numba import cuda

    from autojit.codegen.cuda import jit as generated
    from autojit.cuda import handwritten

    if record.hand_written is None:
        function = generated.kernel_function(record.source, record.name, cuda, simulated=False)
    else:
        name, dtype, devices = record.hand_written
        function, _ = handwritten.hand_written_function(cuda, False, name, record.source,
                                                        dtype, devices)
    ptx, _ = cuda.compile_ptx(function, record.signature, cc=cc)
    return ptx


def _compile_one(job):
    index, record, cc, ptx_directory = job
    _fake_device(cc)
    try:
        ptx = compile_record(record, cc)
    except Exception:  # noqa: BLE001 - every failure is reported, with its traceback
        return index, cc, traceback.format_exc(limit=4)
    if ptx_directory is not None:
        name = f"{index:05d}_{record.name}_sm_{cc[0]}{cc[1]}.ptx"
        Path(ptx_directory, name).write_text(ptx)
    return index, cc, None


def compiler_available() -> bool:
    try:
        from numba import config, cuda, types
    except ImportError:
        return False
    if config.ENABLE_CUDASIM:
        return False

    def probe(x):
        x[0] = 1.0

    try:
        cuda.compile_ptx(probe, (types.float32[::1],), cc=(8, 0))
    except Exception:  # noqa: BLE001 - no NVVM, no numba-cuda: cannot compile here
        return False
    return True


def compile_all(records: list, ccs: list, jobs: int, ptx_directory: str | None = None) -> list:
    """[(record, cc, traceback)] for each record that fails to compile for a cc; the PTX of
    the others is written to `ptx_directory` when given (NNNNN_name_sm_XY.ptx, NNNNN the
    record's position)."""
    work = [(index, record, cc, ptx_directory) for index, record in enumerate(records)
            for cc in ccs]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_compile_one, work, chunksize=8)
    else:
        results = [_compile_one(job) for job in work]
    return [(records[index], cc, error) for index, cc, error in results if error]


def _compile_main(path: str, ccs: list, jobs: int, ptx_directory: str | None) -> int:
    if not compiler_available():
        print("numba-cuda's compiler (NVVM) is not available: pip install 'numba-cuda[cu12]'")
        return UNAVAILABLE
    with open(path, "rb") as file:
        records = pickle.load(file)  # noqa: S301 - written by this tool a moment ago
    start = time.perf_counter()
    failures = compile_all(records, ccs, jobs, ptx_directory)
    for record, cc, error in failures:
        print(f"\n---- {record.name} for sm_{cc[0]}{cc[1]} ({record.where})\n{record.source}\n"
              f"{error}")
    targets = ", ".join(f"sm_{major}{minor}" for major, minor in ccs)
    print(f"{len(records)} kernels compiled to PTX for {targets}: {len(failures)} failed "
          f"({time.perf_counter() - start:.1f} s)")
    return 1 if failures else 0


def compile_in_subprocess(records: list, ccs: list, jobs: int = 1,
                          ptx_directory: str | None = None) -> subprocess.CompletedProcess:
    """Compile the records in a fresh process without the simulator (its output captured)."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "records.pickle")
        with open(path, "wb") as file:
            pickle.dump(records, file)
        return _compile_subprocess(path, ccs, jobs, capture=True, ptx_directory=ptx_directory)


def _compile_subprocess(path: str, ccs: list, jobs: int, capture: bool,
                        ptx_directory: str | None = None):
    environment = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    command = [sys.executable, __file__, "--compile", path, "--jobs", str(jobs)]
    if ptx_directory is not None:
        command += ["--ptx", str(ptx_directory)]
    for major, minor in ccs:
        command += ["--cc", f"{major}.{minor}"]
    return subprocess.run(command, env=environment, capture_output=capture, text=True,
                          check=False)


# ---- recording a pytest run (a process with the simulator) -------------------------------------

class _RecordingPlugin:
    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def pytest_runtest_setup(self, item):
        self.recorder.where = item.nodeid


def _record_main(path: str, pytest_args: list) -> int:
    import pytest

    sys.path.insert(0, str(ROOT / "tests"))
    import cuda_simulator  # noqa: F401 - enables the simulator before autojit uses numba.cuda

    with Recorder() as recorder:
        status = pytest.main([*pytest_args, "-q", "-p", "no:cacheprovider"],
                             plugins=[_RecordingPlugin(recorder)])
    with open(path, "wb") as file:
        pickle.dump(list(recorder.records.values()), file)
    print(f"recorded {len(recorder.records)} kernels")
    return int(status)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cc", action="append", default=[],
                        help="compute capability to compile for (default 8.0 and 9.0)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ptx", help="write each kernel's PTX into this directory")
    parser.add_argument("--record", help=argparse.SUPPRESS)
    parser.add_argument("--compile", help=argparse.SUPPRESS)
    options, pytest_args = parser.parse_known_args(argv)
    ccs = [tuple(int(part) for part in cc.split(".")) for cc in options.cc] or [(8, 0), (9, 0)]
    if options.record:
        return _record_main(options.record, pytest_args)
    if options.compile:
        return _compile_main(options.compile, ccs, options.jobs, options.ptx)
    pytest_args = pytest_args or sorted(str(path.relative_to(ROOT))
                                        for path in (ROOT / "tests").glob("test_cuda*.py")
                                        if path.name != "test_cuda_ptx.py")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "records.pickle")
        environment = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
        recorded = subprocess.run([sys.executable, __file__, "--record", path, *pytest_args],
                                  env=environment, cwd=ROOT, check=False)
        if recorded.returncode != 0:
            print(f"the recorded workload failed (exit {recorded.returncode})")
            return recorded.returncode
        return _compile_subprocess(path, ccs, options.jobs, capture=False,
                                   ptx_directory=options.ptx).returncode


if __name__ == "__main__":
    sys.exit(main())
