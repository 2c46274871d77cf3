"""The CPU backend: LLVM rendering (render.py, render_reduce.py, llvm_expression.py) with its
vector math (mathlib*.py), the llvmlite JIT and its disk cache (jit.py, disk_cache.py), the
native program that replays a plan's calls (program.py, input_checks.py), matrix products
(blas.py, gemm_kernel.py) and the worker threads (workers.py, parallel.py)."""
