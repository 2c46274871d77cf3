"""torch's own op database (torch.testing._internal.common_methods_invocations.op_db) run
against autojit: each OpInfo's autojit callable (resolve.py), its samples converted to autojit
(convert.py) and checked four ways (checks.py), under the skip list and the known failures of
skips.py. tests/test_opinfo.py drives it; `python -m opinfo.torch_db.survey` (from tests/)
counts every sample.

The samples are data torch generates at test time; nothing of torch enters autojit.
"""

from __future__ import annotations

import os

# The dtypes the samples are drawn in, in one place (an op runs in those of torch's
# `supported_dtypes` among them).
DTYPES = ("float32", "float64", "complex64", "complex128")
# Second order is checked in these dtypes only (single precision's rounding swamps it).
GRADGRAD_DTYPES = ("float64", "complex128")
# Samples per op and dtype: all of them (up to FULL_LIMIT) in every dtype of DTYPES, by
# default (the whole suite's run); with AUTOJIT_OPINFO_FULL=0 the first CI_LIMIT in CI_DTYPES
# (double precision, where second order is checked too), a first answer in seconds while
# editing.
FULL_LIMIT = 32
CI_LIMIT = 1
CI_DTYPES = ("float64", "complex128")
# With AUTOJIT_OPINFO_FULL=0, these dtypes skip the compiled check, which is most of a
# sample's time (compiling its graph); the full run compiles them, and the float64 samples of
# the FFTs, polar and view_as_complex compile complex values, as
# tests/test_compile_complex.py does.
CI_UNCOMPILED = ("complex128",)


def traced_arguments() -> bool:
    """The compiled check's function reaches the sample's tensors through its arguments alone,
    so that the trace sees them as symbolic arguments, as a user's compiled function gets them;
    AUTOJIT_OPINFO_ARGUMENTS=0 has it hold them in its closure too, where the trace captures
    them with their data (the check before 2026-11-25)."""
    return os.environ.get("AUTOJIT_OPINFO_ARGUMENTS", "1") not in ("", "0")


def full() -> bool:
    """Every sample in every dtype (the default), unless AUTOJIT_OPINFO_FULL is 0 or empty."""
    return os.environ.get("AUTOJIT_OPINFO_FULL", "1") not in ("", "0")


def sample_limit() -> int:
    return FULL_LIMIT if full() else CI_LIMIT


def run_dtypes() -> tuple:
    return DTYPES if full() else CI_DTYPES


def run_checks(dtype: str, checks: tuple) -> tuple:
    """The checks run for a dtype: all of them, but the compiled call for the CI_UNCOMPILED
    dtypes with AUTOJIT_OPINFO_FULL=0."""
    if full() or dtype not in CI_UNCOMPILED:
        return checks
    return tuple(check for check in checks if check != "compiled")


def op_id(opinfo) -> str:
    """The OpInfo's name with its variant, as torch's test ids spell it."""
    return opinfo.name + ("." + opinfo.variant_test_name if opinfo.variant_test_name else "")
