"""Matrix products of the CPU backend: compiled plans' products on NumPy's BLAS split over the
cores (blas.py), the ?gemm generated through LLVM (kernel.py, with its packing routines in
packing.py) and its variant reading b packed once (prepacked.py). The schedule's matmul steps
(codegen/schedule/matmul_steps.py) and the native program (program.py) call them; ops/linalg's
matmul is what they compute."""
