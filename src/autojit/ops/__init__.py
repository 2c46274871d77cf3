"""The op registry and every primitive family; importing it checks the registry is complete.

Families: elementwise (math, arithmetic, comparisons, where, cast), reduction, layout
(reshape, expand, permute, slice, cat), linalg (matmul), indexing (gather, scatter_add, index,
index_put), loss (binary cross entropy and its gradient), random (the samplers poisson and
multinomial, and the random ops built on draws). Composites are in composite.py and need no
rules.
"""

from . import composite, elementwise, indexing, layout, linalg, loss, random, reduction  # noqa: F401
from .registry import REGISTRY, check_registry

check_registry()

__all__ = ["REGISTRY"]
