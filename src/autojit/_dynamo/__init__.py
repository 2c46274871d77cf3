"""autojit._dynamo: the names of torch._dynamo that programs reach for, each mapped to autojit's
compiler: `config` (the settings autojit honours, compiler/dynamo_config.py), `reset`,
`explain`, `disable`, `is_compiling`, `allow_in_graph`, `assume_constant_result`,
`list_backends` and `set_stance` (compiler/control.py, compiler/explain_report.py), and the
marks on tensors: `mark_dynamic`, `maybe_mark_dynamic`, `mark_static` and
`mark_static_address` (compiler/dynamic_shapes.py). Nothing here is a
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
    set_stance,
)
from ..compiler.dynamic_shapes import (
    mark_dynamic,
    mark_static,
    mark_static_address,
    maybe_mark_dynamic,
)

# `import autojit._dynamo.config` finds the compiler's settings module, as torch's does its own.
_sys.modules[__name__ + ".config"] = config

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "explain",
           "is_compiling", "list_backends", "mark_dynamic", "mark_static",
           "mark_static_address", "maybe_mark_dynamic", "reset", "set_stance"]
