"""autojit.distributed.rpc: torch.distributed.rpc as torch has it where it is built without RPC
support. autojit's processes talk through MPI collectives (autojit.distributed), and has no
remote procedure calls, remote references or TensorPipe agent: `is_available()` is False, and
the module holds nothing else, as torch's module does on such a build, so that libraries that
import it and check (torch_geometric: `hasattr(rpc, "api")`) take their path without RPC."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether torch.distributed.rpc's remote calls can be used: never in autojit."""
    return False
