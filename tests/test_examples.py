"""The examples in examples/ run to completion and print the values they promise.

Each example is run in a fresh interpreter, the way a user runs it, so that it cannot lean on
state another test left behind. The training examples run with --quick, their smoke-test
settings, and each checks a result of its own (an accuracy bar, an error bound) through its
exit status; the tests also read the summary lines. No example may warn that autojit.compile
gave up on its step (a CompileWarning on stderr fails the run). Where an example times its
compiled step against its eager one, the tests check the sign of that ratio inside the run
(compiled faster), never a figure. The digits examples need scikit-learn (the `test` extra
installs it); they are skipped with a reason without it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import autojit

ROOT = Path(__file__).resolve().parents[1]
HAS_SKLEARN = importlib.util.find_spec("sklearn") is not None
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
needs_sklearn = pytest.mark.skipif(not HAS_SKLEARN, reason="the digits data set needs "
                                   "scikit-learn (pip install 'autojit[test]')")


def run_example(name: str, *arguments: str, environment: dict | None = None,
                cwd: Path = ROOT) -> str:
    """The example's stdout, once it exited with status 0 and without a CompileWarning."""
    env = {key: value for key, value in os.environ.items() if key != "AUTOJIT_DISABLE"}
    env.update(environment or {})
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *arguments],
        capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    assert completed.returncode == 0, (
        f"{name} exited with {completed.returncode}\nstdout:\n{completed.stdout}\n"
        f"stderr:\n{completed.stderr}")
    assert "CompileWarning" not in completed.stderr, completed.stderr
    return completed.stdout


def example_module(name: str):
    """examples/NAME.py imported (its main not run), with examples/ on the import path."""
    if str(ROOT / "examples") not in sys.path:
        sys.path.insert(0, str(ROOT / "examples"))
    module = importlib.import_module(name)
    assert Path(module.__file__).parent == ROOT / "examples", module.__file__
    return module


def compiled_over_eager(output: str) -> float:
    """The compiled/eager ratio a comparing example prints, after checking that neither step
    traced while it was timed."""
    assert "traced again while timed" not in output, output
    return number_after(r"compiled/eager ([\d.]+)x", output)


def number_text(pattern: str, output: str) -> str:
    match = re.search(pattern, output)
    assert match, f"no line matching {pattern!r} in:\n{output}"
    return match.group(1)


def number_after(pattern: str, output: str) -> float:
    return float(number_text(pattern, output).replace(",", ""))


def test_autograd_basics_runs_and_prints_its_results():
    output = run_example("autograd_basics.py")
    expected_lines = [
        "x.grad after one backward: tensor([2., 4., 6.])",
        "x.grad after a second backward: tensor([ 4.,  8., 12.])",
        "d/dx   x^4 = 32  (4x^3  = 32)",
        "d2/dx2 x^4 = 48  (12x^2 = 48)",
        "d3/dx3 x^4 = 48  (24x   = 48)",
        "under no_grad: y.requires_grad = False , y.grad_fn = None",
        "y._version after y.mul_(2): 1",
        "all checks passed",
    ]
    for line in expected_lines:
        assert line in output, f"missing line {line!r} in:\n{output}"
    assert "Hv = tensor([  6.,   0., -18.], dtype=autojit.float64)" in output
    assert "RuntimeError: one of the variables needed for gradient computation has been " \
           "modified by an inplace operation" in output


# ---- the flagship: an MLP on the digits -------------------------------------------------------

@pytest.fixture(scope="module")
def flagship(tmp_path_factory):
    """One --quick run of digits_mlp.py (compiled, compared with eager, a checkpoint saved
    after every epoch), with --plot when matplotlib is there: returns its output, the plot's
    path and the checkpoint's."""
    if not HAS_SKLEARN:
        pytest.skip("the digits data set needs scikit-learn (pip install 'autojit[test]')")
    folder = tmp_path_factory.mktemp("flagship")
    plot, checkpoint = folder / "curve.png", folder / "run.pt"
    arguments = ["--quick", "--checkpoint", str(checkpoint)]
    arguments += ["--plot", str(plot)] if HAS_MATPLOTLIB else []
    return run_example("digits_mlp.py", *arguments), plot, checkpoint


def test_digits_mlp_quick_reaches_its_accuracy_bar(flagship):
    output, _, _ = flagship
    assert "digits MLP: compiled (autojit.compile)" in output
    accuracy = number_after(r"test accuracy: ([\d.]+)% after 3 epochs", output)
    assert accuracy >= 85.0, output
    assert "ok: test accuracy" in output
    # The loss goes down from the first epoch to the last.
    losses = [float(v) for v in re.findall(r"^epoch .* loss ([\d.]+) ", output, re.MULTILINE)]
    assert len(losses) == 3 and losses[-1] < losses[0], output


