"""Anomaly detection: detect_anomaly / set_detect_anomaly, forward traces, nan checks."""

from __future__ import annotations

import os
import re
import threading
import warnings

import pytest

import autojit
from autojit import autograd
from autojit.autograd import anomaly
from autojit.tensor.state import state

PACKAGE = os.path.dirname(autojit.__file__)
ENABLED = ("Anomaly Detection has been enabled. This mode will increase the runtime and should "
           "only be enabled for debugging.")


@pytest.fixture(autouse=True)
def anomaly_off():
    """A failing test must not leave anomaly mode on for the rest of the suite."""
    yield
    state.anomaly = False
    state.anomaly_check_nan = True


def messages(caught, start: str = "") -> list[str]:
    return [str(w.message) for w in caught if str(w.message).startswith(start)]


def error_warnings(caught) -> list:
    return [w for w in caught if "Error detected in" in str(w.message)
            or "Previous calculation" in str(w.message)]


# ---- the reference example (torch-autograd-en.txt, detect_anomaly) ------------------------------

def reference_run_fn():
    """The reference's MyFunc and run_fn, as written there."""

    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, gO):  # noqa: N803 - the reference's name
            # Error during the backward pass
            raise RuntimeError("Some error in backward")
            return gO.clone()

    def run_fn(a):
        out = MyFunc.apply(a)
        return out.sum()

    return run_fn


def test_reference_example_without_anomaly_mode():
    run_fn = reference_run_fn()
    inp = autojit.rand(10, 10, requires_grad=True)
    out = run_fn(inp)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="^Some error in backward$"):
            out.backward()
    assert error_warnings(caught) == []


def test_reference_example_with_anomaly_mode():
    run_fn = reference_run_fn()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="^Some error in backward$"):
            with autograd.detect_anomaly():
                inp = autojit.rand(10, 10, requires_grad=True)
                out = run_fn(inp)
                out.backward()
    assert messages(caught, "Anomaly Detection") == [ENABLED]
    [report] = error_warnings(caught)
    text = str(report.message)
    name = out.grad_fn.next_functions[0][0].name()
    assert name.startswith("MyFunc")
    head = f"Error detected in {name}. Traceback of forward call that caused the error:\n"
    assert text.startswith(head)
    trace = text[len(head):]
    # Outermost first, as format_stack: the caller's line, then the forward line itself last.
    assert re.search(r'  File ".*test_anomaly\.py", line \d+, in test_reference_example_with_'
                     r'anomaly_mode\n    out = run_fn\(inp\)\n'
                     r'  File ".*test_anomaly\.py", line \d+, in run_fn\n'
                     r'    out = MyFunc\.apply\(a\)\n$', trace), trace
    assert report.category is UserWarning
    assert report.filename == __file__  # points at the user's backward() line


