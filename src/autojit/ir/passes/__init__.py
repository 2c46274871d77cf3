"""The graph passes, one module each, and the pipeline that runs them in order (pipeline.py):
algebraic simplification (simplify.py), slice simplification (slices.py), product
simplification (products.py), constant folding
(constant_folding.py), common-subexpression elimination (cse.py) and dead-code elimination
(dead_code.py), on the shared rewriting machinery (rewriter.py). Every pass is a pure function
`Graph -> Graph`.
"""

from .constant_folding import constant_folding
from .cse import common_subexpression_elimination
from .dead_code import dead_code_elimination
from .pipeline import DEFAULT_PASSES, optimize, run_pipeline
from .products import product_simplification
from .rewriter import GraphRewriter, structural_key
from .simplify import algebraic_simplification
from .slices import slice_simplification

__all__ = ["DEFAULT_PASSES", "GraphRewriter", "algebraic_simplification",
           "common_subexpression_elimination", "constant_folding", "dead_code_elimination",
           "optimize", "product_simplification", "run_pipeline", "slice_simplification",
           "structural_key"]
