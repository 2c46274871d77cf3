"""The CPU backend: LLVM rendering (render.py, render_reduce.py, llvm/) with its vector math
(mathlib/), the llvmlite JIT and its disk cache (jit.py, disk_cache.py), the native program
that replays a plan's calls (program.py, input_checks.py), matrix products (gemm/), native
convolutions (convolution/) and the worker threads (workers.py, parallel.py)."""
