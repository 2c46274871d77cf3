"""NumPy's floating-point warnings stay inside autojit: a nan cast to an integer, log(0) and 0/0
give torch's values without a RuntimeWarning, eager and compiled, also after a
`warnings.catch_warnings()` block that autojit was imported in has ended (pytest runs each test
in one, and the block's end takes away the filters added inside it), while the program's own
NumPy calls keep their warnings.
"""

from __future__ import annotations

import warnings

import numpy as np

import autojit
from autojit.ops import registry


def _without_autojits_filter() -> list:
    """The filter list as it is after a catch_warnings block autojit was imported in."""
    return [entry for entry in warnings.filters
            if getattr(entry[3], "pattern", entry[3]) != registry._QUIET_MODULES]


def _runtime_warnings(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # shown once per place, as Python's default
        warnings.filters = _without_autojits_filter()  # as catch_warnings' end sets it
        call()
    return [str(warning.message) for warning in caught
            if issubclass(warning.category, RuntimeWarning)]


def test_nan_casts_and_log_of_zero_warn_nothing_after_the_filters_are_replaced():
    def eager():
        values = autojit.tensor([float("nan"), float("inf"), 0.0])
        assert values.long().tolist()[2] == 0
        assert values.log().tolist()[2] == float("-inf")
        assert (values / values).isnan().all()

    assert _runtime_warnings(eager) == []

    @autojit.compile
    def step(x):
        return x.log() + x.long().float() + x / x

    def compiled():
        step(autojit.tensor([0.0, float("nan")]))
        step(autojit.tensor([0.0, float("nan")]))

    assert _runtime_warnings(compiled) == []


def test_the_programs_own_numpy_warnings_stay():
    def own():
        autojit.tensor([0.0]).log()
        np.log(np.zeros(1))

    assert _runtime_warnings(own) == ["divide by zero encountered in log"]
