"""Distances and normalization of autojit.nn.functional: normalize, cosine_similarity,
pairwise_distance, and one_hot, the class-index encoding the losses and users build on.

Each is a composite of autojit ops (the p-norm of ops/composite.py, whose gradient at 0 is 0 as
torch's), so autograd, double backward and compiling come from the primitives.
nn/functional/__init__.py re-exports this module; the margin losses in loss.py measure with it.
"""

from __future__ import annotations

import numpy as np

from ...ops import composite
from ...ops.autocast import FP32, autocast_op, float32_inside
from ...ops.linalg.products import cosine_similarity  # noqa: F401 - one implementation, ops/linalg/products.py
from ...ops.out_argument import write_result
from ...ops.reduction import amax
from ...ops.registry import share_node
from ...tensor import dtypes
from ...tensor.creation import arange, as_tensor
from ...tensor.tensor import Tensor
from .common import check_tensor

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pdist", "one_hot"]


@float32_inside()
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out=None) -> Tensor:
    """input / max(||input||_p, eps) over dim."""
    check_tensor("normalize", "input", input)
    denominator = composite.clamp(composite.norm(input, p, dim, keepdim=True), min=eps)
    if out is not None:  # torch divides into out (torch.div's out=)
        return write_result("div", out, input / denominator, inputs=(input,))
    return input / denominator


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim of the broadcast inputs."""
    check_tensor("pairwise_distance", "x1", x1)
    check_tensor("pairwise_distance", "x2", x2)
    last = max(x1.ndim, x2.ndim) - 1
    return composite.norm(x1 - x2 + eps, p, last, keepdim=keepdim)


@autocast_op(cuda=FP32)
def pdist(input: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm distances between every pair of rows i < j of an (N, M) input, in row-major
    order: N * (N - 1) / 2 of them."""
    check_tensor("pdist", "input", input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    # The pairs depend on the shape only: fixed index arrays, so the graph stays static.
    first, second = np.triu_indices(input.shape[0], k=1)
    if first.size == 0:
        result = composite.norm(input[:0], p, 1)
    else:
        first = as_tensor(first.astype(np.int64), device=input.device)
        second = as_tensor(second.astype(np.int64), device=input.device)
        result = composite.norm(input[first] - input[second], p, 1)
    if result.grad_fn is None:
        return result
    # torch's node, which shows p, the input and the result
    return share_node((result,), (input,), "PdistBackward0",
                      {"p": float(p), "self": input, "result": result})[0]


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a trailing dim of num_classes (the largest class + 1 when -1),
    1 at each element's class and 0 elsewhere."""
    check_tensor("one_hot", "input", tensor)
    if tensor.dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(amax(tensor)) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if not tensor.is_symbolic and tensor.numel():  # the range check needs the data
        values = tensor.cpu().numpy()
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if values.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(dtypes.int64)
