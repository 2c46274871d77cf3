"""autojit.utils.tensorboard: torch.utils.tensorboard's SummaryWriter, for autojit tensors.

A training script logs with it as with torch's (`writer.add_scalar("loss", loss, step)`,
`add_histogram`, `add_image`, `add_graph`, ...), and TensorBoard reads the event files it
writes (`tensorboard --logdir runs`). The files are written by tensorboardX, an optional
dependency (`pip install 'autojit[tensorboard]'`); this package converts autojit tensors to
NumPy arrays on the way, and builds add_graph's graph from autojit's tracer (graph.py). It sits
in utils/, above nn and the IR, and nothing in autojit imports it.
"""

from __future__ import annotations

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
