"""functorch under the drop-in (`from functorch import vmap, grad, jacrev`): the function
transforms torch.func took over from it and functorch's module API (make_functional,
make_functional_with_buffers, combine_state_for_ensemble), each behind torch's FutureWarning
(drop_in/_functorch/deprecated.py); `functorch.experimental` (experimental.py). make_fx is
the name only: autojit has no proxy-tensor tracer, and calling it raises NotImplementedError.
"""

from __future__ import annotations

from ...fx.experimental.proxy_tensor import make_fx  # noqa: F401 - functorch's name
from .._functorch.deprecated import (  # noqa: F401 - functorch's names
    combine_state_for_ensemble,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    make_functional,
    make_functional_with_buffers,
    vjp,
    vmap,
)
from .._functorch.make_functional import (  # noqa: F401 - functorch's names
    FunctionalModule,
    FunctionalModuleWithBuffers,
)

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "make_functional", "make_functional_with_buffers", "make_fx", "vjp", "vmap"]
