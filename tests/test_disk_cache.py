"""The kernel cache on disk (codegen/cpu/disk_cache.py and its use in codegen/cpu/jit.py).

Hits are checked in fresh interpreters (the in-memory cache answers within one process) by the
counters cpu.STATISTICS keeps ("compiled": LLVM compiles, "loaded": disk loads), never by time.
Every test points AUTOJIT_CACHE_DIR at its own temporary directory.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

from autojit import config
from autojit.codegen.cpu import disk_cache
from autojit.codegen.cpu import jit as cpu
from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
from autojit.ops.registry import REGISTRY
from autojit.tensor import dtypes

# Three compiled functions, one fused kernel each; prints the counters, the largest difference
# from eager and a digest of the compiled results (equal whether compiled or loaded).
CHILD = """
import hashlib, json, sys
import numpy as np
import autojit
from autojit.codegen.cpu import jit as cpu

functions = [
    autojit.compile(lambda x, y: ((x * y).exp() + 1).sum(dim=1)),
    autojit.compile(lambda x, y: (x - y).tanh() * x),
    autojit.compile(lambda x, y: (x * 0.25 + y).sigmoid() - 3.0),
]
x = autojit.tensor(np.linspace(-2, 2, 40, dtype=np.float32).reshape(5, 8))
y = autojit.tensor(np.linspace(1, -1, 8, dtype=np.float32))
error, digest = 0.0, hashlib.sha256()
for function in functions:
    result = function(x, y).numpy()
    digest.update(result.tobytes())
    error = max(error, float(np.abs(result - function.fn(x, y).numpy()).max()))
print(json.dumps({**cpu.STATISTICS, "error": error, "digest": digest.hexdigest()}))
"""

# Stores one entry and reads it back, many times: run by two processes at once on one key.
HAMMER = """
import sys
from autojit.codegen.cpu import disk_cache
entry = disk_cache.Entry("autojit_hammer", bytes(range(256)) * 64, "; IR " * 1000)
for _ in range(int(sys.argv[1])):
    assert disk_cache.store("k" * 64, entry)
    found = disk_cache.load("k" * 64)
    assert found == entry, found
print("ok")
"""


def run_child(cache, script=CHILD, arguments=(), wait=True, **environment):
    env = {**os.environ, "AUTOJIT_CACHE_DIR": str(cache), **environment}
    process = subprocess.Popen([sys.executable, "-c", script, *arguments], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return finish(process) if wait else process


def finish(process):
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    return stdout


def counters(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def entries(cache):
    return sorted(name for name in os.listdir(cache) if name.startswith(disk_cache.PREFIX))


def key_of(name):
    return name[len(disk_cache.PREFIX):-len(disk_cache.SUFFIX)]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory for this test, in this process and the children it starts."""
    path = tmp_path / "kernels"
    monkeypatch.setenv("AUTOJIT_CACHE_DIR", str(path))
    monkeypatch.delenv("AUTOJIT_DISK_CACHE", raising=False)
    monkeypatch.setattr(disk_cache, "_checked", {})
    return path


