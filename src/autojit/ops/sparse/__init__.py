"""Sparse COO tensors in the ops layer: what sparse tensors of every layout share (arrays.py),
the tensors and their products (coo.py), the ops whose gradients are not their values'
(gradients.py), and autojit.sparse, torch.sparse's functions
(namespace.py, registered under that name by the package's top level).

Built on the dense ops of the registry (ops/registry.py); autograd/sparse_autograd.py links their
gradients.
"""
