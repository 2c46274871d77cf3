"""Exchange with other libraries and files, beside the tensor layer: DLPack and
`__cuda_array_interface__` (dlpack.py, dlpack_capsule.py), and autojit.save/load (serialization.py)
in torch.save's format (torch_format.py writes it, torch_format_reader.py reads it), through a
pickle writer and a pickle reader that builds data only (pickle_writer.py, pickle_reader.py)."""