def test_digits_mlp_compares_compiled_with_eager(flagship):
    output, _, _ = flagship
    compiled = number_after(r"compiled step ([\d,]+) steps/s", output)
    eager = number_after(r"eager step ([\d,]+) steps/s", output)
    ratio = compiled_over_eager(output)
    assert compiled > 0 and eager > 0
    assert ratio == pytest.approx(compiled / eager, rel=0.05, abs=0.02)
    assert ratio > 1, output  # docs/examples.md: the compiled step is the faster one
    # The figure is a median over rounds taken in turns, printed with the rounds' range, in
    # which the median's ratio lies (issue: a single short pass moved the figure twofold).
    spread = re.search(r"median of (\d+) rounds, ([\d.]+)x-([\d.]+)x\)", output)
    assert spread, output
    rounds, low, high = spread.groups()
    assert int(rounds) == 5 and float(low) <= ratio + 0.01 and ratio <= float(high) + 0.01, output
    # drop_last: every batch has one shape, and Adam's learning rate is a runtime float from
    # the first trace (an optimizer's group floats), so StepLR's halving traces nothing again.
    assert "1 executable(s)" in output


def test_digits_mlp_resumed_from_a_checkpoint_ends_as_the_uninterrupted_run(flagship, tmp_path):
    """One epoch, then --resume for the other two: the same losses and accuracy as the three
    epochs in one run (the checkpoint holds the model, Adam's moments and step, StepLR's
    epoch, whose halving falls after the resume, and the shuffling generator)."""
    output, _, saved = flagship
    state = autojit.load(saved)
    assert state["epoch"] == 3 and len(state["history"]) == 3
    assert set(state) >= {"model", "optimizer", "scheduler", "shuffle"}
    assert state["scheduler"]["last_epoch"] == 3 and state["optimizer"]["state"]

    checkpoint = str(tmp_path / "run.pt")
    first = run_example("digits_mlp.py", "--quick", "--compile", "--epochs", "1",
                        "--min-accuracy", "0", "--checkpoint", checkpoint)
    assert "test accuracy: " in first and "after 1 epochs" in first
    resumed = run_example("digits_mlp.py", "--quick", "--compile", "--checkpoint", checkpoint,
                          "--resume")
    assert re.search(r"resumed from .*run\.pt: 1 epoch\(s\) done", resumed), resumed
    assert "epoch  1/3" not in resumed

    def epochs(text):
        return re.findall(r"^(epoch  [23]/3) .* loss ([\d.]+) .* test accuracy ([\d.]+%)", text,
                          re.MULTILINE)

    summary = r"^test accuracy: .*$"
    assert epochs(resumed) == epochs(output) and len(epochs(output)) == 2
    assert re.search(summary, resumed, re.MULTILINE).group() == \
        re.search(summary, output, re.MULTILINE).group()


def test_digits_mlp_resume_without_a_checkpoint_says_so(tmp_path, capsys):
    main = example_module("digits_mlp").main
    with pytest.raises(SystemExit) as exit_:
        main(["--resume"])
    assert exit_.value.code == 2
    assert "--resume needs --checkpoint PATH" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--resume", "--checkpoint", str(tmp_path / "missing.pt")])
    assert "--resume: no checkpoint at " in capsys.readouterr().err


def test_progress_is_plain_text_when_stdout_is_not_a_terminal(flagship):
    output, _, _ = flagship
    assert "\r" not in output
    assert re.search(r"^epoch  3/3 \[#+\] 21/21 loss [\d.]+ [\d,]+ samples/s", output,
                     re.MULTILINE), output


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="--plot needs matplotlib, which is not installed")
def test_digits_mlp_writes_the_training_curve_as_png(flagship):
    output, plot, _ = flagship
    assert f"training curve written to {plot}" in output
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot.stat().st_size > 5000  # two axes with curves, not an empty canvas


def test_digits_mlp_plot_without_matplotlib_stops_before_training_and_says_why(tmp_path):
    # A module named matplotlib that fails to import stands in for a missing package.
    (tmp_path / "matplotlib.py").write_text("raise ImportError('not installed')\n")
    env = {key: value for key, value in os.environ.items() if key != "AUTOJIT_DISABLE"}
    env["PYTHONPATH"] = str(tmp_path)
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "digits_mlp.py"), "--quick", "--plot",
         str(tmp_path / "curve.png")], capture_output=True, text=True, timeout=120, cwd=ROOT,
        env=env)
    assert completed.returncode == 1
    assert "--plot needs matplotlib, which is not installed: pip install 'autojit[examples]'" \
        in completed.stderr
    assert "epoch" not in completed.stdout and not (tmp_path / "curve.png").exists()


