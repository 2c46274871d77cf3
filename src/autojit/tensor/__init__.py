"""The eager object model, the bottom layer: Tensor, dtypes, devices, creation functions,
printing, symbolic sizes and the thread-local state every op dispatch reads.

Nothing here imports another autojit package. Where a tensor needs a higher layer at run time
(its op methods, `backward()`, a GPU's memory), that layer installs a hook at import: ops/
attaches the methods (ops/tensor_methods.py), autograd/ the backward entry point, and a device
runtime (autojit/cuda) registers itself with device.py.
"""

# Tensor's methods that read values into Python (values.py) and its __torch_function__
# protocol (torch_function.py) attach themselves to the class, and the meta device's runtime
# (meta_runtime.py) registers itself, above tensor.py: the package imports them, so that any
# import of autojit.tensor has them.
from . import meta_runtime, torch_dispatch, torch_function, values  # noqa: E402, F401
