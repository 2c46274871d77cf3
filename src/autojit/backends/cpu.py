"""autojit.backends.cpu: what the CPU autojit's kernels are compiled for can do."""

from __future__ import annotations

import functools


@functools.cache
def get_cpu_capability() -> str:
    """The widest vector instructions autojit's CPU kernels use here, in torch's words:
    "AVX512" (with AVX-512 F, BW, VL and DQ), "AVX2" (with AVX2 and FMA), or "DEFAULT" (an
    x86 CPU without them, or another architecture)."""
    import llvmlite.binding as llvm

    features = {name for name, on in llvm.get_host_cpu_features().items() if on}
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= features:
        return "AVX512"
    if {"avx2", "fma"} <= features:
        return "AVX2"
    return "DEFAULT"
