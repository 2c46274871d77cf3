"""The op registry and every primitive family; importing it checks the registry is complete.

Families: elementwise (math, arithmetic, comparisons, where, cast), reduction, layout
(reshape, expand, permute, slice, cat), linalg (matmul), indexing (gather, scatter_add, index,
index_put), scatter (scatter_reduce), masked (nonzero_static), diagonal (diagonal,
embed_diagonal), loss (binary cross entropy and its gradient). Composites are in composite.py,
joining.py and index_update.py and need no rules.
"""

from . import (  # noqa: F401
    composite,
    diagonal,
    elementwise,
    index_update,
    indexing,
    joining,
    layout,
    linalg,
    loss,
    masked,
    reduction,
    scatter,
)
from .registry import REGISTRY, check_registry

check_registry()

__all__ = ["REGISTRY"]
