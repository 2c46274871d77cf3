"""What random training programs found compiled code doing apart from eager, one test each.

Each program is written once against `lib` (torch or autojit) and run three ways by
guard_staleness.check (torch, autojit eager, autojit compiled), or, where torch has no
counterpart of what is checked (autojit's own recompile counts), compiled against eager here:
the order of the keys a call writes into a dict, a `.grad` the caller kept across a
`zero_grad()` inside the step, what a call did before it raised, sizes printed, added to
counters and compared with values read from tensors, `requires_grad_()` on an argument,
`float()` of a NaN, `.grad = None` on a tensor that does not require grad, a learning rate
read with `float()` and written later in the same call, a dict entry stored unchanged, and
warnings raised on every call.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

pytest.importorskip("torch")
import torch  # noqa: E402
from guard_staleness import X, check, tensor  # noqa: E402


def _both(program):
    """program(compile_or_not) run eagerly and compiled: both results, compared by the caller."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        return program(lambda fn: fn), program(autojit.compile)


def test_keys_a_call_adds_to_a_dict_keep_their_order():
    def program(wrap):
        log = {}

        def step(x):
            loss = (x * 2).sum()
            log["loss"] = loss.item()
            log["count"] = log.get("count", 0) + 1
            return loss

        f = wrap(step)
        x = autojit.tensor(X)
        orders = []
        for _ in range(4):
            f(x)
            orders.append(list(log))
        return orders, log

    eager, compiled = _both(program)
    assert compiled == eager


def test_a_grad_kept_by_the_caller_across_zero_grad_inside_the_step():
    def program(lib, wrap):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)

        def step(x):
            model.zero_grad()
            loss = model(x).sum()
            loss.backward()
            return loss

        f = wrap(step)
        x = tensor(lib, X)
        f(x)
        kept = model.weight.grad
        f(x * 2)
        yield kept  # the old .grad is left as it was: the new one is another tensor
        yield model.weight.grad
        yield kept is model.weight.grad

    check(program, [1])


def test_what_a_call_did_before_it_raised_while_traced():
    def program(lib, wrap):
        lib.manual_seed(0)
        norm = lib.nn.BatchNorm1d(3)
        seen = []

        def step(x):
            seen.append(len(seen))
            return norm(x) @ lib.ones(4, 4)  # a shape error after the effects

        f = wrap(step)
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            f(tensor(lib, np.arange(15, dtype=np.float32).reshape(5, 3)))
        yield float(len(seen))
        yield norm.running_mean
        yield norm.num_batches_tracked.float()

    check(program)


def test_sizes_printed_counted_and_compared_with_tensor_values(capsys):
    class Stats:
        seen = 0

    def program(wrap):
        stats = Stats()

        def step(x):
            print("batch", x.shape[0], f"{x.shape[0]:>3}")
            stats.seen += x.shape[0]
            if x.sum().item() * 2 > x.shape[0]:
                return x * 2, x.shape[0]
            return x, x.shape[0] - 1

        f = wrap(step)
        results = []
        for rows in (2, 3, 4, 2, 5):
            out, size = f(autojit.ones(rows, 3) * (-1) ** rows)
            results.append((out.sum().item(), size))
        return results, stats.seen

    eager = program(lambda fn: fn)
    eager_text = capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # compiled, not run eagerly
        compiled = program(autojit.compile)
    assert capsys.readouterr().out == eager_text
    assert "s0" not in eager_text
    assert compiled == eager


def test_requires_grad_set_on_an_argument():
    def program(lib, wrap):
        def step(x):
            x.requires_grad_()
            return (x * 2).sum()

        f = wrap(step)
        for _ in range(3):
            x = tensor(lib, X)
            f(x)
            yield x.requires_grad

    check(program)


def test_float_of_a_nan_read_from_a_tensor():
    def program(lib, wrap):
        def step(x):
            value = float(x.sum())
            return x * (1.0 if value == value else 2.0)

        f = wrap(step)
        yield f(tensor(lib, np.array([np.nan, 1.0], dtype=np.float32)))
        yield f(tensor(lib, np.array([3.0, 1.0], dtype=np.float32)))

    check(program)


