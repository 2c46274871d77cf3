"""The pass pipeline: `optimize(graph)` runs the listed passes, in order, to a fixed point.

This is the optimize stage of the compiler (compiler/stages.py), between tracing
(ir/trace.py) and the fusion schedule (codegen/schedule/fusion.py). DEFAULT_PASSES
is the one list of passes, each named; every pass run is verified (verifier.py), timed and
counted (nodes before and after), and the graph text before and after a pass can be dumped by
name: `run_pipeline(graph, dump={"cse"})` collects it in the report, and the environment
variable AUTOJIT_DUMP_PASSES (names separated by commas, or "all") prints it to stderr.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..graph import Graph, collection_paused
from ..printer import format_graph, same_text
from ..verifier import verify
from .constant_folding import constant_folding
from .cse import common_subexpression_elimination
from .dead_code import dead_code_elimination
from .products import product_simplification
from .simplify import algebraic_simplification
from .slices import slice_simplification

# Simplification exposes folding and merging opportunities and the other way round, so the
# list runs again until a round changes nothing; each round can only shrink the graph, and the
# bound keeps a pathological graph from costing more.
DEFAULT_PASSES: list[tuple[str, Callable[[Graph], Graph]]] = [
    ("simplify", algebraic_simplification),
    ("slices", slice_simplification),
    ("products", product_simplification),
    ("fold", constant_folding),
    ("cse", common_subexpression_elimination),
    ("dce", dead_code_elimination),
]
MAX_ROUNDS = 4
DUMP_VARIABLE = "AUTOJIT_DUMP_PASSES"


@dataclass
class PassRecord:
    """One run of one pass."""
    name: str
    round: int
    seconds: float
    nodes_before: int
    nodes_after: int


@dataclass
class PassDump:
    """The graph text before and after one run of a dumped pass."""
    name: str
    round: int
    before: str
    after: str

    def __str__(self) -> str:
        return (f"=== before {self.name} (round {self.round}) ===\n{self.before}\n"
                f"=== after {self.name} (round {self.round}) ===\n{self.after}")


@dataclass
class PipelineReport:
    """What `run_pipeline` did: every pass run in order, the dumps asked for, the rounds."""
    records: list[PassRecord] = field(default_factory=list)
    dumps: list[PassDump] = field(default_factory=list)
    rounds: int = 0

    @property
    def seconds(self) -> float:
        return sum(record.seconds for record in self.records)

    def __str__(self) -> str:
        lines = [f"{'pass':<10} {'round':>5} {'ms':>9} {'nodes':>13}"]
        for record in self.records:
            lines.append(f"{record.name:<10} {record.round:>5} {record.seconds * 1e3:>9.3f} "
                         f"{record.nodes_before:>6} -> {record.nodes_after:<6}".rstrip())
        return "\n".join(lines)


def _resolve(passes) -> list[tuple[str, Callable[[Graph], Graph]]]:
    """Passes as (name, function) pairs: given as pairs, functions or names of DEFAULT_PASSES."""
    if passes is None:
        return list(DEFAULT_PASSES)
    known = dict(DEFAULT_PASSES)
    resolved = []
    for entry in passes:
        if isinstance(entry, str):
            if entry not in known:
                raise ValueError(f"optimize: unknown pass {entry!r}; the passes are "
                                 f"{', '.join(known)}")
            resolved.append((entry, known[entry]))
        elif callable(entry):
            resolved.append((entry.__name__, entry))
        else:
            name, function = entry
            resolved.append((name, function))
    return resolved


def dumped_pass_names(known=None) -> set:
    """The pass names AUTOJIT_DUMP_PASSES gives ("all" for every pass); a name that is not
    one of `known` (default: DEFAULT_PASSES') is an error listing them."""
    text = os.environ.get(DUMP_VARIABLE, "")
    names = {name.strip() for name in text.split(",") if name.strip()}
    _check_names(DUMP_VARIABLE, names, known)
    return names


def _check_names(where: str, names: set, known=None) -> None:
    known = [name for name, _ in DEFAULT_PASSES] if known is None else known
    unknown = set(names) - set(known) - {"all"}
    if unknown:
        raise ValueError(f"{where}: unknown pass {', '.join(sorted(unknown))}; the passes are "
                         f"{', '.join(known)} (or all)")


def _wanted(name: str, names: set) -> bool:
    return name in names or "all" in names


def run_pipeline(graph: Graph, *, passes=None, dump: Iterable[str] | None = None,
                 max_rounds: int = MAX_ROUNDS) -> tuple[Graph, PipelineReport]:
    """Run `passes` (default DEFAULT_PASSES) over `graph` until a round changes nothing, at
    most `max_rounds` rounds; return the optimized graph and a PipelineReport.

    The argument graph is not changed. The argument and the result are verified; a pass that
    breaks the graph raises VerificationError naming the pass. `dump` names passes (or "all")
    whose graph text before and after each run is collected in `report.dumps`; names in the
    environment variable AUTOJIT_DUMP_PASSES are printed to stderr as well.
    """
    with collection_paused():
        current = verify(graph)
        result, report = _run_passes(current, passes, dump, max_rounds, verify_each=False)
        try:
            verify(result)
        except Exception:
            # Verifying once at the end keeps compiles fast; to name the pass that broke the
            # graph, run again verifying after every pass (raises from the culprit).
            _run_passes(current, passes, (), max_rounds, verify_each=True)
            raise
    return result, report


def _run_passes(current: Graph, passes, dump, max_rounds: int, verify_each: bool):
    resolved = _resolve(passes)
    known = [name for name, _ in resolved]
    collect = set(dump or ())
    _check_names("run_pipeline(dump=...)", collect, known)
    printed = dumped_pass_names(known + [name for name, _ in DEFAULT_PASSES])
    report = PipelineReport()
    first = current
    made = []  # the graphs the passes made, the last of them the result
    for round_number in range(1, max_rounds + 1):
        report.rounds = round_number
        start = current
        for name, function in resolved:
            dumping = _wanted(name, collect) or _wanted(name, printed)
            before = format_graph(current) if dumping else ""
            started = time.perf_counter()
            result = function(current)
            seconds = time.perf_counter() - started
            if result is current:
                raise TypeError(f"optimize: pass {name} returned its argument; a pass returns "
                                "a new Graph")
            if verify_each:
                try:
                    verify(result)
                except Exception as error:
                    error.args = (f"after pass {name} (round {round_number}): {error}",)
                    raise
            report.records.append(PassRecord(name, round_number, seconds, len(current.nodes),
                                             len(result.nodes)))
            if dumping:
                record = PassDump(name, round_number, before, format_graph(result))
                report.dumps.append(record)
                if _wanted(name, printed):
                    print(record, file=sys.stderr)
            current = result
            made.append(result)
        if same_text(current, start):
            break
    _release(made[:-1], (first, current))
    return current, report


def _release(graphs: list, kept: tuple) -> None:
    """Break the cycles of the pipeline's intermediate graphs (a Value's producer holds the
    Value), so that they go by reference counting as soon as they are dropped instead of
    waiting for the cyclic collector, which the compile pauses: after a 4-layer GPT step's
    compile, the first collection freed 133,000 objects in 37-40 ms, mostly these, and now
    frees 22,800 in 21-24 ms (docs/notes/compile-latency.md). A node the argument or the
    result holds keeps its links."""
    keep = {id(node) for graph in kept for node in graph.nodes}
    for graph in graphs:
        for node in graph.nodes:
            if id(node) not in keep:
                for value in node.outputs:
                    value.producer = None


def optimize(graph: Graph, *, passes=None, dump: Iterable[str] | None = None) -> Graph:
    """The optimized graph (see run_pipeline); the dumps `dump` asks for go to stderr."""
    result, report = run_pipeline(graph, passes=passes, dump=dump)
    wanted = set(dump or ())
    printed = dumped_pass_names([name for name, _ in _resolve(passes)] +
                                [name for name, _ in DEFAULT_PASSES])
    for record in report.dumps:
        if _wanted(record.name, wanted) and not _wanted(record.name, printed):
            print(record, file=sys.stderr)
    return result
