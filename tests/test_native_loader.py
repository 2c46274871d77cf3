"""Object files loaded without LLVM (codegen/cpu/native_loader.py) and warm starts that never
start LLVM (jit.cache_target's record of the host)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import disk_cache, native_loader
from autojit.codegen.cpu import jit as cpu

pytestmark = pytest.mark.skipif(not native_loader.available(),
                                reason="the native loader is for Linux on x86-64")


def _object(text: str) -> bytes:
    state = cpu.backend()
    module = state.parse(text)
    module.verify()
    return state.target_machine.emit_object(module)


ADD = """
@table = internal constant [4 x double] [double 1.5, double 2.5, double 3.5, double 4.5]
@counter = internal global i64 0
declare ptr @memset(ptr, i32, i64)

define double @pick(i64 %i) {
  %p = getelementptr [4 x double], ptr @table, i64 0, i64 %i
  %v = load double, ptr %p
  ret double %v
}

define i64 @count() {
  %c = load i64, ptr @counter
  %n = add i64 %c, 1
  store i64 %n, ptr @counter
  ret i64 %n
}

define void @clear(ptr %p, i64 %n) {
  call ptr @memset(ptr %p, i32 0, i64 %n)
  ret void
}
"""


def test_loads_code_constants_data_and_process_symbols():
    loaded = native_loader.load(_object(ADD))
    import ctypes

    pick = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int64)(loaded.address("pick"))
    count = ctypes.CFUNCTYPE(ctypes.c_int64)(loaded.address("count"))
    clear = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(loaded.address("clear"))
    assert [pick(i) for i in range(4)] == [1.5, 2.5, 3.5, 4.5]
    assert [count(), count(), count()] == [1, 2, 3]  # writable data stays writable
    array = np.ones(100)
    clear(array.ctypes.data, 80)
    assert array[:10].sum() == 0 and array[10:].sum() == 90
    with pytest.raises(KeyError):
        loaded.address("table")  # internal: not exported


def test_refuses_what_it_does_not_handle():
    with pytest.raises(native_loader.Unsupported):
        native_loader.load(b"not an object file" * 10)
    data = bytearray(_object(ADD))
    struct.pack_into("<H", data, 18, 183)  # e_machine: aarch64
    with pytest.raises(native_loader.Unsupported, match="machine"):
        native_loader.load(bytes(data))
    missing = _object("declare void @autojit_no_such_symbol()\n"
                      "define void @f() {\n call void @autojit_no_such_symbol()\n ret void\n}")
    with pytest.raises(native_loader.Unsupported, match="autojit_no_such_symbol"):
        native_loader.load(missing)


def test_cpuid_names_the_vendor_and_the_signature_is_stable():
    registers = native_loader.cpuid(0)
    vendor = struct.pack("<III", registers[1], registers[3], registers[2]).decode()
    with open("/proc/cpuinfo") as handle:
        assert vendor in handle.read()
    assert native_loader.host_signature() == native_loader.host_signature()


def test_remembered_target_is_what_llvm_detects(tmp_path, monkeypatch):
    """A process that has not started LLVM keys the disk cache by the remembered target; it
    must equal the target LLVM detects (in a fresh process, which remembers, then another,
    which reads the record, then LLVM started in that one)."""
    script = """
import json, sys
from autojit.codegen.cpu import jit as cpu
remembered = cpu.cache_target()
started = 'llvmlite.binding' in sys.modules
print(json.dumps({"remembered": repr(remembered), "started": started,
                  "detected": repr(cpu.backend().target)}))
"""
    env = {**os.environ, "AUTOJIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("AUTOJIT_DISK_CACHE", None)
    runs = []
    for _ in range(2):
        completed = subprocess.run([sys.executable, "-c", script], env=env, text=True,
                                   capture_output=True, check=True)
        runs.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    assert runs[0]["started"] and not runs[1]["started"]
    assert runs[1]["remembered"] == runs[1]["detected"] == runs[0]["detected"]
    records = [name for name in os.listdir(tmp_path / "cache")
               if name.startswith(disk_cache.RECORD_PREFIX)]
    assert len(records) == 1


WARM = """
import json, sys
import numpy as np
import autojit
from autojit.codegen.cpu import jit as cpu
x = autojit.tensor(np.linspace(-3, 3, 600, dtype=np.float32).reshape(20, 30))
w = autojit.tensor(np.linspace(1, 2, 30, dtype=np.float32), requires_grad=True)
def step(x):
    loss = ((x * w).tanh().exp() - 1.0).sum()
    loss.backward()
    return loss.detach(), w.grad
f = autojit.compile(step)
loss, grad = f(x)
w.grad = None
eager_loss, eager_grad = step(x)
print(json.dumps({"compiled": cpu.STATISTICS["compiled"], "loaded": cpu.STATISTICS["loaded"],
                  "llvm": "llvmlite.binding" in sys.modules,
                  "loss": float(loss), "eager": float(eager_loss),
                  "grad": float(np.abs(grad.numpy() - eager_grad.numpy()).max())}))
"""


def test_warm_process_loads_every_kernel_without_llvm(tmp_path):
    env = {**os.environ, "AUTOJIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("AUTOJIT_DISK_CACHE", None)
    results = []
    for _ in range(2):
        completed = subprocess.run([sys.executable, "-c", WARM], env=env, text=True,
                                   capture_output=True, check=True)
        results.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    cold, warm = results
    assert cold["compiled"] > 0 and cold["llvm"]
    assert warm["compiled"] == 0 and warm["loaded"] == cold["compiled"]
    assert not warm["llvm"]
    for run in results:
        assert run["loss"] == pytest.approx(run["eager"], rel=1e-5) and run["grad"] < 1e-4


def test_kernels_compiled_in_this_process_run_from_loaded_code(monkeypatch):
    monkeypatch.setenv("AUTOJIT_DISK_CACHE", "0")
    f = autojit.compile(lambda x: (x.sin() * 3).sum(dim=0))
    x = autojit.tensor(np.linspace(0, 1, 64, dtype=np.float64).reshape(8, 8))
    np.testing.assert_allclose(f(x).numpy(), (np.sin(x.numpy()) * 3).sum(axis=0), rtol=1e-12)
    # A small kernel's code is a generic kernel's (jit.shares_small_code), bound to its sizes.
    kernels = [step.compiled.compiled if isinstance(step.compiled, cpu.SizedKernel)
               else step.compiled for step in f.executables[0].plan.steps
               if hasattr(step, "compiled")]
    assert kernels and all(isinstance(k, cpu.CompiledKernel) for k in kernels)
    assert all(isinstance(k._module, native_loader.LoadedObject) for k in kernels)
    assert "define" in kernels[0].optimized_ir  # made again when asked for