def test_error_propagates_unchanged():
    class Failure(Exception):
        pass

    failure = Failure("from backward")

    class Raising(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            raise failure

    x = autojit.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            y = Raising.apply(x)
            with pytest.raises(Failure) as raised:
                y.sum().backward()
    assert raised.value is failure


# ---- modes --------------------------------------------------------------------------------------

def test_off_by_default_and_enabled_warning():
    assert not autojit.is_anomaly_enabled() and autojit.is_anomaly_check_nan_enabled()
    assert autograd.is_anomaly_enabled is autojit.is_anomaly_enabled
    with pytest.warns(UserWarning, match="^Anomaly Detection has been enabled") as caught:
        manager = autograd.detect_anomaly()
    assert [str(w.message) for w in caught] == [ENABLED]
    assert caught[0].filename == __file__
    assert not autojit.is_anomaly_enabled()  # construction alone does not turn it on
    with manager:
        assert autojit.is_anomaly_enabled() and autojit.is_anomaly_check_nan_enabled()
    assert not autojit.is_anomaly_enabled()


def test_detect_anomaly_check_nan_false_and_restore():
    with pytest.warns(UserWarning):
        with autograd.detect_anomaly(check_nan=False):
            assert autojit.is_anomaly_enabled() and not autojit.is_anomaly_check_nan_enabled()
            with autograd.detect_anomaly():
                assert autojit.is_anomaly_check_nan_enabled()
            assert not autojit.is_anomaly_check_nan_enabled()
    assert not autojit.is_anomaly_enabled() and autojit.is_anomaly_check_nan_enabled()


def test_restores_after_an_exception():
    with pytest.warns(UserWarning), pytest.raises(ValueError):
        with autograd.detect_anomaly():
            raise ValueError
    assert not autojit.is_anomaly_enabled()
    with pytest.raises(ValueError):
        with autograd.set_detect_anomaly(True):
            raise ValueError
    assert not autojit.is_anomaly_enabled()


def test_set_detect_anomaly_as_function_and_nested_contexts():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # set_detect_anomaly does not warn
        autograd.set_detect_anomaly(True)
        assert autojit.is_anomaly_enabled()
        with autograd.set_detect_anomaly(False):
            assert not autojit.is_anomaly_enabled()
            with autograd.set_detect_anomaly(True, check_nan=False):
                assert autojit.is_anomaly_enabled()
                assert not autojit.is_anomaly_check_nan_enabled()
            assert not autojit.is_anomaly_enabled() and autojit.is_anomaly_check_nan_enabled()
        assert autojit.is_anomaly_enabled()
        autograd.set_detect_anomaly(False)
        assert not autojit.is_anomaly_enabled()
        autojit.set_anomaly_enabled(True, check_nan=False)
        assert autojit.is_anomaly_enabled() and not autojit.is_anomaly_check_nan_enabled()
        autojit.set_anomaly_enabled(False)
        assert not autojit.is_anomaly_enabled() and autojit.is_anomaly_check_nan_enabled()


def test_detect_anomaly_as_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        @autograd.detect_anomaly()
        def compute(x):
            """Docstring kept."""
            assert autojit.is_anomaly_enabled()
            return x.sqrt()

    assert not autojit.is_anomaly_enabled()
    assert compute.__doc__ == "Docstring kept."
    x = autojit.tensor([0.0], requires_grad=True)
    y = compute(x)
    assert not autojit.is_anomaly_enabled()
    assert y.grad_fn._forward_trace is not None
    assert "    return x.sqrt()\n" in y.grad_fn._forward_trace.format()


def test_mode_is_thread_local():
    seen = {}

    def worker():
        seen["enabled"] = autojit.is_anomaly_enabled()
        x = autojit.ones(2, requires_grad=True)
        seen["trace"] = (x * 2).grad_fn._forward_trace

    with autograd.set_detect_anomaly(True):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert autojit.is_anomaly_enabled()
    assert seen == {"enabled": False, "trace": None}


# ---- forward traces -----------------------------------------------------------------------------

def test_nothing_captured_outside_anomaly_mode(monkeypatch):
    def fail(*args):
        raise AssertionError("anomaly machinery ran with anomaly mode off")

    monkeypatch.setattr(anomaly, "capture_forward_trace", fail)
    monkeypatch.setattr(anomaly, "apply_with_anomaly_checks", fail)
    x = autojit.tensor([0.0, 1.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()
    assert y.grad_fn._forward_trace is None
    y.backward()  # nan gradient, no error: nothing is checked when the mode is off
    assert x.grad.isnan().tolist() == [True, False]


def test_trace_ends_at_the_users_line():
    x = autojit.ones(3, requires_grad=True)
    with autograd.set_detect_anomaly(True):
        y = x.var()  # a composite: several frames inside autojit lie below this line
    trace = y.grad_fn._forward_trace
    text = trace.format()
    assert text.endswith(", in test_trace_ends_at_the_users_line\n"
                         "    y = x.var()  # a composite: several frames inside autojit lie below "
                         "this line\n")
    assert str(trace) == text
    assert trace.frames[-1][0].co_filename == __file__
    for code, _ in trace.frames:
        assert not code.co_filename.startswith(PACKAGE)


def test_trace_keeps_nn_frames():
    # autojit.nn is Python a user reads, like torch.nn: its frames stay in the trace.
    x = autojit.ones(3, requires_grad=True)
    with autograd.set_detect_anomaly(True):
        y = autojit.nn.functional.softmax(x, dim=0)
    frames = y.grad_fn._forward_trace.frames
    assert frames[-1][0].co_filename == os.path.join(PACKAGE, "nn", "functional", "activation.py")
    user = [code.co_filename for code, _ in frames].index(__file__)
    assert frames[user][0].co_name == "test_trace_keeps_nn_frames"
    assert all(code.co_filename.startswith(os.path.join(PACKAGE, "nn"))
               for code, _ in frames[user + 1:])


def test_every_node_of_the_graph_has_a_trace():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        a = x.exp()
        b = a * 3
    assert re.search(r"    a = x\.exp\(\)\n$", a.grad_fn._forward_trace.format())
    assert re.search(r"    b = a \* 3\n$", b.grad_fn._forward_trace.format())
    assert b.grad_fn._forward_trace.parent_name is None


# ---- nan checks ---------------------------------------------------------------------------------

def backward_errors(function):
    """Run `function()` (which calls backward) and return (error message, warning messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        with pytest.raises(RuntimeError) as raised:
            function()
    return str(raised.value), [str(w.message) for w in error_warnings(caught)]


def test_nan_from_sqrt_backward():
    x = autojit.tensor([0.0, 4.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        y = x.sqrt()
        loss = (y * 0).sum()
        error, reports = backward_errors(loss.backward)
    assert error == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert len(reports) == 1
    assert reports[0].startswith("Error detected in SqrtBackward0. Traceback of forward call "
                                 "that caused the error:\n")
    assert reports[0].endswith("    y = x.sqrt()\n")
    assert x.grad is None


def test_nan_names_the_output_position():
    x = autojit.tensor([0.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        y = x / x  # d/dx of the divisor: -x / x**2 = nan at 0; the dividend's is inf
        error, reports = backward_errors(y.sum().backward)
    assert error == "Function 'DivBackward0' returned nan values in its 1th output."
    assert reports[0].endswith("    y = x / x  # d/dx of the divisor: -x / x**2 = nan at 0; the "
                               "dividend's is inf\n")


def test_inf_is_not_reported():
    x = autojit.tensor([0.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        x.log().sum().backward()
    assert x.grad.tolist() == [float("inf")]


def test_check_nan_false():
    x = autojit.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        with autograd.detect_anomaly(check_nan=False):
            (x.sqrt() * 0).sum().backward()
    assert [str(w.message) for w in caught] == [ENABLED]
    assert x.grad.isnan().tolist() == [True]
    x.grad = None
    with autograd.set_detect_anomaly(True, check_nan=False):
        (x.sqrt() * 0).sum().backward()
    assert x.grad.isnan().tolist() == [True]


def test_nan_in_double_backward_names_the_inducing_node():
    x = autojit.tensor([0.0, 1.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        y = x.pow(3)
        (g,) = autograd.grad(y.sum(), x, create_graph=True)
        h = g.sqrt()
        error, reports = backward_errors(h.sum().backward)
    # g = 3 x**2: its sqrt has an infinite slope at 0, and the backward of the pow node that
    # the first backward created multiplies it by 0.
    assert error == "Function 'PowBackward0' returned nan values in its 0th output."
    assert len(reports) == 2
    assert reports[0].startswith("Error detected in PowBackward0. Traceback of forward call that "
                                 "caused the error:\n")
    assert reports[0].endswith("    (g,) = autograd.grad(y.sum(), x, create_graph=True)\n")
    assert reports[1].startswith(
        "\n\nPrevious calculation was induced by PowBackward0. Traceback of forward call that "
        "induced the previous calculation:\n")
    assert reports[1].endswith("    y = x.pow(3)\n")


def test_symbolic_gradients_are_not_checked():
    def step(x):
        y = x.sqrt()
        (y * 0).sum().backward()
        return y

    with autograd.set_detect_anomaly(True):
        graph = autojit.make_graph(step, autojit.tensor([0.0], requires_grad=True))
    assert graph is not None


# ---- errors from other checks -------------------------------------------------------------------

def test_version_counter_error_shows_the_forward_trace():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        a = x * 2
        y = a * a
        a.add_(1)
        error, reports = backward_errors(y.sum().backward)
    assert error.startswith("one of the variables needed for gradient computation has been "
                            "modified by an inplace operation")
    assert len(reports) == 1
    assert reports[0].startswith("Error detected in MulBackward0. Traceback of forward call "
                                 "that caused the error:\n")
    assert reports[0].endswith("    y = a * a\n")


def test_graph_built_outside_anomaly_mode():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    y = a * a
    a.add_(1)
    with autograd.set_detect_anomaly(True):
        error, reports = backward_errors(y.sum().backward)
    assert "modified by an inplace operation" in error
    assert reports == ["Error detected in MulBackward0. No forward pass information available. "
                       "Enable detect anomaly during forward pass for more information."]


def test_no_error_no_warning():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autograd.set_detect_anomaly(True):
            ((x * x).exp().sum() / 2).backward()
    assert caught == []
    assert x.grad is not None
