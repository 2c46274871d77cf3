"""autojit.utils.benchmark: torch.utils.benchmark's Timer, Measurement and Compare, for timing
autojit statements (eager, compiled or transformed) with torch's output formats. Python
statements only; there is no C++ timer, Callgrind collection or op fuzzer."""

from .compare import Colorize, Compare
from .measurement import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)
from .timer import Language, Timer, timer

__all__ = [
    "Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "ordered_unique",
    "select_unit", "set_torch_threads", "timer", "trim_sigfig", "unit_to_english",
]
