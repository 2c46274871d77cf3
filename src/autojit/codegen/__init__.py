"""Code generation, below the device runtimes and above the compiler: what a kernel is
(kernel.py), the expression templates of the registry's elementwise ops (expression.py), the
fusion schedule and step plan (schedule/), and the CPU (cpu/, through LLVM) and CUDA (cuda/,
through numba.cuda) backends. See docs/notes/cpu-codegen.md and docs/notes/cuda.md.
"""

from ..compiler import backends

backends.register("cpu", __name__ + ".backend")
