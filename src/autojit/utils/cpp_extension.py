"""torch.utils.cpp_extension's names, for code that imports them: autojit has no libtorch to
build C++ or CUDA extensions against, so every build raises (an OSError, as torch's build
failures surface) and CUDA_HOME/ROCM_HOME are None, as on a machine without a toolkit.
Libraries that build optional kernels at first use and fall back to Python on failure take
their fallback."""

from __future__ import annotations

CUDA_HOME = None
ROCM_HOME = None
SYCL_HOME = None
IS_HIP_EXTENSION = False
COMMON_NVCC_FLAGS: list = []


class ExtensionBuildError(OSError):
    """Raised by every build: autojit cannot compile torch C++ extensions."""


def _refuse(what: str):
    raise ExtensionBuildError(
        f"torch.utils.cpp_extension.{what}: autojit cannot build torch C++/CUDA extensions "
        "(they compile against libtorch, which autojit does not have)")


def load(name, sources, *args, **kwargs):
    _refuse("load")


def load_inline(name, cpp_sources, *args, **kwargs):
    _refuse("load_inline")


def CppExtension(name, sources, *args, **kwargs):  # noqa: N802 (torch's name)
    _refuse("CppExtension")


def CUDAExtension(name, sources, *args, **kwargs):  # noqa: N802 (torch's name)
    _refuse("CUDAExtension")


class BuildExtension:
    """setuptools' build_ext command class torch provides; refuses to build."""

    def __init__(self, *args, **kwargs):
        _refuse("BuildExtension")

    @classmethod
    def with_options(cls, **options):
        return cls


def include_paths(device_type: str = "cpu") -> list:
    return []


def library_paths(device_type: str = "cpu") -> list:
    return []


def is_ninja_available() -> bool:
    return False


def verify_ninja_availability():
    raise RuntimeError("Ninja is required to load C++ extensions")


def get_compiler_abi_compatibility_and_version():
    return False, None
