"""Host memory for eager arrays: the C heap keeps freed blocks for the next array, as a
caching allocator keeps device memory.

Eager mode allocates a new NumPy array for every op result and frees it soon after. glibc's
malloc serves a block above its mmap threshold (128 KiB at first, rising with use to at most
32 MiB) with a fresh mapping and unmaps it when freed, and gives the free top of its heap
back to the system above a trim threshold: in a training step the next array of that size
is new pages, each faulted in on its first write. On the eager transformer step of
bench/transformer_step.py that was a third of the step (docs/performance.md, "Host memory for
eager arrays"). `keep_freed_memory` raises both thresholds once, at import, so that blocks
up to MMAP_THRESHOLD come from the heap and up to TRIM_THRESHOLD of free heap stays mapped.

The cost is memory the process keeps after its peak (at most TRIM_THRESHOLD of free heap
top); AUTOJIT_HOST_MEMORY=system leaves malloc's settings as they are. Other C libraries (or
none: macOS, Windows, musl without mallopt's parameters) are left alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

MMAP_THRESHOLD = 128 * 1024 * 1024  # bytes: larger blocks are still mapped and unmapped
TRIM_THRESHOLD = 512 * 1024 * 1024  # bytes of free heap top kept mapped
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)

# Whether the thresholds were raised in this process (True), left alone by choice or because
# the C library is not glibc (False), or not yet decided (None).
applied: bool | None = None


def keep_freed_memory() -> bool:
    """Raise glibc malloc's mmap and trim thresholds, once per process, unless
    AUTOJIT_HOST_MEMORY=system; returns whether they are raised."""
    global applied
    if applied is not None:
        return applied
    applied = False
    if os.environ.get("AUTOJIT_HOST_MEMORY", "").strip().lower() == "system":
        return applied
    if not sys.platform.startswith("linux"):
        return applied
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return applied
    # mallopt returns 1 where it took the value, 0 where it refused it.
    applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return applied


_LIBC = None


def libc():
    """The process's C library through ctypes (errno kept), with the prototypes of mmap,
    munmap and mprotect: shared tensors' mappings (sharing.py) and the pages of loaded native
    code (codegen/cpu/native_loader.py)."""
    global _LIBC
    if _LIBC is None:
        library = ctypes.CDLL(None, use_errno=True)
        library.mmap.restype = ctypes.c_void_p
        library.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_long)
        library.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        library.mprotect.restype = ctypes.c_int
        library.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        _LIBC = library
    return _LIBC
