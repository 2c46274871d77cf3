"""The fusion schedule (fusion.py), buffer planning (buffers.py) and the step plan that runs a
graph's kernels, products and single nodes (steps.py, matmul_steps.py, in_place.py)."""
