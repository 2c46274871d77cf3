"""The float32 fused multiply-add peak of one core: the ceiling on any product's speed here.

A loop of 12 independent chains of 16-lane FMAs (`llvm.fma.v16f32`), compiled through
llvmlite for the host CPU, with nothing loaded or stored inside it: what the core retires
when it does nothing else. docs/performance.md compares the products of the compiled
training steps with it (a product's floor is its flops over this rate, times the cores).
Usage:

    python bench/fma_peak.py [--iterations 20000000] [--repeats 5]

It prints the best of the repeats in GFLOP/s (two flops per lane of each FMA).
"""

from __future__ import annotations

import argparse
import ctypes
import time

CHAINS, LANES = 12, 16  # 12 accumulators hide the FMA latency (4 cycles, 2 pipes: 8 in flight)


def module_text() -> str:
    vector = f"<{LANES} x float>"
    half = "<" + ", ".join(["float 0.5"] * LANES) + ">"
    one = "<" + ", ".join(["float 1.0"] * LANES) + ">"
    lines = ["define void @peak(i64 %n, ptr %out) {", "entry:", "  br label %loop", "loop:",
             "  %i = phi i64 [0, %entry], [%i_next, %loop]"]
    lines += [f"  %acc{c} = phi {vector} [zeroinitializer, %entry], [%next{c}, %loop]"
              for c in range(CHAINS)]
    lines += [f"  %next{c} = call {vector} @llvm.fma.v16f32({vector} %acc{c}, {vector} {half}, "
              f"{vector} {one})" for c in range(CHAINS)]
    lines += ["  %i_next = add i64 %i, 1", "  %done = icmp eq i64 %i_next, %n",
              "  br i1 %done, label %exit, label %loop", "exit:"]
    total = "%next0"
    for c in range(1, CHAINS):  # the sums are stored, so that no chain is dead code
        lines.append(f"  %sum{c} = fadd {vector} {total}, %next{c}")
        total = f"%sum{c}"
    lines += [f"  store {vector} {total}, ptr %out, align 4", "  ret void", "}",
              f"declare {vector} @llvm.fma.v16f32({vector}, {vector}, {vector})"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                           features=llvm.get_host_cpu_features().flatten(),
                                           opt=2)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(module_text()), machine)
    engine.finalize_object()
    peak = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(
        engine.get_function_address("peak"))
    out = (ctypes.c_float * LANES)()
    peak(1000, ctypes.addressof(out))
    best = 0.0
    for _ in range(args.repeats):
        start = time.perf_counter()
        peak(args.iterations, ctypes.addressof(out))
        seconds = time.perf_counter() - start
        best = max(best, args.iterations * CHAINS * LANES * 2 / seconds / 1e9)
    print(f"{llvm.get_host_cpu_name()}: float32 FMA peak of one core {best:.1f} GFLOP/s "
          f"(best of {args.repeats})")


if __name__ == "__main__":
    main()
