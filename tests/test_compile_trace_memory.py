"""What a compiled function keeps of its trace: the arrays the trace evaluated to decide on a
graph value (`if loss.item() > ...`: the forward's activations behind the loss) are freed once
the executable is built, not kept for as long as the executable lives (ir/scalars.py's
`ScalarGraph.release`; the executable's ShapeEnv keeps the trace's scalar graph)."""

import gc
import tracemalloc

import autojit


def _evaluated_bytes(snapshot) -> int:
    """Bytes still allocated by the trace's evaluation of graph values (ir/scalars.py)."""
    return sum(stat.size for stat in snapshot.statistics("traceback")
               if any(frame.filename.endswith("scalars.py") and "ir" in frame.filename
                      for frame in stat.traceback))


def test_values_evaluated_for_a_decision_are_freed_after_the_compile():
    autojit.manual_seed(0)
    model = autojit.nn.Sequential(autojit.nn.Linear(64, 256), autojit.nn.ReLU(),
                                  autojit.nn.Linear(256, 10))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.01)

    @autojit.compile
    def step(x, y):
        optimizer.zero_grad()
        loss = autojit.nn.functional.cross_entropy(model(x), y)
        if loss.item() > 100.0:  # a decision on a graph value: evaluated while tracing
            loss = loss * 0.5
        loss.backward()
        optimizer.step()
        return loss

    x, y = autojit.randn(256, 64), autojit.randint(0, 10, (256,))
    step(x, y)  # runs eagerly: it makes the optimizer's state
    tracemalloc.start(25)
    try:
        for _ in range(3):
            step(x, y)
        gc.collect()
        kept = _evaluated_bytes(tracemalloc.take_snapshot())
    finally:
        tracemalloc.stop()
    assert step.stats().traces == 1
    # The forward's activations (256 x 256 floats each, a few of them) were kept before.
    assert kept < 64 * 1024, kept
