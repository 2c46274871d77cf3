"""Counts of the host work on the CUDA launch path, for tests and benchmarks.

Every launch of a kernel (generated or hand-written, and each cuBLAS product through CuPy),
every synchronising copy from the device to the host (a status word, `.item()`, `.cpu()`),
every copy from the host to the device and every device-to-device copy adds one here; the
caching allocator counts its new buffers in `memory_stats()["allocated"]`. `snapshot()` reads
them all at once, so a test or a benchmark takes the difference over one compiled step:
bench/cuda_steps.py reports it as kernels per step, tests/test_cuda_launch_cost.py holds the
MLP step to the figures in docs/notes/cuda.md. Each count is one integer addition: cheap next
to the launch it counts.
"""

from __future__ import annotations

from .allocator import memory_stats

# launches: kernel launches (cuBLAS products included); cublas: of those, products through
# CuPy; readbacks: device-to-host copies (each one a synchronization); uploads: host-to-device
# copies; device_copies: device-to-device copies (copy_to_device between device arrays).
COUNTS = {"launches": 0, "cublas": 0, "readbacks": 0, "uploads": 0, "device_copies": 0}


def snapshot() -> dict:
    """The counters now, with the allocator's new buffers as "allocations"."""
    return dict(COUNTS, allocations=memory_stats()["allocated"])


def difference(before: dict, after: dict | None = None) -> dict:
    """What was counted between `before` (a snapshot) and `after` (a later one, or now)."""
    after = snapshot() if after is None else after
    return {name: after[name] - before[name] for name in before}
