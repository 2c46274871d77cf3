"""The logging patterns of real training steps (issue 33), each a step called 30 times: it runs
compiled for at least 28 calls, asserted on the public counters, and gives eager's results
(what it returns, prints and leaves in the model, the optimizer and Python state)."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

import autojit
from autojit import nn

CALLS = 30
_LOSSES: list = []  # each pattern's list of losses, the last one made last
_NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]\d+)?")


def _model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.25), nn.Linear(8, 1))


def _payload(call: int):
    rng = np.random.default_rng(call)
    x = autojit.tensor(rng.standard_normal((6, 4)), dtype=autojit.float32)
    y = autojit.tensor(rng.standard_normal((6, 1)), dtype=autojit.float32)
    return x, y


def _pattern(name: str):
    """(step, calls, state): a fresh training step of the pattern, the arguments of each
    call, and what the run leaves that eager and compiled must agree on."""
    model = _model()
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = autojit.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)
    losses, history = [], []
    writer = None

    def loss_of(x, y):
        return ((model(x) - y) ** 2).mean()

    def train(loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    if name == "return item":
        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            return loss.item()
    elif name == "print every step":
        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            print(f"loss {loss.item():.5f}")
    elif name == "branch on item":
        def step(x, y):
            loss = loss_of(x, y)
            if loss.item() > 1.0:  # large losses take a smaller step
                loss = loss * 0.5
            train(loss)
            return loss.detach()
    elif name == "isfinite skip":
        def step(x, y):
            loss = loss_of(x, y)
            if not autojit.isfinite(loss):
                return None
            train(loss)
            return loss.detach()
    elif name == "tolist logging":
        def step(x, y):
            prediction = model(x)
            loss = ((prediction - y) ** 2).mean()
            train(loss)
            history.append(prediction.detach()[:2].tolist())
            print(model[3].bias.tolist())
    elif name == "append detached":
        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            losses.append(loss.detach())
    elif name == "append returned loss":
        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            losses.append(loss)  # with its history, as returned: the very tensor
            return loss
    elif name == "append loss":
        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            losses.append(loss)  # not returned: its graph freed by the backward above
    elif name == "scheduler":
        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            scheduler.step()
            return loss.item(), scheduler.get_last_lr()[0]
    elif name == "summary writer":
        import tempfile

        from autojit.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(tempfile.mkdtemp())
        counter = {"step": 0}

        def step(x, y):
            loss = loss_of(x, y)
            train(loss)
            writer.add_scalar("loss", loss.item(), counter["step"])
            writer.add_histogram("bias", model[3].bias, counter["step"])
            counter["step"] += 1
    elif name == "train and eval":
        def step(x, y):
            loss = loss_of(x, y)
            if model.training:
                train(loss)
            return loss.item()
    else:
        raise AssertionError(name)

    def calls():
        for call in range(CALLS):
            x, y = _payload(call % 5)
            if name == "isfinite skip" and call in (9, 19):
                x = x * float("nan")
            if name == "train and eval":
                model.train(call % 2 == 0)
            yield x, y

    _LOSSES.append(losses)

    def state():
        return ([p.detach().numpy().copy() for p in model.parameters()],
                [loss.item() for loss in losses], history, optimizer.param_groups[0]["lr"],
                _written(writer))

    return step, calls, state


def _written(writer) -> list:
    """The (step, value) of each scalar the writer wrote, read back from its event file, and
    how many histograms."""
    if writer is None:
        return []
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    writer.flush()
    events = EventAccumulator(writer.log_dir)
    events.Reload()
    return [[(event.step, event.value) for event in events.Scalars("loss")],
            len(events.Histograms("bias"))]


def _run(name: str, compiled: bool):
    autojit.manual_seed(0)
    step, calls, state = _pattern(name)
    function = autojit.compile(step) if compiled else step
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        results = [function(*arguments) for arguments in calls()]
    return results, printed.getvalue(), state(), function


def _close(a, b):
    if isinstance(a, autojit.Tensor):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=2e-5, atol=1e-6)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-6)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float):
        assert type(b) is float and b == pytest.approx(a, rel=2e-5, abs=1e-6)
    else:
        assert a == b


@pytest.mark.parametrize("name", ["return item", "print every step", "branch on item",
                                  "isfinite skip", "tolist logging", "append detached",
                                  "append returned loss", "append loss",
                                  "scheduler", "summary writer", "train and eval"])
def test_a_logging_step_stays_compiled_and_equals_eager(name):
    eager, eager_printed, eager_state, _ = _run(name, compiled=False)
    got, got_printed, got_state, compiled = _run(name, compiled=True)
    _close(eager, got)
    _close(eager_state, got_state)
    if eager_printed:  # the same lines, the numbers in them equal to rounding
        eager_lines, got_lines = eager_printed.splitlines(), got_printed.splitlines()
        assert len(eager_lines) == len(got_lines) == CALLS
        for mine, theirs in zip(got_lines, eager_lines):
            assert _NUMBER.sub("#", mine) == _NUMBER.sub("#", theirs)
            np.testing.assert_allclose([float(n) for n in _NUMBER.findall(mine)],
                                       [float(n) for n in _NUMBER.findall(theirs)],
                                       rtol=1e-4, atol=2e-5)
    if name == "append returned loss":  # the list holds the returned tensors themselves
        assert got_state[1] and all(
            kept is returned for kept, returned in zip(_LOSSES[-1], got))
        assert all(kept.requires_grad for kept in _LOSSES[-1])
    if name == "append loss":
        # Each stored loss requires grad through a node named as eager's, whose graph the
        # step's backward freed: a backward through it raises eager's error.
        kept = _LOSSES[-1]
        assert len(kept) == CALLS and len({id(loss) for loss in kept}) == CALLS
        assert all(loss.requires_grad and not loss.is_leaf for loss in kept)
        eager_kept = _LOSSES[-2]
        assert kept[-1].grad_fn.name() == eager_kept[-1].grad_fn.name()
        for losses in (eager_kept, kept):
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                autojit.stack(losses).sum().backward()
    stats = compiled.stats()
    assert stats.calls == CALLS and stats.compiled_calls >= CALLS - 2, stats
    assert stats.graph_breaks == 0 and stats.split_breaks == 0, stats
