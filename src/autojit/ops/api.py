"""The op functions the lower layers of ops/ call without importing the family above them.

ops/ is layered (pyproject.toml's contract "Inside ops"): the registry, then vmap's batching
and the in-place and out= write-backs, then the families' primitives (elementwise, reduction,
layout, indexing, then sorting, scans, searching and complex numbers), then the composites, then
the Tensor methods. A few rules below a family need one of its functions at run time only:
vmap's per-index loop stacks its results (layout/composites.py's stack), the in-place write
through a view scatters with index_put (indexing/), where(condition) is nonzero's. Such a rule
calls `api.<name>(...)`: ops/__init__.py provides each function here once every family is
imported, before any op runs, and checks that none is missing. Only the names in NAMES can be
provided.
"""

from __future__ import annotations

# name -> the module that defines it (relative to autojit.ops), and who calls it from below.
NAMES = {
    "cat": "layout",  # batching: the batch row of an index; vmap's loop
    "expand": "layout",  # batching: an unbatched operand broadcast along the batch
    "reshape": "layout",  # inplace: scatter_through's flat positions
    "unsqueeze": "layout",  # inplace: scatter_through's index rows
    "stack": "layout.composites",  # batching: vmap's per-index loop
    "index_select": "indexing",  # layout/joining.py: repeat_interleave
    "index_put": "indexing",  # inplace: scatter_through
    "nonzero": "indexing",  # elementwise/where_cast.py: where(condition)
    "cumsum": "scans",  # layout/joining.py: repeat_interleave's positions
    "searchsorted": "searching",  # layout/joining.py: repeat_interleave's positions
    "retyping_view": "complex_numbers",  # inplace: writes through view_as_real/view_as_complex
    "clamp": "composite",  # elementwise/math_primitives.py: logit's eps
    "gather_sparse_grad": "sparse.gradients",  # indexing: gather(sparse_grad=True)
}


def provide(**functions) -> None:
    """Make each function callable here as api.<name>; ops/__init__.py calls it once."""
    unknown = set(functions) - set(NAMES)
    if unknown:
        raise ValueError(f"api.provide: {sorted(unknown)} are not among api.NAMES")
    globals().update(functions)


def check_provided() -> None:
    """Fail at import when a name of NAMES was not provided (ops/__init__.py runs it, beside
    check_registry), rather than at the first call of the rule that needs it."""
    missing = sorted(name for name in NAMES if name not in globals())
    if missing:
        raise TypeError(f"api: {missing} were not provided (ops/__init__.py's api.provide)")
