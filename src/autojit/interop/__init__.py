"""Exchange with other libraries and files, beside the tensor layer: DLPack and
`__cuda_array_interface__` (dlpack.py, dlpack_capsule.py), and autojit.save/load
(serialization.py)."""
