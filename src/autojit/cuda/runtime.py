"""The CUDA runtime as the layers below it see it: registered with tensor/device.py as the
runtime of device type "cuda" when autojit.cuda is imported.

tensor/, ops/, interop/ and compiler/ sit below this package and never import it: creating a
tensor on the GPU, `Tensor.to("cuda")`, a compiled update of a CUDA tensor's counter and DLPack
exchange of device memory reach the functions here through `tensor.device.runtime("cuda")`.
"""

from __future__ import annotations

import numpy as np

from .array import CudaArray
from .availability import device_count, driver
from .dlpack import array_interface as cuda_array_interface  # noqa: F401 - the runtime's API
from .dlpack import export as dlpack_export  # noqa: F401
from .dlpack import import_array as cuda_array_import  # noqa: F401
from .dlpack import import_capsule as dlpack_import  # noqa: F401
from .transfer import move  # noqa: F401


def check(index: int) -> None:
    """Raise torch's error when CUDA cannot be used here, or `index` names no device."""
    driver()  # "found no NVIDIA driver" where CUDA is unusable
    if index >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")


def from_host(array: np.ndarray, index: int) -> CudaArray:
    """`array` copied to the memory of device `index`."""
    return CudaArray.from_host(array, index)
