"""autojit.linalg: torch.linalg's functions, gathered from the ops/linalg/*.py modules.

The package's top level imports this module as `autojit.linalg` (and registers it under that
name, so that `import autojit.linalg` and `from autojit.linalg import norm` work). The
primitives behind it are in solvers.py (inv, solve, solve_triangular, cholesky),
decompositions.py (qr, svd, svdvals, eigh, eigvalsh), eig.py (eig, eigvals),
determinants.py (det, slogdet), linalg_products.py (pinv), lu.py (lu_factor)
and lapack.py (geqrf, sytrf, sytrs, potrf's info); the rest are composites of them and
of the other ops (extras.py has the `_ex` forms, cond, matrix_rank, the tensor forms and
the Householder products).
"""

from __future__ import annotations

import sys

from ...tensor import torch_function
from .. import keyword_forms
from ..out_forms import matmul  # with out=, as torch.linalg.matmul takes it
from .common import LinAlgError
from .contractions import linalg_vander as vander
from .decompositions import eigh, eigvalsh, qr, svd, svdvals
from .determinants import det, slogdet
from .eig import eig, eigvals
from .extras import (
    cholesky_ex,
    cond,
    diagonal,
    householder_product,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    matrix_rank,
    solve_ex,
    tensorinv,
    tensorsolve,
)
from .linalg_products import cross, lstsq, matrix_power, multi_dot, pinv, vecdot
from .lu import lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp
from .norms import matrix_norm, norm, vector_norm
from .solvers import cholesky, inv, solve, solve_triangular

__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
    "matrix_power", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular",
    "svd", "svdvals", "vander", "vecdot", "vector_norm",
    # extras.py
    "cholesky_ex", "cond", "diagonal", "householder_product", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "matrix_rank", "solve_ex", "tensorinv", "tensorsolve",
]

# torch's keyword names (linalg.norm(input=x)), ops/keyword_forms.py.
keyword_forms.accept_all(globals(), keyword_forms.LINALG)

# A Tensor subclass's __torch_function__ sees these functions (tensor/torch_function.py).
torch_function.expose(sys.modules[__name__], "torch.linalg.linalg_")
