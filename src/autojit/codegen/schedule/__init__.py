"""The fusion schedule (fusion.py), buffer planning (buffers.py) and the step plan that runs a
graph's kernels, products and single nodes (plan.py, steps.py, matmul_steps.py), with the
stores of updates into their tensors' own storage (in_place.py)."""