def test_grad_set_to_none_on_a_tensor_that_does_not_require_grad():
    def program(lib, wrap):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 1)
        model.bias.requires_grad_(False)

        def step(x):
            model.bias.grad = None
            loss = model(x).sum()
            loss.backward()
            return loss

        f = wrap(step)
        x = tensor(lib, X)
        f(x)
        f(x)
        model.bias.grad = lib.ones(1)
        f(x)
        yield model.bias.grad is None

    check(program)


def test_a_learning_rate_read_with_float_and_written_later_in_the_call():
    def program(lib, wrap):
        model = lib.nn.Linear(3, 1)
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.5, -0.25, 1.0]]))
            model.bias.fill_(0.1)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)

        def step(x):
            opt.zero_grad()
            loss = (model(x) ** 2).sum()
            loss.backward()
            opt.step()
            plateau.step(10.0)  # no improvement: float(group["lr"]), then a smaller lr
            return loss

        f = wrap(step)
        x = tensor(lib, X)
        for _ in range(5):
            yield f(x)
            yield model.bias
            yield opt.param_groups[0]["lr"]

    check(program)


def test_a_counter_a_call_creates_keeps_counting_across_retraces():
    def program(wrap):
        counts = {}

        def step(x):
            counts["count"] = counts.get("count", 0) + 1
            return x * 2

        f = wrap(step)
        seen = []
        for rows in (2, 2, 3, 3, 4, 4):
            f(autojit.ones(rows))
            seen.append(counts["count"])
        return seen

    eager, compiled = _both(program)
    assert compiled == eager == [1, 2, 3, 4, 5, 6]


def test_data_written_in_a_compiled_step_leaves_the_version_alone():
    def program(lib, wrap):
        weight = lib.nn.Parameter(lib.ones(3))

        def step():
            weight.data.mul_(0.5)
            return weight.detach().sum()

        f = wrap(step)
        for _ in range(3):
            saved = (weight * weight).sum()  # saves weight: a version bump would fail it
            f()
            saved.backward()
            yield weight.grad

    check(program)
    assert torch.__version__  # the torch run above is the reference


def test_a_step_defined_without_a_source_file(capsys):
    """A notebook cell, `exec` or `python - < script.py`: no source for linecache to give."""
    source = """
losses = []
model = autojit.nn.Linear(3, 1)
with autojit.no_grad():
    model.weight.fill_(0.5)
    model.bias.fill_(0.1)
opt = autojit.optim.SGD(model.parameters(), lr=0.1)

def step(x):
    opt.zero_grad()
    loss = (model(x) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
    print("loss", loss.item())
    return loss
"""
    runs = {}
    for name, wrap in (("eager", lambda fn: fn),
                       ("compiled", lambda fn: autojit.compile(fn, fullgraph=True))):
        namespace = {"autojit": autojit}
        exec(compile(source, "<cell>", "exec"), namespace)  # noqa: S102
        step = wrap(namespace["step"])
        for _ in range(4):
            step(autojit.ones(2, 3))
        runs[name] = (namespace["losses"], capsys.readouterr().out)
        if name == "compiled":
            # the first call makes SGD's state and runs eagerly (docs/notes/guards.md)
            assert (step.stats().state_calls, step.stats().compiled_calls) == (1, 3)
    assert runs["compiled"] == runs["eager"]


def test_a_tensor_the_result_saved_written_in_place_later_in_the_call():
    def program(wrap):
        weight = autojit.tensor([1.0, 2.0], requires_grad=True)

        def step(x):
            loss = (weight * x * x).sum()
            with autojit.no_grad():
                weight.add_(10.0)  # after the multiply saved it, as eager's graph records
            return loss

        f = wrap(step)
        x = autojit.tensor([3.0, 4.0], requires_grad=True)
        loss = f(x)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as raised:
            autojit.autograd.grad(loss, x, create_graph=True)
        return str(raised.value).split(" (it was saved")[0], weight.tolist()

    eager, compiled = _both(program)
    assert compiled[1] == eager[1]
    assert compiled[0].split(";")[0] == eager[0].split(";")[0]


def test_a_parameter_read_then_written_through_data_keeps_its_version():
    def program(lib, wrap):
        weight = lib.nn.Parameter(lib.ones(2))

        def step(x):
            y = (x * weight).sum()  # the graph reads the parameter first
            weight.data.mul_(1.5)  # then `.data`, a counter of its own, is written
            return y

        f = wrap(step)
        for _ in range(3):
            saved = (weight * weight).sum()
            f(lib.ones(2))
            yield weight._version
            saved.backward()  # the version check passes, as in eager
            yield weight.grad

    check(program)


