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
# Samples per op and dtype, in every dtype of DTYPES: every one up to FULL_LIMIT by default,
# the first QUICK_LIMIT with AUTOJIT_OPINFO_FULL=0 (for a first answer while editing). The
# compiled check, which takes most of the time (a trace, the passes, the schedule and about
# one LLVM compile per sample of a new form), runs on the first QUICK_LIMIT of them in the
# suite's default run, and on every one with AUTOJIT_OPINFO_COMPILED=all: at 32 it took a
# quarter more of the file's CPU time, which the whole suite's 10-minute budget has no room for.
FULL_LIMIT = 32
QUICK_LIMIT = 8
# The ops whose samples cost seconds each (3-d grids and windows, CTC's lattice): the suite's
# default run takes their first QUICK_LIMIT, which keeps the whole suite within its budget
# (grid_sampler_3d alone took 56 s of a worker's time at 32); the survey
# (opinfo.torch_db.survey) still runs every sample of them.
HEAVY = frozenset({"grid_sampler_3d", "grid_sampler_2d", "nn.functional.grid_sample",
                   "nn.functional.conv_transpose3d", "nn.functional.ctc_loss",
                   "nn.functional.max_pool3d", "nn.functional.fractional_max_pool3d"})


def traced_arguments() -> bool:
    """The compiled check's function reaches the sample's tensors through its arguments alone,
    so that the trace sees them as symbolic arguments, as a user's compiled function gets them;
    AUTOJIT_OPINFO_ARGUMENTS=0 has it hold them in its closure too, where the trace captures
    them with their data (the check before 2026-11-25)."""
    return os.environ.get("AUTOJIT_OPINFO_ARGUMENTS", "1") not in ("", "0")


def full() -> bool:
    """Every sample up to FULL_LIMIT (the default), not the first QUICK_LIMIT
    (AUTOJIT_OPINFO_FULL=0)."""
    return os.environ.get("AUTOJIT_OPINFO_FULL", "1") not in ("", "0")


def compiled_limit() -> int:
    """Samples per op and dtype whose compiled call is checked against eager in this run."""
    return FULL_LIMIT if os.environ.get("AUTOJIT_OPINFO_COMPILED") == "all" else QUICK_LIMIT


def sample_limit(name: str | None = None) -> int:
    """Samples per op and dtype in this run (`name`: the op, for HEAVY's cap)."""
    return FULL_LIMIT if full() and name not in HEAVY else QUICK_LIMIT


def op_id(opinfo) -> str:
    """The OpInfo's name with its variant, as torch's test ids spell it."""
    return opinfo.name + ("." + opinfo.variant_test_name if opinfo.variant_test_name else "")
