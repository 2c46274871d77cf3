"""Shrinking a random training program that fails to a smaller one that fails the same way.

Used by program_runs.py's command line (`--minimize`), outside the test suite (the test's
hypothesis shrinks by itself). A program still fails "the same way" when one of its silent
differences has the same signature (program_runs.signature: the path that disagrees, without
the call or the parameter's name). The passes, repeated until none helps: drop calls from the
end, drop each mutation, feature and hook, then set each choice to its simplest value.
"""

from __future__ import annotations

import copy

from program_runs import outcome, signature
from random_programs import FEATURES, MUTATIONS

SIMPLEST = [("model", "linear"), ("model", "mlp"), ("opt", "none"), ("opt", "sgd"),
            ("sched", "none"), ("zero", "never"), ("zero", "model"), ("micro", 1),
            ("loss", "mse"), ("extra", False), ("uses_global", False), ("uses_list", False),
            ("ret", "none"), ("ret", "loss"), ("variant", False), ("momentum", 0.0),
            ("weight_decay", 0.0), ("dtype", "float64"), ("sched_inside", True), ("every", 1),
            ("structure", "function")]
CALL_SIMPLEST = [("rows", 4), ("arg", "plain"), ("mode", "normal")]


def valid(spec: dict) -> bool:
    for name, _ in spec["features"]:
        rule = FEATURES[name][2]
        if rule is not None and not rule(spec):
            return False
    for call in spec["calls"]:
        for name, _ in call["before"]:
            rule = MUTATIONS[name][1]
            if rule is not None and not rule(spec):
                return False
    if spec["opt"] not in ("sgd", "adam", "adamw", "rmsprop", "adagrad"):
        if spec["sched"] != "none" or spec["zero"] in ("opt_none", "opt_zeros", "end"):
            return False
    return bool(spec["calls"]) and not spec["calls"][0]["before"]


def _deleted(spec: dict, path: tuple) -> dict:
    smaller = copy.deepcopy(spec)
    container = smaller
    for key in path[:-1]:
        container = container[key]
    del container[path[-1]]
    return smaller


def edits(spec: dict) -> list:
    """Functions from a spec to a smaller one (None where they no longer apply), in the order
    tried: deletions from the back, so that a deletion leaves the later edits' places alone."""
    found = []
    for index in reversed(range(len(spec["calls"]))):
        for position in reversed(range(len(spec["calls"][index]["before"]))):
            path = ("calls", index, "before", position)
            found.append(lambda s, path=path: _deleted(s, path)
                         if len(s["calls"]) > path[1] and
                         len(s["calls"][path[1]]["before"]) > path[3] else None)
    for field in ("features", "hooks"):
        for position in reversed(range(len(spec[field]))):
            found.append(lambda s, path=(field, position): _deleted(s, path)
                         if len(s[path[0]]) > path[1] else None)
    for key, simple in SIMPLEST:
        found.append(lambda s, key=key, simple=simple: {**copy.deepcopy(s), key: simple}
                     if s.get(key) != simple else None)
    for index in range(len(spec["calls"])):
        for key, simple in CALL_SIMPLEST:
            def simpler(s, index=index, key=key, simple=simple):
                if len(s["calls"]) <= index or s["calls"][index][key] == simple:
                    return None
                smaller = copy.deepcopy(s)
                smaller["calls"][index][key] = simple
                return smaller
            found.append(simpler)
    return found


def fails_alike(spec: dict, wanted: str) -> bool:
    try:
        result = outcome(spec)
    except Exception:
        return False
    return any(signature(item) == wanted for item in result["silent"])


def shrink(spec: dict, wanted: str, budget: int = 300) -> dict:
    """The smallest spec found (within `budget` runs) that still fails with `wanted`."""
    tries = 0
    for count in range(1, len(spec["calls"])):  # the fewest calls first
        candidate = {**copy.deepcopy(spec), "calls": copy.deepcopy(spec["calls"][:count])}
        tries += 1
        if valid(candidate) and fails_alike(candidate, wanted):
            spec = candidate
            break
    progress = True
    while progress and tries < budget:
        progress = False
        for edit in edits(spec):
            candidate = edit(spec)
            if candidate is None or not valid(candidate):
                continue
            tries += 1
            if fails_alike(candidate, wanted):
                spec, progress = candidate, True
            if tries >= budget:
                break
    return spec