def test_a_returned_view_of_a_grad_the_call_made_is_a_view_of_that_grad():
    def program(lib, wrap):
        layer = lib.nn.Linear(3, 2)

        def step(x):
            layer(x).sum().backward()
            return layer.weight.grad[0]

        row = wrap(step)(lib.ones(4, 3))
        yield row.stride()
        row.zero_()  # through the returned view, into the .grad
        yield layer.weight.grad

    check(program)


def test_sizes_inside_a_printed_shape_take_each_runs_value(capsys):
    def program(wrap):
        weight = autojit.ones(3, 2, requires_grad=True)

        def step(x):
            out = x @ weight
            print("batch", x.shape[0], tuple(out.shape), out.shape, list(out.shape))
            return out

        f = wrap(step)
        for rows in (6, 4, 4, 5):
            f(autojit.ones(rows, 3))
        return capsys.readouterr().out

    eager, compiled = _both(program)
    assert compiled == eager and "s0" not in compiled


def test_a_branch_on_a_nan_read_from_a_tensor_runs_the_calls_effects_once():
    def program(wrap):
        counts = {"calls": 0}

        def step(x):
            loss = x.sum()
            counts["calls"] += 1
            if loss.item() > 0.3:  # NaN: not greater, nor less or equal
                counts["big"] = counts.get("big", 0) + 1
            return loss

        f = wrap(step)
        for value in (float("nan"), 5.0, float("nan"), -1.0):
            f(autojit.tensor([value, 1.0]))
        return counts

    eager, compiled = _both(program)
    assert compiled == eager


def test_a_first_run_that_does_not_serve_its_call_leaves_no_effect_twice(monkeypatch):
    from autojit.compiler import executable as executables

    def program(wrap, fail_first=False):
        counts = {"calls": 0}

        def step(x):
            counts["calls"] += 1
            counts.setdefault("seen", []).append(1)
            return x * 2

        f = wrap(step)
        if fail_first:
            run = executables.Executable.run
            failed = []

            def failing_once(self, args):
                if not failed:
                    failed.append(True)
                    raise executables.ValueCheckFailed(None, "forced")
                return run(self, args)

            monkeypatch.setattr(executables.Executable, "run", failing_once)
        f(autojit.ones(2))
        f(autojit.ones(2))
        return counts

    eager = program(lambda fn: fn)
    assert program(autojit.compile, fail_first=True) == eager


def test_a_counter_that_adds_the_batch_size_keeps_counting():
    def program(wrap):
        stats = {}
        weight = autojit.ones(3, requires_grad=True)

        def step(x):
            loss = (x * weight).sum()
            loss.backward()
            stats["rows"] = stats.get("rows", 0) + x.shape[0]
            return loss

        f = wrap(step)
        seen = []
        for rows in (4, 6, 4, 4, 5):
            f(autojit.ones(rows, 3))
            seen.append(stats["rows"])
        return seen

    eager, compiled = _both(program)
    assert compiled == eager == [4, 10, 14, 18, 23]


def test_a_write_through_a_view_of_a_fresh_grad_reaches_what_reads_the_grad_later():
    def program(lib, wrap):
        weight = lib.nn.Parameter(lib.ones(2, 3))
        optimizer = lib.optim.SGD([weight], lr=0.1, momentum=0.9)

        def step(x):
            weight.grad = None
            (x @ weight.t()).sum().backward()
            weight.grad[0].zero_()  # then SGD's first momentum buffer copies the .grad
            optimizer.step()

        f = wrap(step)
        for _ in range(3):
            f(lib.ones(4, 3))
            yield optimizer.state[weight]["momentum_buffer"]
            yield weight

    check(program)


def test_a_grad_the_caller_set_takes_the_sum_though_the_step_sets_grad_to_none():
    def program(lib, wrap):
        weight = lib.nn.Parameter(lib.ones(2, 3))

        def step(x):
            (x @ weight.t()).sum().backward()  # added into the .grad the caller set
            weight.grad = None

        f = wrap(step)
        for calls_before in (0, 2):
            for _ in range(calls_before):
                f(lib.ones(4, 3))
            mine = lib.zeros(2, 3)
            weight.grad = mine
            f(lib.ones(4, 3))
            yield mine
            yield weight.grad is None

    check(program)


