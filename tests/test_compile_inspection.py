"""What a compiled function shows about itself reads well: guards name objects by their source
paths, kernels have unique names that say what they fuse (in the plan, the IR printout, the
profiler and the LLVM functions alike), and the graph draws as Graphviz DOT with kernels as
boxes and forward and backward nodes apart."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import autojit
from autojit import nn

# The placeholder names the generated guard code uses (GuardSet.constant, the walk's roots).
PLACEHOLDER = re.compile(r"\b[A-Z]\d+\b")


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh())


def _step():
    autojit.manual_seed(0)
    model = TwoLayer()
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    @autojit.compile
    def step(x, y):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    x, y = autojit.randn(16, 4), autojit.randn(16, 2)
    step(x, y)
    step(x, y)
    return step


def test_guards_name_objects_by_their_source_paths():
    text = _step().guards()
    assert "model.fc1.weight._payload.shape == (8, 4)" in text
    assert "model.fc2.bias._requires_grad is True" in text
    assert "optimizer.param_groups[0]['lr'].__class__ is float" in text
    assert "model.fc1.__class__ is Linear" in text
    assert "args[0]._dtype is autojit.float32" in text
    for line in text.splitlines():
        condition = line.split("  # ")[0]
        assert not PLACEHOLDER.search(condition), line


def test_captured_tensors_take_their_most_readable_name():
    step = _step()
    header = step.forward_ir().splitlines()[0]
    assert "captured %2:f32[8,4] model.fc1.weight" in header
    assert "['params']" not in header  # not opt.param_groups[0]['params'][0]
    sequential = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    compiled = autojit.compile(lambda x: sequential(x).sum())
    compiled(autojit.ones(2, 3))
    assert "sequential[0].weight" in compiled.forward_ir().splitlines()[0]


def test_kernel_names_are_unique_and_say_what_they_fuse():
    step = _step()
    plan = step.executables[0].plan
    names = [step_.kernel.name for step_ in plan.steps if hasattr(step_, "kernel")]
    assert len(names) == len(set(names)) > 3
    assert all(re.fullmatch(r"k\d+(_[a-z_]+)+", name) for name in names), names
    assert "k0_add_tanh" in names
    # The IR printout says which kernel (or product) runs each node ...
    printed = step.forward_ir()
    assert re.search(r"= tanh %\d+  # k0_add_tanh", printed)
    assert re.search(r"= matmul %\d+ %\d+  # gemm matmul", printed)
    # ... the LLVM functions carry the same names, without the number in the plan (kernels of
    # the same structure share their code) ...
    functions = re.findall(r"define \S+ @\"?autojit_(\w+?)_[0-9a-f]{16}\b",
                           step.kernel_source())
    assert set(functions) == {name.split("_", 1)[1] for name in names}
    # ... and so do the profiler's events.
    x, y = autojit.randn(16, 4), autojit.randn(16, 2)
    with autojit.autograd.profiler.profile() as profile:
        step(x, y)
    events = {event.name for event in profile.function_events}
    assert {f"autojit::kernel {name}" for name in names} <= events


def test_a_result_differentiated_outside_marks_its_backward_graph_too():
    compiled = autojit.compile(lambda x: (x.tanh() * 2).sum())
    leaf = autojit.ones(3, requires_grad=True)
    compiled(leaf).backward()
    assert re.search(r"= tanh %\d+  # k0_tanh", compiled.backward_ir())


def test_graph_dot_draws_kernels_as_boxes_and_the_backward_apart():
    step = _step()
    dot = step.graph_dot()
    assert dot.startswith('digraph "_step.<locals>.step" {')
    plan = step.executables[0].plan
    for name in (step_.kernel.name for step_ in plan.steps if hasattr(step_, "kernel")):
        assert f'subgraph "cluster_p0_{name}"' in dot
    # The forward tanh is forward-coloured; the gradient of tanh (1 - y*y) is backward.
    assert re.search(r'label="%\d+ = tanh\\nf32\[16,8\]", fillcolor="#dbe8ff"', dot)
    assert re.search(r'label="%\d+ = sub 1\\nf32\[16,8\]", fillcolor="#ffe0cc"', dot)
    assert 'label="model.fc1.weight\\nf32[8,4]"' in dot
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    drawn = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True,
                           timeout=60, check=True)
    assert "<svg" in drawn.stdout


def test_graph_dot_of_a_compiled_backward_is_a_second_part():
    compiled = autojit.compile(lambda x: (x.tanh() * 2).sum())
    leaf = autojit.ones(3, requires_grad=True)
    compiled(leaf).backward()
    dot = compiled.graph_dot()
    forward, backward = dot.split('subgraph "cluster_p1_part"')
    assert "#ffe0cc" not in forward
    assert '<lambda>: backward"' in backward
    assert re.search(r'p1_v\d+ \[label="%\d+ = mul[^"]*", fillcolor="#ffe0cc"', backward)
    # tanh(x) is recomputed in the backward (cheaper than saving it): a forward value.
    assert re.search(r'p1_v\d+ \[label="%\d+ = tanh[^"]*", fillcolor="#dbe8ff"', backward)


def test_the_phases_of_a_traced_graph_survive_the_passes():
    weight = autojit.ones(3, requires_grad=True)
    graph = autojit.make_graph(
        lambda x: autojit.autograd.grad((x * weight).tanh().sum(), weight)[0] * 2,
        autojit.ones(3))
    backward_ops = {node.op.name for node in graph.nodes if node.output.id in graph.backward_ids}
    assert {"expand", "sub"} <= backward_ops and "tanh" not in backward_ops
    from autojit.ir.passes import optimize

    optimized = optimize(graph)
    assert any(node.op.name == "sub" and node.output.id in optimized.backward_ids
               for node in optimized.nodes)
    assert all(node.output.id not in optimized.backward_ids
               for node in optimized.nodes if node.op.name == "tanh")


def test_guards_show_the_programs_state_and_hide_autojits_own():
    step = _step()
    text = step.guards()
    assert "at 0x" not in text  # optimizer state is named after its parameter
    assert "optimizer.state[model.fc1.weight]" in text
    assert "state.dispatch" not in text and "_forward_hooks" not in text
    assert "conditions on autojit's own state" in text.splitlines()[-1]
    detailed = step.guards(detail=True)
    assert "state.dispatch" in detailed and "_forward_hooks" in detailed


def test_every_line_of_a_guards_log_is_prefixed(monkeypatch, capsys):
    monkeypatch.setenv("AUTOJIT_LOG", "guards")
    _step()
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert lines and all(line.startswith("[autojit:guards] ") for line in lines)


def test_a_recompile_reason_gives_the_keys_before_and_now():
    weights = {"a": 1.0, "b": -2.0}
    compiled = autojit.compile(lambda x: sum(x * value for value in weights.values()))
    compiled(autojit.ones(2))
    weights["c"] = 3.0
    compiled(autojit.ones(2))
    (reason,) = compiled.recompile_reasons
    assert reason == "the keys of weights: ['a', 'b'] -> ['a', 'b', 'c']", reason


def test_explain_says_when_a_trace_made_the_optimizers_state():
    model = nn.Linear(3, 1)
    optimizer = autojit.optim.Adam(model.parameters())

    def step(x):
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        return loss

    first = str(autojit.compiler.explain(step)(autojit.ones(2, 3)))
    assert "served that call only" in first and "optimizer.state" in first
    second = str(autojit.compiler.explain(step)(autojit.ones(2, 3)))
    assert "served that call only" not in second


def test_a_condition_on_a_scalar_read_every_call_names_it_as_the_user_does():
    """SGD's update branches on `momentum != 0`, a float read afresh on every call: its guard
    line names the group as the step's code does, not the closure cell the guard reads it
    through (`<cell>.cell_contents.param_groups[0]['momentum']`)."""
    model = nn.Linear(3, 1)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    @autojit.compile
    def step(x):
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()

    for _ in range(3):
        step(autojit.ones(2, 3))
    lines = [line for line in step.guards().splitlines() if "scalar read on every call" in line]
    assert lines and lines[0].startswith("optimizer.param_groups[0]['momentum'] != 0  # "), lines
    assert "<cell>" not in step.guards() and "cell_contents" not in step.guards()