def test_second_process_loads_every_kernel_then_damaged_entries_are_compiled_again(cache):
    first = counters(run_child(cache))
    assert (first["compiled"], first["loaded"]) == (3, 0) and first["error"] < 1e-5
    names = entries(cache)
    assert len(names) == 3 and stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    for name in names:
        assert stat.S_IMODE(os.stat(cache / name).st_mode) & 0o077 == 0

    second = counters(run_child(cache))
    assert (second["compiled"], second["loaded"]) == (0, 3)
    assert second["digest"] == first["digest"]

    # Damage each entry another way: truncated, one bit flipped in the code, and a whole,
    # valid entry of another kernel under this kernel's name (a foreign entry).
    contents = [(cache / name).read_bytes() for name in names]
    (cache / names[0]).write_bytes(contents[0][:len(contents[0]) // 2])
    flipped = bytearray(contents[1])
    flipped[len(flipped) // 2] ^= 0x10
    (cache / names[1]).write_bytes(bytes(flipped))
    (cache / names[2]).write_bytes(contents[0])
    third = counters(run_child(cache))
    assert (third["compiled"], third["loaded"]) == (3, 0)
    assert third["digest"] == first["digest"]
    # ... and each was replaced by an intact entry for its own key.
    assert entries(cache) == names
    for name in names:
        entry, problem = disk_cache.decode(key_of(name), (cache / name).read_bytes())
        assert entry is not None, problem


def test_two_processes_compiling_the_same_functions_at_once_both_succeed(cache):
    processes = [run_child(cache, wait=False) for _ in range(2)]
    results = [counters(finish(process)) for process in processes]
    assert all(result["error"] < 1e-5 for result in results)
    assert results[0]["digest"] == results[1]["digest"]
    assert all(result["compiled"] + result["loaded"] == 3 for result in results)
    names = entries(cache)
    assert len(names) == 3 and not [n for n in os.listdir(cache) if n.startswith(".tmp")]
    for name in names:
        assert disk_cache.decode(key_of(name), (cache / name).read_bytes())[0] is not None


def test_concurrent_writers_and_readers_never_see_a_partial_entry(cache):
    processes = [run_child(cache, HAMMER, ["150"], wait=False) for _ in range(2)]
    assert [finish(process).strip() for process in processes] == ["ok", "ok"]
    assert os.listdir(cache) == [f"{disk_cache.PREFIX}{'k' * 64}{disk_cache.SUFFIX}"]


ENTRY = disk_cache.Entry("autojit_k_0123", b"\x7fELF" + bytes(range(200)), "define i32 @k()")


def test_entry_round_trip_and_every_damage_is_refused():
    data = disk_cache.encode("a" * 64, ENTRY)
    assert disk_cache.decode("a" * 64, data) == (ENTRY, "")
    damaged = {
        "magic": b"X" + data[1:],
        "truncated": data[:-1],
        "cut to the header": data[:len(disk_cache.MAGIC) + 40],
        "empty": b"",
        "checksum": data[:len(disk_cache.MAGIC)] + bytes(32) + data[len(disk_cache.MAGIC) + 32:],
        "payload bit": data[:-3] + bytes([data[-3] ^ 1]) + data[-2:],
        "appended": data + b"\0",
    }
    for what, bad in damaged.items():
        entry, problem = disk_cache.decode("a" * 64, bad)
        assert entry is None and problem, what
    entry, problem = disk_cache.decode("b" * 64, data)  # foreign: whole, but another key's
    assert entry is None and "another key" in problem


def test_load_refuses_a_damaged_file_and_store_replaces_it(cache):
    key = "c" * 64
    assert disk_cache.store(key, ENTRY)
    path = cache / f"{disk_cache.PREFIX}{key}{disk_cache.SUFFIX}"
    assert disk_cache.load(key) == ENTRY
    path.write_bytes(path.read_bytes()[:-10])
    assert disk_cache.load(key) is None
    assert disk_cache.store(key, ENTRY) and disk_cache.load(key) == ENTRY
    assert disk_cache.load("d" * 64) is None  # missing


def fresh_kernel(literal):
    """A kernel no other test compiles (its literal differs), so the caches start cold."""
    float32 = dtypes.float32
    step = Step(REGISTRY["add"], (Operand("input", 0), Operand("literal", literal)), {}, None,
                float32)
    return Kernel("disk_test", (7,), [KernelInput(float32, (1,))], [step],
                  [KernelOutput(0, float32)])


def test_compile_kernel_stores_an_entry_and_inspection_works_from_an_entry(cache):
    before = dict(cpu.STATISTICS)
    compiled = cpu.compile_kernel(fresh_kernel(0.8125))
    assert cpu.STATISTICS["compiled"] == before["compiled"] + 1
    (name,) = entries(cache)
    entry = disk_cache.load(key_of(name))
    assert entry.symbol == compiled.symbol and entry.llvm_ir == compiled.llvm_ir
    assert entry.object_code == compiled.object_code()
    # A kernel built from an entry re-derives its optimized IR for inspection.
    loaded = cpu.CompiledKernel(compiled.kernel, entry.symbol, None, entry.llvm_ir, None, 0.0,
                                None, source="disk")
    assert "define" in loaded.optimized_ir and loaded.optimized_ir != loaded.llvm_ir
    x = np.arange(7, dtype=np.float32)
    out = np.empty(7, np.float32)
    compiled([x], [out])
    assert np.array_equal(out, x + np.float32(0.8125))


def test_new_directory_is_owner_only(cache):
    old = os.umask(0)
    try:
        assert disk_cache.directory() == str(cache)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_directory_open_to_others_is_refused_with_one_warning(cache):
    cache.mkdir(mode=0o755)
    os.chmod(cache, 0o755)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert disk_cache.directory() is None
        assert disk_cache.directory() is None
        compiled = cpu.compile_kernel(fresh_kernel(0.6875))
    assert [w.category for w in caught] == [disk_cache.DiskCacheWarning]
    assert "0o755" in str(caught[0].message) and str(cache) in str(caught[0].message)
    assert compiled.source == "compiled" and os.listdir(cache) == []
    assert not disk_cache.store("e" * 64, ENTRY)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a directory to another user needs root")
def test_directory_of_another_user_is_refused(cache):
    cache.mkdir(mode=0o700)
    os.chown(cache, 4321, -1)
    with pytest.warns(disk_cache.DiskCacheWarning, match="owned by another user"):
        assert disk_cache.directory() is None


def test_disabled_by_environment(cache, monkeypatch):
    monkeypatch.setenv("AUTOJIT_DISK_CACHE", "0")
    assert disk_cache.directory() is None
    compiled = cpu.compile_kernel(fresh_kernel(0.5625))
    assert compiled.source == "compiled" and not cache.exists()


def test_clear_removes_entries_only(cache):
    assert disk_cache.store("f" * 64, ENTRY)
    (cache / "notes.txt").write_text("kept")
    assert disk_cache.clear() == 1
    assert os.listdir(cache) == ["notes.txt"]


def test_suite_does_not_use_the_user_cache_directory():
    directory = os.environ["AUTOJIT_CACHE_DIR"]
    assert os.path.basename(directory).startswith("autojit-test-cache-")
    assert config.cache_dir() == directory


def test_every_cpu_code_generator_is_in_the_fingerprint():
    """A change to any module of codegen/cpu (the math library's among them) changes the key of
    every cached kernel; the fingerprint once named mathlib by a path it had moved from."""
    from pathlib import Path

    root = Path(disk_cache.__file__).resolve().parent
    hashed = set(disk_cache.fingerprinted_sources())
    modules = {f"codegen/cpu/{path.relative_to(root).as_posix()}" for path in root.rglob("*.py")}
    assert "codegen/cpu/mathlib/__init__.py" in modules and modules <= hashed
