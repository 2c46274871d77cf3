"""Tracing (placeholder until the IR lands): graph breaks on data access."""

from __future__ import annotations


class GraphBreak(RuntimeError):
    pass


def graph_break(what: str):
    raise GraphBreak(f"{what} needs the tensor's data, which does not exist while tracing")


def write_symbolic(target, result):
    raise GraphBreak("in-place writes while tracing are not supported yet")
