"""Extern calls run in the background: a plan step that begins one (StartStep) where its node
stands, steps that move it along while the plan's next steps run (ProgressStep), and the step
that waits for it (FinishStep) just before the first step that reads its result.

Which calls: those whose registry lowering has a `background` (registry.Background), the
collectives of autojit.distributed. In a compiled DDP training step the all-reduce of a bucket
of gradients is begun as soon as the backward has made them, and the plan goes on with the
rest of the backward while MPI moves the data; the optimizer's update, the first reader of the
averaged gradients, waits for it. A transport like MPI progresses a non-blocking collective
only inside its own calls, hence the ProgressSteps between the steps that overlap it.

The call reads its operands until it finishes, so the FinishStep reports the node's operands
among the values it reads: buffer planning (buffers.py) keeps their memory until then, and an
in-place store into a captured tensor (in_place.py) is not placed in between. A run that fails
meanwhile settles what it began (`settle`), so that the transport is not left with requests
of a run that no longer exists. See docs/notes/distributed.md.
"""

from __future__ import annotations

from ...ir.graph import Value
from .environment_keys import PENDING, RECORD
from .steps import NodesStep, NodeStep


def background_of(node):
    """The registry.Background of a node run in the background, or None."""
    return getattr(node.op.lowering, "background", None)


class StartStep(NodeStep):
    """Begin a background call: its handle waits in the environment for the FinishStep."""

    def __init__(self, node):
        super().__init__(node)
        self.background = background_of(node)

    def run(self, environment: dict) -> None:
        record = environment.get(RECORD)
        if record is not None:
            record.refuse(f"{self.node.op.name} ran in the background")
        node = self.node
        arrays = [environment[id(x)] if isinstance(x, Value) else x for x in node.inputs]
        handle = self.background.start(*arrays, **node.attrs)
        environment.setdefault(PENDING, {})[id(node.output)] = (self.background, handle)

    def describe(self) -> str:
        return f"start {self.node.op.name} (in the background)"


class ProgressStep(NodesStep):
    """Move the background calls under way along (a poll of each; nothing waits). A group of
    no nodes to the code that walks the steps' nodes: it reads and makes no value."""

    def __init__(self):
        super().__init__([])

    def run(self, environment: dict) -> None:
        for background, handle in environment.get(PENDING, {}).values():
            background.progress(handle)

    def describe(self) -> str:
        return "progress the background calls"


class FinishStep(NodeStep):
    """Wait for a background call and put its result where the node's value goes."""

    def run(self, environment: dict) -> None:
        background, handle = environment[PENDING].pop(id(self.node.output))
        environment[id(self.node.output)] = background.finish(handle)

    def describe(self) -> str:
        return f"finish {self.node.op.name}"


def settle(environment: dict) -> None:
    """A run failed: wait for the background calls it began, ignoring their own errors (the
    run's error is the one raised)."""
    for background, handle in environment.pop(PENDING, {}).values():
        try:
            background.finish(handle)
        except Exception:  # noqa: BLE001 - the run's error is reported, not this one
            pass


def run_in_background(steps: list, reads) -> list:
    """`steps` with each single-node step of a background call split into a StartStep where it
    stood and a FinishStep just before the first later step that reads its result (the end,
    when only the graph's outputs do), with a ProgressStep after each step in between.
    `reads(step)` gives the values a step reads (plan.step_reads)."""
    if not any(step.__class__ is NodeStep and background_of(step.node) is not None
               for step in steps):
        return steps
    ordered: list = []
    waiting: dict = {}  # id(result value) -> its FinishStep, not placed yet
    for step in steps:
        if waiting:
            read = {id(value) for value in reads(step)}
            for key in [key for key in waiting if key in read]:
                ordered.append(waiting.pop(key))
        ordered.append(step if step.__class__ is not NodeStep or
                       background_of(step.node) is None else StartStep(step.node))
        if ordered[-1].__class__ is StartStep:
            waiting[id(step.node.output)] = FinishStep(step.node)
        elif waiting:
            ordered.append(ProgressStep())
    ordered.extend(waiting.values())
    return ordered
