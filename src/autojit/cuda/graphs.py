"""torch.cuda's CUDA graph names (CUDAGraph, graph, make_graphed_callables), so that libraries
which name them in annotations and optional paths load. autojit does not capture CUDA graphs:
making one raises RuntimeError, as torch's does without a CUDA device; a compiled step already
runs as a few kernels with one launch path (docs/cuda.md)."""

from __future__ import annotations

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_NOT_BUILT = ("autojit does not capture CUDA graphs: compile the step with autojit.compile "
              "instead (docs/cuda.md)")


class CUDAGraph:
    """Not built: making one raises RuntimeError (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(_NOT_BUILT)


class graph:  # noqa: N801 - torch's name
    """Not built: entering one raises RuntimeError (see the module docstring)."""

    def __init__(self, cuda_graph=None, *args, **kwargs):
        raise RuntimeError(_NOT_BUILT)


def graph_pool_handle():
    raise RuntimeError(_NOT_BUILT)


def make_graphed_callables(callables, sample_args, *args, **kwargs):
    raise RuntimeError(_NOT_BUILT)


def is_current_stream_capturing() -> bool:
    """False: no stream is ever capturing a graph."""
    return False