@needs_sklearn
def test_digits_mlp_runs_eagerly_under_autojit_disable():
    output = run_example("digits_mlp.py", "--quick", "--epochs", "1", "--min-accuracy", "0.5",
                         environment={"AUTOJIT_DISABLE": "1"})
    assert "eager (AUTOJIT_DISABLE=1 turns autojit.compile off)" in output
    assert "speed: compiled vs eager not measured (AUTOJIT_DISABLE=1)" in output


# ---- the other examples -----------------------------------------------------------------------

@needs_sklearn
def test_digits_cnn_quick_compiled():
    output = run_example("digits_cnn.py", "--quick", "--compile")
    assert "Conv2d(1, 8, kernel_size=(3, 3)" in output and "MaxPool2d(kernel_size=2" in output
    accuracy = number_after(r"test accuracy: ([\d.]+)% on 449 images", output)
    assert accuracy >= 75.0, output
    assert re.search(r"correct per digit: (\d:\d+/\d+ ){9}\d:\d+/\d+", output), output


def test_gradient_penalty_quick_error_decreases():
    output = run_example("gradient_penalty.py", "--quick")
    assert "compiled (autojit.compile)" in output
    start = number_after(r"max \|u - u\*\| before training: ([\d.]+)", output)
    final = number_after(r"on 201 points: max ([\d.]+)", output)
    assert final < 0.25 < start, output
    # The rate is read afresh on every call from the first trace: the schedule traces nothing.
    assert "the compiled step made 1 executable(s) in 1000 steps" in output
    assert number_after(r"eager step ([\d,]+) steps/s", output) > 0
    assert compiled_over_eager(output) > 1, output


def test_custom_function_and_hooks_quick():
    output = run_example("custom_function_and_hooks.py", "--quick")
    assert "gradient of plain round tensor([0., 0., 0., 0., 0., 0.])" in output
    assert "gradient through STE    tensor([0., 1., 1., 1., 1., 1.])" in output
    largest = number_after(r"largest \|\.grad\| ([\d.]+) \(clip 0.02\)", output)
    assert largest <= 0.02
    assert number_after(r"test accuracy with quantized activations: ([\d.]+)%", output) >= 90
    assert re.search(r"quantizer 0: -1.0: \d+%, -0.5: \d+%, \+0.0: \d+%", output), output


def test_custom_function_and_hooks_compiled_matches_eager():
    """The compiled step traces the Function and the hooks into its graph, without a graph
    break (run_example fails on a CompileWarning), and its hooks append each call's counts:
    the same clipped shares and accuracy as eager's."""
    eager = run_example("custom_function_and_hooks.py", "--quick", "--eager")
    compiled = run_example("custom_function_and_hooks.py", "--quick", "--compile")
    pattern = r"test accuracy with quantized activations: ([\d.]+)%"
    assert number_after(pattern, compiled) == pytest.approx(number_after(pattern, eager),
                                                            abs=0.5)
    clipped = r"clipped (\d+)% of gradient elements"
    assert re.findall(clipped, compiled) == re.findall(clipped, eager)
    assert len(re.findall(clipped, eager)) == 8 and re.findall(clipped, eager)[0] != "0"


