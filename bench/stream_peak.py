"""The memory bandwidth of one core, STREAM's copy and triad: the ceiling on an elementwise kernel.

Two loops over float64 arrays, compiled through llvmlite for the host CPU as bench/fma_peak.py
compiles its FMA loop: copy (`a[i] = b[i]`) and triad (`a[i] = b[i] + s * c[i]`), each
vectorized by LLVM's loop vectorizer at O3. Bytes are counted as STREAM counts them, what the
loop names (copy 16 bytes an element, triad 24), not the cache lines a store first reads. An
elementwise kernel that reads its inputs once and writes its outputs once cannot beat triad's
rate at the same footprint; bench/compiled_elementwise.py and bench/func_transforms.py print
their bytes / time beside these ceilings (`ceilings`). Usage:

    python bench/stream_peak.py [--megabytes 8,64,256] [--repeats 10]

For each size (of one array) it prints the best of the repeats in GB/s, one thread.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import time

import numpy as np

MODULE = """
define void @copy(ptr noalias %a, ptr noalias %b, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pb = getelementptr inbounds double, ptr %b, i64 %i
  %x = load double, ptr %pb, align 8
  %pa = getelementptr inbounds double, ptr %a, i64 %i
  store double %x, ptr %pa, align 8
  %next = add nuw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define void @triad(ptr noalias %a, ptr noalias %b, ptr noalias %c, double %s, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pb = getelementptr inbounds double, ptr %b, i64 %i
  %pc = getelementptr inbounds double, ptr %c, i64 %i
  %x = load double, ptr %pb, align 8
  %y = load double, ptr %pc, align 8
  %sy = fmul double %s, %y
  %z = fadd double %x, %sy
  %pa = getelementptr inbounds double, ptr %a, i64 %i
  store double %z, ptr %pa, align 8
  %next = add nuw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


@functools.lru_cache(maxsize=1)
def _loops():
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                           features=llvm.get_host_cpu_features().flatten(),
                                           opt=3)
    module = llvm.parse_assembly(MODULE)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.loop_interleaving = True
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    pointer = ctypes.c_void_p
    copy = ctypes.CFUNCTYPE(None, pointer, pointer, ctypes.c_int64)(
        engine.get_function_address("copy"))
    triad = ctypes.CFUNCTYPE(None, pointer, pointer, pointer, ctypes.c_double, ctypes.c_int64)(
        engine.get_function_address("triad"))
    return engine, copy, triad


def ceilings(array_bytes: int, repeats: int = 10) -> dict:
    """{"copy": GB/s, "triad": GB/s}: the best of `repeats` runs over float64 arrays of
    `array_bytes` bytes each (one thread; the arrays written once first, so that no page is
    first touched while timed)."""
    _, copy, triad = _loops()
    n = max(array_bytes // 8, 1)
    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    address = [array.ctypes.data for array in (a, b, c)]
    runs = {"copy": (lambda: copy(address[0], address[1], n), 16 * n),
            "triad": (lambda: triad(address[0], address[1], address[2], 3.0, n), 24 * n)}
    best = {}
    for name, (run, moved) in runs.items():
        run()
        fastest = min(_seconds(run) for _ in range(repeats))
        best[name] = moved / fastest / 1e9
    assert np.all(a == 7.0), "triad computed something else"
    return best


def _seconds(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", default="8,64,256",
                        help="sizes of one array, in MB (8,64,256)")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    import llvmlite.binding as llvm

    print(f"{llvm.get_host_cpu_name()}: one core, float64, best of {args.repeats}")
    print(f"  {'MB per array':>12} {'copy GB/s':>10} {'triad GB/s':>11}")
    for megabytes in args.megabytes.split(","):
        rates = ceilings(int(float(megabytes) * 1e6), args.repeats)
        print(f"  {megabytes:>12} {rates['copy']:10.1f} {rates['triad']:11.1f}")


if __name__ == "__main__":
    main()
