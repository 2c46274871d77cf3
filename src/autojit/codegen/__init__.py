"""Code generation: fusion schedule, kernel rendering, CPU (LLVM) and CUDA backends.

Empty until the compiler lands; it consumes the `lowering` field of each op in ops/registry.py.
"""
