"""autojit.backends: the switches torch.backends has, that programs read and set before they start
(`autojit.backends.cudnn.benchmark = True`, `backends.mps.is_available()`).

Each answers for autojit's devices: there is no MPS backend, no cuDNN (autojit's CUDA kernels are
its own), no oneDNN, MKL or OpenMP (its CPU kernels are its own too), and float32 products are
computed in float32 whatever the matmul precision says. The flags are accepted, type-checked as
torch checks them and readable. This package holds settings only, at the bottom layer beside
config.py: nothing here imports the rest of autojit.
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum, quantized  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum", "quantized"]
