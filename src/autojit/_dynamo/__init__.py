"""autojit._dynamo: the names of torch._dynamo that programs reach for, each mapped to autojit's
compiler: `config` (the settings autojit honours, compiler/dynamo_config.py), `reset`,
`explain`, `disable`, `is_compiling`, `allow_in_graph`, `assume_constant_result` and
`list_backends` (compiler/control.py, compiler/explain_report.py). Nothing here is a
stand-in: a name torch._dynamo has that maps to nothing in autojit is not here. See
docs/compiler.md.
"""

import sys as _sys

from ..compiler import dynamo_config as config
from ..compiler import explain  # the function, as compiler/__init__.py loads it, not its module
from ..compiler.control import (
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    list_backends,
    reset,
)

# `import autojit._dynamo.config` finds the compiler's settings module, as torch's does its own.
_sys.modules[__name__ + ".config"] = config

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "explain",
           "is_compiling", "list_backends", "reset"]
