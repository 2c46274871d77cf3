"""The op registry and every primitive family; importing it checks the registry is complete.

Families, each a module here or a subpackage (its __init__.py says what it holds): elementwise/
(math, arithmetic, comparisons, where, cast; bitwise.py: and, or, xor, not, shifts), reduction,
layout/ (reshape, expand, permute, slice, cat; diagonal.py: diagonal, embed_diagonal), linalg/
(matmul, and torch.linalg's decompositions and solvers, gathered as autojit.linalg by
linalg/namespace.py), indexing/ (gather, scatter_add, index, index_put; scatter.py:
scatter_reduce; masked.py: nonzero_static), nn/ (the primitives of nn.functional: loss.py's
binary cross entropy and its gradient, batch_norm.py's batch normalization, its backward formula
and the running statistics' update, linear.py's nn.Linear affine map, rnn_cells.py's LSTM and
GRU gate arithmetic, nll_loss.py's negative log-likelihood of class targets and its backward
formula, pooling.py's max pooling select and scatter at each window's first maximum), sorting
(argsort), scans (cumsum, cumprod, cummax/cummin indices, logcumsumexp), searching
(searchsorted), counting (histc), special/ (number_functions.py: gcd, lcm, igamma, igammac; the
special functions), complex_numbers (complex, view_as_real, view_as_complex, conj, and angle and
sgn of complex tensors), fft/ (torch.fft's transforms: fft_c2c, fft_r2c, fft_c2r), sparse/
(sparse COO tensors), collective (the exchanges between processes of autojit.distributed) and
random/ (the samplers poisson and multinomial, and the random ops built on draws; gamma.py: the
gamma and binomial samplers). Composites are in composite.py, layout/triangular.py,
linalg/einsum.py, layout/joining.py, indexing/update.py, fft/spectral.py (stft, istft) and
aten_entry_points.py and aten_tensor_ops.py (torch's aten entry points, registered in the aten
namespace of aten_namespace.py, which is `autojit.ops.aten`) and need no rules.
"""

from . import (  # noqa: F401
    api,
    aten_entry_points,  # registers its ops in the aten namespace (autojit.ops.aten)
    aten_tensor_ops,  # ... and these
    collective,
    complex_numbers,
    composite,
    counting,
    elementwise,
    indexing,
    layout,
    linalg,
    meta,  # noqa: F401 - the dispatch of ops on meta tensors, installed on first use
    random,
    reduction,
    scans,
    searching,
    sorting,
    torch_dispatch,  # runs public calls on __torch_dispatch__ subclasses as aten operators
)
from .aten_namespace import NAMESPACE_LOADERS, NAMESPACES, aten, load_library, loaded_libraries
from .elementwise import bitwise  # noqa: F401
from .fft import transforms as fft  # noqa: F401
from .indexing import masked, scatter  # noqa: F401
from .indexing import update as index_update  # noqa: F401
from .layout import diagonal, joining, triangular  # noqa: F401
from .linalg import einsum  # noqa: F401
from .linalg import namespace as linalg_namespace  # noqa: F401 - registers torch.linalg's ops
from .nn import (  # noqa: F401
    batch_norm,
    hard_activations,
    linear,
    loss,
    nll_loss,
    pooling,
    rnn_cells,
)
from .random import gamma as random_gamma  # noqa: F401
from .registry import REGISTRY, check_registry
from .sparse import gradients as sparse_gradients  # noqa: E402
from .special import number_functions  # noqa: F401

# The functions the lower layers call at run time without importing them (api.py).
api.provide(cat=layout.cat, expand=layout.expand, reshape=layout.reshape,
            unsqueeze=layout.unsqueeze, stack=layout.stack, index_select=indexing.index_select,
            index_put=indexing.index_put, nonzero=indexing.nonzero, cumsum=scans.cumsum,
            searchsorted=searching.searchsorted, retyping_view=complex_numbers.retyping_view,
            clamp=composite.clamp, gather_sparse_grad=sparse_gradients.gather_sparse_grad)

api.check_provided()
check_registry()

__all__ = ["REGISTRY", "aten", "load_library", "loaded_libraries"]


def __getattr__(name: str):
    """torch.ops.<namespace> of custom operators (autojit/library.py), once defined."""
    found = NAMESPACES.get(name)
    if found is None and name in NAMESPACE_LOADERS:
        NAMESPACE_LOADERS.pop(name)()
        found = NAMESPACES.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found
