"""autojit.version: what torch.version says about a build, for autojit: `__version__`, `cuda`
(the CUDA runtime's version where a GPU can run CUDA tensors, else None, as on torch's CPU
builds), `hip`, `rocm` and `xpu` (None: autojit has none of them), `debug` and `git_version`
(the commit is not recorded in an installed package: "Unknown", as torch says without one).

`cuda` is looked up when first read, so that importing autojit does not load numba.cuda.
"""

from __future__ import annotations

from .config import VERSION as __version__  # noqa: F401

hip = None
rocm = None
xpu = None
debug = False
git_version = "Unknown"

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]  # noqa: F822


def _cuda_version():
    from . import cuda

    if not cuda.is_available() or cuda.is_simulator():
        return None
    major, minor = cuda.driver().runtime.get_version()
    return f"{major}.{minor}"


def __getattr__(name: str):
    if name == "cuda":
        found = _cuda_version()
        globals()["cuda"] = found
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
