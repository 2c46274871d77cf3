"""autojit.special: torch.special's names for the special functions, the softmax family and
the elementwise math they build on.

Every function here is an op of autojit.ops (the same objects as the top-level `autojit.erfc`,
`autojit.lgamma`, ..., with their `out=`); this module only gives them torch.special's names,
some of them aliases (expit is sigmoid, gammaln is lgamma, psi is digamma). It sits above
ops/ with the other public namespaces.
"""

from __future__ import annotations

import sys as _sys

from .ops import keyword_forms as _keyword_forms
from .ops.elementwise.math_composites import ndtr
from .ops.elementwise.math_primitives import entr as _entr
from .ops.elementwise.math_primitives import xlog1py as _xlog1py
from .ops.functional import (
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    i0,
    log1p,
    logit,
    logsumexp,
    polygamma,
    sinc,
    xlogy,
)
from .ops.functional import digamma as psi
from .ops.functional import igamma as gammainc
from .ops.functional import igammac as gammaincc
from .ops.functional import lgamma as gammaln
from .ops.functional import mvlgamma as multigammaln
from .ops.functional import sigmoid as expit
from .ops.nn.softmax import log_softmax, softmax
from .ops.out_argument import with_out
from .ops.out_forms import special_round as round  # noqa: A004 - torch's name
from .ops.special.functions import i1
from .ops.special.polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .ops.special.scipy_impls import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    erfcx,
    i0e,
    i1e,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    ndtri,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
    zeta,
)
from .tensor import torch_function as _torch_function

# torch.special's own functions (no top-level or method form in torch), with torch's out=.
entr = with_out(_entr, name="special_entr")
xlog1py = with_out(_xlog1py, name="special_xlog1py")

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "i0", "i1",
    "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma", "psi",
    "round", "sinc", "softmax", "xlog1py", "xlogy",
    # through SciPy (ops/special/scipy_impls.py) and torch's recurrences
    # (ops/special/polynomials.py)
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "erfcx", "i0e", "i1e",
    "log_ndtr", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "ndtri", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "zeta",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]

# torch's keyword names (special.expit(input=x)), ops/keyword_forms.py.
_keyword_forms.accept_all(globals(), _keyword_forms.SPECIAL)

# A Tensor subclass's __torch_function__ sees these functions (tensor/torch_function.py).
_torch_function.expose(_sys.modules[__name__], "torch.special.special_")
