"""The sharded checkpoint's entry points and storage classes, not built: each raises
NotImplementedError when used (see the package's docstring)."""

from __future__ import annotations

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "StorageReader", "StorageWriter", "load", "save"]

NOT_BUILT = ("autojit has no sharded (distributed) checkpointing: save the state dict with "
             "autojit.save on one rank and load it with autojit.load (docs/drop-in.md)")


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist: bool = False):
    raise NotImplementedError(NOT_BUILT)


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist: bool = False):
    raise NotImplementedError(NOT_BUILT)


class _NotBuilt:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(NOT_BUILT)


class StorageReader(_NotBuilt):
    pass


class StorageWriter(_NotBuilt):
    pass


class FileSystemReader(StorageReader):
    pass


class FileSystemWriter(StorageWriter):
    pass


class DefaultSavePlanner(_NotBuilt):
    pass


class DefaultLoadPlanner(_NotBuilt):
    pass
