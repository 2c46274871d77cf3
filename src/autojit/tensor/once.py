"""Warnings given once per process (torch's TORCH_WARN_ONCE): `warn_now`.

While a compiled function is traced, `warnings.warn` is replaced by ir/printing.py's
interceptor, which makes each warning an effect every run of the executable repeats, as eager
repeats the call. A warning autojit gives once per process (a flag of its own module, which
no guard sees) must not be repeated: it is given when it happens, through this reference to
the real function, bound before any trace.
"""

from __future__ import annotations

import warnings

warn_now = warnings.warn