def test_inspect_compiled_prints_each_view(tmp_path):
    """Every view, and the graph's DOT file written into a new temporary folder, none into the
    working directory."""
    output = run_example("inspect_compiled.py", "--quick", cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []
    picture = Path(number_text(r"wrote (.*train_step\.dot) \(Graphviz DOT\)", output))
    assert picture.parent.parent == Path(tempfile.gettempdir())
    assert picture.parent.name.startswith("autojit-inspect-")
    for heading in ("1. the traced graph", "1. after the optimization passes",
                    "2. fusion groups", "3. guards", "4. LLVM IR of one kernel",
                    "5. a result differentiated outside", "6. a picture of the training step"):
        assert f"==== {heading}" in output, heading
    assert re.search(r"%\d+:f32\[16,8\] = matmul", output)
    assert re.search(r"kernel k\d+_\w+\[", output)
    assert "define internal i32" in output and "loop:" in output
    assert picture.read_text().startswith('digraph "main.<locals>.train_step"')
    shutil.rmtree(picture.parent)
    assert re.search(r"return %\d+ out0, %\d+ saved", output), output
    assert "after loss.backward(): the parameters' gradients have norm" in output


def test_inspect_compiled_out_folder_is_made_when_missing(tmp_path):
    picture_folder = example_module("inspect_compiled").picture_folder
    folder = tmp_path / "a" / "b"
    assert picture_folder(str(folder)) == str(folder) and folder.is_dir()
    assert picture_folder(str(folder)) == str(folder)  # an existing one is used as it is
    temporary = Path(picture_folder(None))
    assert temporary.is_dir() and temporary.parent == Path(tempfile.gettempdir())
    temporary.rmdir()


def test_inspect_compiled_under_autojit_disable_says_there_is_nothing_to_show():
    output = run_example("inspect_compiled.py", environment={"AUTOJIT_DISABLE": "1"})
    assert "nothing is compiled" in output


# ---- the character-level transformer ----------------------------------------------------------

def test_char_transformer_quick_beats_the_unigram_baseline():
    output = run_example("char_transformer.py", "--quick")
    final = number_after(r"validation loss: ([\d.]+) nats", output)
    baseline = number_after(r"unigram baseline ([\d.]+) nats\n", output + "\n")
    assert final < baseline - 0.3, output
    assert number_after(r"compiled ([\d,]+) tokens/s", output) > 0
    assert number_after(r"eager ([\d,]+) tokens/s", output) > 0
    assert compiled_over_eager(output) > 1, output
    assert "sample:\n## " in output and "ok: validation loss" in output


def test_lstm_forecast_quick_beats_the_persistence_baseline():
    output = run_example("lstm_forecast.py", "--quick")
    error = number_after(r"test MSE \(normalized\): ([\d.]+)", output)
    baseline = number_after(r"persistence baseline ([\d.]+) ", output)
    assert error < 0.9 * baseline, output
    assert number_after(r"compiled ([\d,.]+) steps/s", output) > 0
    assert compiled_over_eager(output) > 1, output
    assert "ok: test MSE" in output


@needs_sklearn
@pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                    reason="needs mpi4py (pip install 'autojit[distributed]')")
def test_ddp_digits_in_two_processes_through_the_launcher():
    env = {key: value for key, value in os.environ.items()
           if key not in ("AUTOJIT_DISABLE", "PMI_RANK", "PMI_SIZE", "PMI_FD", "RANK",
                          "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    completed = subprocess.run(
        [sys.executable, "-m", "autojit.distributed.run", "--nproc-per-node", "2",
         str(ROOT / "examples" / "ddp_digits.py"), "--epochs", "1", "--min-accuracy", "0.6"],
        capture_output=True, text=True, timeout=180, cwd=ROOT, env=env)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout
    assert output.count("epoch ") == 1, output  # rank 0 alone prints
    assert "2 processes, compiled step, 0 eager calls: final test accuracy" in output


# ---- the command line every example shares ------------------------------------------------------

EXAMPLES = sorted(path.stem for path in (ROOT / "examples").glob("*.py")
                  if path.stem != "example_support")


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_takes_compile_and_eager(name, capsys):
    """--compile and --eager are on every example's command line (the two that have only one
    mode, autograd_basics and inspect_compiled, refuse the other with a reason)."""
    with pytest.raises(SystemExit) as exit_:
        example_module(name).main(["--help"])
    assert exit_.value.code == 0
    usage = capsys.readouterr().out
    assert "--compile" in usage and "--eager" in usage, usage


@pytest.mark.parametrize("name, refused", [("autograd_basics", "--compile"),
                                           ("inspect_compiled", "--eager")])
def test_single_mode_examples_refuse_the_other_mode_with_a_reason(name, refused, capsys):
    with pytest.raises(SystemExit) as exit_:
        example_module(name).main([refused])
    assert exit_.value.code == 2
    assert f"{refused}: " in capsys.readouterr().err


def test_modes_and_comparison_follow_the_flags():
    training_mode = example_module("example_support").training_mode
    parser = argparse.ArgumentParser()
    example_module("example_support").add_mode_arguments(parser, compiled_by_default=True,
                                                         compares=True)
    assert training_mode(parser.parse_args([]), True, True) == (True, True)
    assert training_mode(parser.parse_args(["--compile"]), True, True) == (True, False)
    assert training_mode(parser.parse_args(["--eager"]), True, True) == (False, False)
    assert training_mode(parser.parse_args([]), False) == (False, False)
    assert training_mode(parser.parse_args(["--compile"]), False) == (True, False)
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        parser.parse_args(["--compile", "--eager"])