def test_a_batch_size_used_as_a_dict_key_is_never_left_symbolic():
    def program(wrap):
        stats = {}
        weight = autojit.ones(3, requires_grad=True)

        def step(x):
            loss = (x * weight).sum()
            stats[x.shape[0]] = loss.item()
            return loss

        f = wrap(step)
        for rows in (4, 3, 3, 6, 3):
            f(autojit.ones(rows, 3))
        return [(key, type(key)) for key in stats], list(stats.values())

    eager = program(lambda fn: fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)  # a graph break, said once
        assert program(autojit.compile) == eager


def test_an_entry_stored_unchanged_is_stored_again_after_the_caller_clears_the_dict():
    def program(wrap):
        stats, history = {}, [1, 2]

        def step(x):
            stats["seen"] = len(history)  # the value already there from the second call on
            return (x * 2).sum()

        compiled = wrap(step)
        seen = []
        for call in range(4):
            if call == 2:
                stats.clear()
            compiled(autojit.ones(3))
            seen.append(dict(stats))
        return seen

    eager, compiled = _both(program)
    assert compiled == eager == [{"seen": 2}] * 4


def test_a_warning_the_step_raises_is_raised_by_every_call_through_the_filters():
    def program(wrap, action):
        weight = autojit.ones(3, requires_grad=True)

        def step(x):
            out = x * weight
            if out.grad is None:  # a non-leaf's .grad: UserWarning, as torch's
                warnings.warn("no gradient", RuntimeWarning, stacklevel=1)
                warnings.warn("the caller's line", RuntimeWarning, stacklevel=2)
            return out.sum()

        compiled = wrap(step)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(action)
            warnings.simplefilter("error", CompileWarning)
            for _ in range(2):
                compiled(autojit.ones(3))
            compiled(autojit.ones(3))  # another line of the caller
        return [(w.category.__name__, w.filename, w.lineno) for w in caught]

    for action in ("always", "default"):
        eager = program(lambda fn: fn, action)
        compiled = program(autojit.compile, action)
        assert compiled == eager, action
    assert len(program(autojit.compile, "always")) == 9


def test_guards_read_no_missing_key_into_an_optimizer_state():
    """An executable's guards read opt.state[p] of the optimizer it was traced with; checked
    against a new optimizer (whose state is a defaultdict) they must not add p there."""
    def program(wrap):
        model = autojit.nn.Linear(3, 2)
        holder = {"opt": autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)}

        def step(x):
            opt = holder["opt"]
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()

        compiled = wrap(step)
        for _ in range(3):
            compiled(autojit.ones(4, 3))
        model.weight = autojit.nn.Parameter(autojit.zeros(2, 5))
        holder["opt"] = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            compiled(autojit.ones(4, 3))
        return len(holder["opt"].state), list(holder["opt"].state_dict()["state"])

    eager, compiled = _both(program)
    assert compiled == eager == (0, [])


@pytest.mark.parametrize("layout", ["same", "transposed"])
def test_a_returned_view_of_a_grad_set_by_the_caller_is_a_view_of_that_grad(layout):
    """The caller puts a new tensor in .grad before each call; backward adds into it and the
    step returns `w.grad[0]`: each run returns a view of the .grad it finds, not of the one
    the trace read (which each run reads afresh, compiler/grad_inputs.py)."""
    def program(wrap):
        autojit.manual_seed(0)
        model = autojit.nn.Linear(3, 2).double()

        def step(x):
            model(x).pow(2).sum().backward()
            return model.weight.grad[0]

        compiled = wrap(step)
        seen = []
        for call in range(4):
            grad = autojit.full((2, 3), float(call), dtype=autojit.float64)
            if layout == "transposed" and call == 3:
                grad = grad.t().contiguous().t()
            model.weight.grad = grad
            row = compiled(autojit.ones(4, 3, dtype=autojit.float64) * (call + 1))
            held = model.weight.grad
            assert row._base is (held if held._base is None else held._base)
            seen.append(row.tolist())
        return seen

    eager, compiled = _both(program)
    assert compiled == eager
