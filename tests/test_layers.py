"""The package's layers hold: `lint-imports` checks the import-linter contracts of
pyproject.toml (imports inside functions included), and the registration hooks that let a lower
layer reach a higher one at run time are installed by the time `import autojit` returns.

Skipped where import-linter is not installed (the test extra installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import autojit
from autojit.compiler import backends
from autojit.ops import registry
from autojit.tensor import device
from autojit.tensor.tensor import Tensor

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or \
        shutil.which("lint-imports")
    if command is None:
        pytest.skip("import-linter is not installed (pip install '.[test]' installs it)")
    result = subprocess.run([command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_hooks_are_installed_at_import():
    from autojit.autograd.api import backward
    from autojit.autograd.graph import record

    assert registry.RECORD is record
    assert Tensor._backward is backward
    assert device.runtime("cuda").__name__ == "autojit.cuda.runtime"
    assert {"cpu", "cuda"} <= set(backends._MODULES)
    from autojit import codegen, config

    assert codegen._threads_changed in config.THREAD_LISTENERS
    from autojit.codegen.cpu import convolution as native_convolution
    from autojit.codegen.cpu import eager_math
    from autojit.ops.nn import convolution

    # the first call's import puts the routine itself in the slot (codegen/__init__.py)
    assert convolution.NATIVE in (codegen._native_convolution, native_convolution.eager)
    from autojit.ops.elementwise import native_math

    assert native_math.NATIVE in (codegen._native_math, eager_math.unary)
    from autojit.compiler import api
    from autojit.nn import optimized_module

    assert optimized_module._wrap_module in api.MODULE_WRAPPERS
    from autojit.distributed.transport import Transport
    from autojit.ops import collective

    assert isinstance(collective.TRANSPORT, Transport)
    from autojit.ops import aten

    # nn's aten entry points, which the aten namespace imports through its LOADERS on a miss
    assert aten.native_layer_norm.default.name() == "aten::native_layer_norm"


def test_hooks_inside_packages_are_installed_when_the_package_is_imported():
    """tensor/, autograd/ and cuda/ are layered inside too (their contracts in pyproject.toml):
    a module that needs one above it in its package reaches it through a hook that the higher
    module installs, and the package's __init__ imports that module (docs/notes/layers.md)."""
    from autojit.tensor import meta_runtime, torch_function, values

    assert Tensor._arm_subclass is torch_function.arm
    assert Tensor.numpy is values.numpy
    assert device.runtime("meta") is meta_runtime
    import autojit.cuda
    from autojit.cuda import availability, conversions, eager, views
    from autojit.cuda.array import CudaArray

    assert (CudaArray._dispatch, CudaArray._add_arrays) == (eager.dispatch, eager.add_arrays)
    assert (CudaArray._convert_array, CudaArray._fill_array) == \
        (conversions.convert_array, conversions.fill_array)
    assert (CudaArray._refresh_view, CudaArray._write_through) == \
        (views.refresh, views.write_through)
    assert autojit.cuda._add_device_dispatch in availability._ON_FIRST_USE


def test_importing_autojit_loads_no_code_generator_library():
    # small arrays' exp and tanh are NumPy's: no native loop is made
    # (ops/elementwise/native_math.py)
    code = ("import sys, autojit; x = autojit.ones(2, requires_grad=True); "
            "(x.exp().tanh() * 2).sum().backward(); print(sorted(m for m in ('llvmlite', "
            "'numba', 'autojit.codegen.cpu.eager_math') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.strip() == "[]"


def test_importing_autojit_loads_the_layers_above_autograd_and_scipy_on_first_use():
    """`import autojit` loads tensors, ops and autograd; nn (with torch's top-level forms of its
    ops, autojit.conv2d), optim and SciPy load when first used."""
    code = ("import sys, autojit; x = autojit.ones(2, 3, requires_grad=True); "
            "(x * 2).sum().backward(); "
            "loaded = lambda: sorted(m for m in ('autojit.nn', 'autojit.optim', 'scipy') "
            "if m in sys.modules); before = loaded(); x.detach().hardshrink(); "
            "autojit.conv2d(autojit.ones(1, 1, 3, 3), autojit.ones(1, 1, 2, 2)); "
            "autojit.linalg.lu_factor(autojit.eye(2)); print(before, 'autojit.nn' in sys.modules, "
            "'scipy' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.strip() == "[] True True"


def test_importing_autojit_loads_no_mpi():
    """mpi4py (the extra autojit[distributed]) is imported only when an MPI group is made; a
    world of one process needs none."""
    code = ("import sys, autojit, autojit.distributed as dist; dist.init_process_group(); "
            "t = autojit.ones(2); dist.all_reduce(t); "
            "print('mpi4py' in sys.modules, dist.get_backend())")
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                  "MV2_COMM_WORLD_RANK", "MPI_LOCALRANKID", "PMI_FD")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True, env=environment)
    assert result.stdout.strip() == "False local"


def test_an_unknown_backend_is_named():
    with pytest.raises(RuntimeError, match="no backend named 'tpu'.*registered: .*cpu"):
        backends.load("tpu")
    assert autojit.compile  # the public entry point is unaffected
