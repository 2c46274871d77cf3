"""The eager object model, the bottom layer: Tensor, dtypes, devices, creation functions,
printing, symbolic sizes and the thread-local state every op dispatch reads.

Nothing here imports another autojit package. Where a tensor needs a higher layer at run time
(its op methods, `backward()`, a GPU's memory), that layer installs a hook at import: ops/
attaches the methods (ops/tensor_methods.py), autograd/ the backward entry point, and a device
runtime (autojit/cuda) registers itself with device.py.
"""
