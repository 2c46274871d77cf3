"""The op registry and every primitive family; importing it checks the registry is complete.

Families: elementwise (math, arithmetic, comparisons, where, cast), bitwise (and, or, xor, not,
shifts), reduction, layout (reshape, expand, permute, slice, cat), linalg (matmul), indexing
(gather, scatter_add, index, index_put), scatter (scatter_reduce), masked (nonzero_static),
diagonal (diagonal, embed_diagonal), loss (binary cross entropy and its gradient), batch_norm
(batch normalization, its backward formula and the running statistics' update), linear
(nn.Linear's affine map), rnn_cells (the LSTM and GRU cells' gate arithmetic), nll_loss (the
negative log-likelihood of class targets and its backward formula), pooling (max pooling's
select and scatter at each window's first maximum), sorting (argsort), scans (cumsum, cumprod,
cummax/cummin indices, logcumsumexp), searching (searchsorted), counting (histc),
number_functions (gcd, lcm, igamma, igammac), complex_numbers (complex, view_as_real,
view_as_complex, conj, and angle and sgn of complex tensors), fft (torch.fft's transforms:
fft_c2c, fft_r2c, fft_c2r), collective (the exchanges between processes of autojit.distributed),
random (the samplers poisson and multinomial, and the random ops built on draws), random_gamma
(the gamma and binomial samplers), and torch.linalg's decompositions and solvers (linalg_*.py,
gathered as autojit.linalg by linalg_namespace.py). Composites are in composite.py,
triangular.py, einsum.py, joining.py, index_update.py, spectral.py (stft, istft) and
aten_entry_points.py and aten_tensor_ops.py (torch's aten entry points, registered in the aten
namespace of aten_namespace.py, which is `autojit.ops.aten`) and need no rules.
"""

from . import (  # noqa: F401
    aten_entry_points,  # registers its ops in the aten namespace (autojit.ops.aten)
    aten_tensor_ops,  # ... and these
    batch_norm,
    bitwise,
    collective,
    complex_numbers,
    composite,
    counting,
    diagonal,
    einsum,
    elementwise,
    fft,
    index_update,
    indexing,
    joining,
    layout,
    linalg,
    linalg_namespace,  # noqa: F401 - registers the torch.linalg primitives
    linear,
    loss,
    masked,
    meta,  # noqa: F401 - the dispatch of ops on meta tensors, installed on first use
    nll_loss,
    number_functions,
    pooling,
    random,
    random_gamma,
    reduction,
    rnn_cells,
    scans,
    scatter,
    searching,
    sorting,
    triangular,
)
from .aten_namespace import NAMESPACES, aten, load_library, loaded_libraries
from .registry import REGISTRY, check_registry

check_registry()

__all__ = ["REGISTRY", "aten", "load_library", "loaded_libraries"]


def __getattr__(name: str):
    """torch.ops.<namespace> of custom operators (autojit/library.py), once defined."""
    found = NAMESPACES.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found
