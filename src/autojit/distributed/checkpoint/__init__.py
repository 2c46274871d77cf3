"""autojit.distributed.checkpoint: torch.distributed.checkpoint's names, so that libraries
which import them load. The state-dict helpers (state_dict.py) work on autojit's modules and
optimizers, whose parameters are whole on each process; sharded saving and loading (save,
load, the storage readers and writers) is not built, and using it raises NotImplementedError:
save a state dict with autojit.save on one rank instead (docs/drop-in.md).
"""

from __future__ import annotations

from . import state_dict
from .storage import (
    DefaultLoadPlanner,
    DefaultSavePlanner,
    FileSystemReader,
    FileSystemWriter,
    StorageReader,
    StorageWriter,
    load,
    save,
)

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "StorageReader", "StorageWriter", "load", "save", "state_dict"]
