"""The early stop of a non-reentrant checkpoint's recomputation, against torch (from torch's
test_nested_checkpoint_set_early_stop): the recomputation stops once it has saved as many
tensors as the forward did, so the Python code after the last saving op does not run again;
`early_stop=False`, set_checkpoint_early_stop(False) (read when the checkpoint is made) and the
reentrant variant run the whole function; gradients are the same either way, nested
checkpoints and custom Functions included. Each program runs under torch and under autojit."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch_outcomes import both  # noqa: E402


def _rounded(tensor) -> list:
    return [round(value, 5) for value in tensor.tolist()]


def _counted(t, calls):
    def fn(x):
        calls.append("start")
        y = x.sin().cos()  # the last ops that save tensors
        calls.append("saved")
        out = y.clone() * 2  # clone and a product by a number save nothing
        calls.append("end")
        return out

    return fn


def test_the_recomputation_stops_after_the_last_saving_op():
    def program(t):
        from_checkpoint = t.utils.checkpoint
        found = []
        for kwargs in ({}, {"early_stop": False}, {"early_stop": True}):
            calls = []
            x = t.tensor([0.5, 1.0], requires_grad=True)
            out = from_checkpoint.checkpoint(_counted(t, calls), x, use_reentrant=False,
                                             **kwargs)
            out.sum().backward()
            found.append((calls, _rounded(x.grad)))
        return found

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_set_checkpoint_early_stop_is_read_when_the_checkpoint_is_made():
    def program(t):
        from_checkpoint = t.utils.checkpoint
        found = []
        settings = ((False, {}), (True, {"early_stop": False}), (False, {"early_stop": True}))
        for setting, kwargs in settings:
            calls = []
            x = t.tensor([0.25, 2.0], requires_grad=True)
            with from_checkpoint.set_checkpoint_early_stop(setting):
                out = from_checkpoint.checkpoint(_counted(t, calls), x, use_reentrant=False,
                                                 **kwargs)
            out.sum().backward()  # outside the setting: the one read at the call counts
            found.append(calls)
        calls = []
        x = t.tensor([0.25, 2.0], requires_grad=True)
        out = from_checkpoint.checkpoint(_counted(t, calls), x, use_reentrant=True)
        out.sum().backward()
        found.append(calls)  # the reentrant variant runs it all again
        return found

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_early_stop_with_a_custom_function_nested_checkpoints_and_two_backwards():
    def program(t):
        from_checkpoint = t.utils.checkpoint
        calls = []

        class Square(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        def inner(x):
            calls.append("inner")
            return x.exp()

        def outer(x):
            calls.append("outer")
            y = Square.apply(x.tanh())
            z = from_checkpoint.checkpoint(inner, y, use_reentrant=False)
            calls.append("after inner")
            w = z * y
            calls.append("after product")
            return w + 1

        x = t.tensor([0.3, -0.7], requires_grad=True)
        out = from_checkpoint.checkpoint(outer, x, use_reentrant=False)
        out.sum().backward(retain_graph=True)
        first = _rounded(x.grad)
        out.sum().backward()
        return calls, first, _rounded(x.grad)

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_a_function_saving_nothing_is_not_recomputed():
    def program(t):
        calls = []

        def fn(x):
            calls.append("run")
            return x.clone() + 1

        x = t.tensor([1.0, 2.0], requires_grad=True)
        out = t.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)
        out.sum().backward()
        return calls, _rounded(x.grad)

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_a_compiled_step_stops_its_recomputation_as_eager_does():
    """The family fuzzer's program: a compiled training step whose checkpointed block runs
    global forward hooks. Traced, the recomputation ran the whole block, so the compiled calls
    ran the hooks of the modules after the last saving op too (12 a call where eager and torch
    run 10); the trace now stops where eager does."""
    import autojit

    def program(t, compiled):
        t.manual_seed(0)
        names = []
        model = t.nn.Sequential(t.nn.Linear(4, 6, dtype=t.float64), t.nn.Tanh())
        head = t.nn.Linear(6, 2, dtype=t.float64)
        optimizer = t.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
        handle = t.nn.modules.module.register_module_forward_hook(
            lambda module, args, output: names.append(type(module).__name__))

        def step(x, y):
            optimizer.zero_grad()
            out = head(t.utils.checkpoint.checkpoint(model, x, use_reentrant=False))
            loss = ((out - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        step = autojit.compile(step) if compiled else step
        x = t.linspace(-1, 1, 16, dtype=t.float64).reshape(4, 4)
        y = t.linspace(-1, 1, 8, dtype=t.float64).reshape(4, 2)
        found = []
        for _ in range(3):
            del names[:]
            found.append((round(float(step(x, y)), 10), list(names)))
        handle.remove()
        return found

    expected = program(torch, False)
    assert program(autojit, False) == expected
    assert program(autojit, True) == expected
