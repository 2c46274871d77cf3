"""autojit._logging: torch._logging's `set_logs`, which switches on what the compiler logs
through Python's logging, to the loggers torch logs each artifact to: `recompiles` (and
`recompiles_verbose`) to `torch._dynamo.guards.__recompiles`, with torch's "Recompiling
function ... triggered by the following guard failure(s)" text, `graph_breaks` to
`torch._dynamo.symbolic_convert.__graph_breaks` and `guards` to `torch._dynamo.guards.__guards`
(the topics AUTOJIT_LOG prints to stderr, config.py). Its other keywords (torch's Inductor,
AOT and distributed artifacts) have nothing of autojit's to log and are accepted.
set_logs() with no arguments switches them off again.
"""

from __future__ import annotations

import logging

from . import config

# torch's artifact -> (autojit's topic, the logger torch writes it to).
_ARTIFACTS = {
    "recompiles": ("recompiles", "torch._dynamo.guards.__recompiles"),
    "recompiles_verbose": ("recompiles", "torch._dynamo.guards.__recompiles"),
    "graph_breaks": ("graph_breaks", "torch._dynamo.symbolic_convert.__graph_breaks"),
    "guards": ("guards", "torch._dynamo.guards.__guards"),
}
_HANDLER: list = []  # the stderr handler on the "torch" logger, as torch installs one


def set_logs(**artifacts) -> None:
    """Log the compiler's recompiles, graph breaks or guards through Python's logging (each
    keyword True), as torch._logging.set_logs does; no keyword switches them off."""
    for _, name in _ARTIFACTS.values():
        logging.getLogger(name).setLevel(logging.NOTSET)
    config.PYTHON_LOGGERS.clear()
    for artifact, wanted in artifacts.items():
        found = _ARTIFACTS.get(artifact)
        if found is None or not wanted:
            continue
        topic, name = found
        config.PYTHON_LOGGERS[topic] = name
        logging.getLogger(name).setLevel(logging.DEBUG)
    if config.PYTHON_LOGGERS and not _HANDLER:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        _HANDLER.append(handler)
        logging.getLogger("torch").addHandler(handler)


__all__ = ["set_logs"]
