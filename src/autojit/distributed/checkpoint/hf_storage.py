"""torch.distributed.checkpoint.hf_storage's reader and writer of Hugging Face safetensors
checkpoints, not built: making one raises NotImplementedError (see the package's
docstring)."""

from .storage import StorageReader, StorageWriter

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class HuggingFaceStorageReader(StorageReader):
    pass


class HuggingFaceStorageWriter(StorageWriter):
    pass
