"""autojit.return_types: the named tuples torch's multi-result functions return, under
torch.return_types' names (`max`, `sort`, `topk`, `linalg_eigh`, ...), so that
`isinstance(result, torch.return_types.max)` holds for `torch.max(x, 0)`'s result.

The classes are the ops' own (each defined beside its op in ops/); this module only gathers
them. torch's `*_out` names, the types of the results of the `out=` forms, are the same classes
here. torch's are structseqs, made from one sequence (`torch.return_types.max((v, i))`); these
are namedtuples, made from their fields (`max(v, i)`), which both accept as keywords.
"""

from __future__ import annotations

from .ops.elementwise.extra import frexp_return as frexp
from .ops.histogramdd import histogramdd_return as histogramdd
from .ops.indexing import max_return as max  # noqa: A004
from .ops.indexing import min_return as min  # noqa: A004
from .ops.linalg import eig as _eig
from .ops.linalg import extras as _extras
from .ops.linalg import lu as _lu
from .ops.linalg.common import EighResult as linalg_eigh
from .ops.linalg.common import LstsqResult as linalg_lstsq
from .ops.linalg.common import QRResult as linalg_qr
from .ops.linalg.common import SlogdetResult as linalg_slogdet
from .ops.linalg.common import SVDResult as linalg_svd
from .ops.linalg.common import TopLevelQRResult as qr
from .ops.linalg.common import TopLevelSlogdetResult as slogdet
from .ops.linalg.common import TopLevelSVDResult as svd
from .ops.masks import aminmax_return as aminmax
from .ops.scans import cummax_return as cummax
from .ops.scans import cummin_return as cummin
from .ops.sorting import kthvalue_return as kthvalue
from .ops.sorting import median_return as median
from .ops.sorting import nanmedian_return as nanmedian
from .ops.sorting import sort_return as sort
from .ops.sorting import topk_return as topk
from .ops.statistics import histogram_return as histogram
from .ops.statistics import mode_return as mode


def _result_type(module, name: str):
    """The namedtuple class called `name` in one of the linalg modules."""
    found = [value for value in vars(module).values()
             if isinstance(value, type) and issubclass(value, tuple) and
             getattr(value, "__name__", None) == name]
    if len(found) != 1:
        raise ImportError(f"autojit.return_types: no single result type {name!r} in "
                          f"{module.__name__}")
    return found[0]


geqrf = _result_type(_extras, "geqrf")
linalg_cholesky_ex = _result_type(_extras, "linalg_cholesky_ex")
linalg_inv_ex = _result_type(_extras, "linalg_inv_ex")
linalg_ldl_factor = _result_type(_extras, "linalg_ldl_factor")
linalg_ldl_factor_ex = _result_type(_extras, "linalg_ldl_factor_ex")
linalg_solve_ex = _result_type(_extras, "linalg_solve_ex")
linalg_eig = _result_type(_eig, "linalg_eig")
linalg_lu = _result_type(_lu, "linalg_lu")
linalg_lu_factor = _result_type(_lu, "linalg_lu_factor")
linalg_lu_factor_ex = _result_type(_lu, "linalg_lu_factor_ex")
lu_unpack = _result_type(_lu, "lu_unpack")
triangular_solve = _result_type(_lu, "triangular_solve")

__all__ = ["aminmax", "cummax", "cummin", "frexp", "geqrf", "histogram", "histogramdd",
           "kthvalue", "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_inv_ex",
           "linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_lstsq", "linalg_lu",
           "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_qr", "linalg_slogdet",
           "linalg_solve_ex", "linalg_svd", "lu_unpack", "max", "median", "min", "mode",
           "nanmedian", "qr", "slogdet", "sort", "svd", "topk", "triangular_solve"]
all_return_types = [globals()[name] for name in __all__]
# The out= forms' result types, by torch's names (histogramdd has no out= form).
_OUT = {f"{name}_out": globals()[name] for name in __all__ if name != "histogramdd"}
globals().update(_OUT)
__all__ += [*_OUT, "all_return_types"]
