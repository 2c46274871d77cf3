"""The CUDA code generator: kernels rendered to numba.cuda Python source (render.py lays out the
loops, expression.py writes each step's expression) with vector loads and stores (vector.py),
compiled into kernel functions by jit.py. The device runtime that owns CUDA memory and launches
the kernels (autojit/cuda) sits above this package and uses it."""
