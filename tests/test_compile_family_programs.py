"""Differential tests: random training programs of the families the first generator does not
draw (tests/family_programs.py), run on torch, on autojit eagerly and on autojit compiled.

Each example draws a program: a model (an MLP, one with BatchNorm and an in-place ReLU, a small
ResNet, one of a ModuleList and a ModuleDict), compiled whole or as a compiled block inside an
eager model with the backward and optimizer outside, with features of each family (custom
Functions with mark_dirty and double backward, global and module hooks, `.data` writes,
torch.func inside the step, checkpoint under autocast, generators and dropout, schedulers
stepped inside, GradScaler, parametrizations) and changes of state between calls. After every
call the runs must agree (tests/family_runs.py): compiled with eager, and eager with torch
where the program draws no random numbers and casts nothing to bfloat16. A CompileWarning may
say a call ran eagerly; a silent difference fails with the program's source.
AUTOJIT_FUZZ_EXAMPLES runs more examples; the command line of tests/family_runs.py runs
thousands.
"""

from __future__ import annotations

import os

import pytest
from family_programs import FEATURES, MUTATIONS, draw_spec, random_spec, render
from family_runs import outcome, report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_programs import Choices

EXAMPLES = int(os.environ.get("AUTOJIT_FUZZ_EXAMPLES", "30"))
SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def programs(draw):
    return draw_spec(Choices(draw=draw))


def check(spec: dict) -> dict:
    result = outcome(spec)
    assert not result["compiled"] and not result["torch"], report(spec, result)
    return result


@SETTINGS
@given(programs())
def test_family_programs_compiled_equal_eager_equal_torch(spec):
    check(spec)


def test_the_drawn_programs_cover_every_family():
    """Over a few hundred drawn programs, every feature and every mutation is drawn, and both
    modes, all models and every way of computing the gradients."""
    drawn = set()
    for seed in range(400):
        spec = random_spec(seed)
        drawn.update(f"feature:{name}" for name, _ in spec["features"])
        drawn.update(f"mutation:{name}" for call in spec["calls"] for name, _ in call["before"])
        drawn.update({f"mode:{spec['mode']}", f"model:{spec['model']}", f"grads:{spec['grads']}",
                      f"sched:{spec['sched']}", f"scaler:{spec['scaler']}"})
    wanted = {f"feature:{name}" for name in FEATURES} | {f"mutation:{name}" for name in MUTATIONS}
    assert wanted <= drawn, sorted(wanted - drawn)
    assert {"mode:step", "mode:submodule", "model:resnet", "model:listdict", "grads:func",
            "grads:autograd", "sched:onecycle", "sched:sequential", "scaler:True"} <= drawn


# One program of each class of failure the family programs found, fixed since.
CLASSES = {
    # A compiled block inside a non-reentrant checkpoint: its residuals dropped and the block
    # run again in backward (BatchNorm's running statistics updated twice, as eager's).
    "checkpointed compiled block": {
        "seed": 3, "model": "bn", "mode": "submodule", "opt": "sgd", "grads": "backward",
        "scaler": False, "sched": "none", "features": [["checkpoint", False]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [["eval", None]], "inf": False, "no_grad": False}]},
    # A module's full backward hook warning in a compiled block's traced backward: the call
    # runs eagerly with a CompileWarning (it raised the graph break's error in backward).
    "backward hook warning in a compiled block": {
        "seed": 5, "model": "mlp", "mode": "submodule", "opt": "adam", "grads": "backward",
        "scaler": False, "sched": "none", "features": [["global_backward_hook", None]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [], "inf": False, "no_grad": False}]},
    # Global hooks counting a compiled block's calls: torch.compile's proxy is a Module
    # too (the hooks skip it), and the parametrization runs once at registration.
    "global hooks around a compiled block with a parametrization": {
        "seed": 7, "model": "resnet", "mode": "submodule", "opt": "adamax",
        "grads": "backward", "scaler": False, "sched": "chained",
        "features": [["global_pre_hook", None], ["parametrize_scale", None]],
        "calls": [{"rows": 3, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [["data_mul", 2.0]], "inf": False, "no_grad": False}]},
    # GradScaler with non-finite steps, SequentialLR and a global hook, compiled whole.
    "scaled steps with composed schedulers": {
        "seed": 9, "model": "mlp", "mode": "step", "opt": "adam", "grads": "backward",
        "scaler": True, "sched": "sequential", "features": [["global_hook", None]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [], "inf": True, "no_grad": False},
                  {"rows": 4, "before": [], "inf": False, "no_grad": False}]},
    # torch.func's gradients assigned to .grad, and .data written, in a compiled step.
    "func gradients and data writes": {
        "seed": 11, "model": "listdict", "mode": "step", "opt": "momentum", "grads": "func",
        "scaler": False, "sched": "onecycle",
        "features": [["vector_write", 0.9], ["data_assign", 0.5]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [["append_block", 1]], "inf": False, "no_grad": False},
                  {"rows": 6, "before": [["switch_head", None]], "inf": False,
                   "no_grad": False}]},
    # A custom Function returning a tensor a factory made and a copy filled, in a compiled
    # block with the backward outside (transformers' grouped experts): its inputs got no
    # gradient, the filled tensor taken for an input of the block's traced backward.
    "filled factory tensor of a Function in a compiled block": {
        "seed": 7, "model": "mlp", "mode": "submodule", "opt": "sgd", "grads": "backward",
        "scaler": False, "sched": "none", "features": [["filled_function", None]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [], "inf": False, "no_grad": False}]},
    # A gradient penalty through a checkpoint whose function is another checkpoint: the outer
    # segment kept the inner one's saved inputs as its nodes' own outputs, and the second
    # derivative the penalty's backward takes was wrong, eagerly and compiled.
    "second derivative through nested checkpoints": {
        "seed": 3, "model": "mlp", "mode": "step", "opt": "sgd", "grads": "backward",
        "scaler": False, "sched": "none", "features": [["nested_checkpoint_penalty", None]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [], "inf": False, "no_grad": False}]},
    # A statistics object handed to the step, a new one between calls (a generation loop's
    # cache): its tensors were constants of the trace, guarded by identity, so each new
    # object traced again; read at their place now, the step must still return the very
    # object it was given (the traced call's was returned on every later call).
    "statistics object handed to the step, a new one between calls": {
        "seed": 5, "model": "mlp", "mode": "step", "opt": "adam", "grads": "backward",
        "scaler": False, "sched": "none", "features": [["stats_object", 2.0]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [["fresh_stats", None]], "inf": False,
                   "no_grad": False},
                  {"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [["fresh_stats", None]], "inf": False,
                   "no_grad": False}]},
    # Global forward hooks counting module calls, and a block compiled on its own inside a
    # non-reentrant checkpoint: its recomputation ran the whole block compiled (12 counts a
    # step) where eager's stops after the last saving op (10).
    "global hooks around a checkpointed compiled block": {
        "seed": 0, "model": "mlp", "mode": "submodule", "opt": "sgd", "grads": "backward",
        "scaler": False, "sched": "none",
        "features": [["global_hook", None], ["checkpoint", False]],
        "calls": [{"rows": 4, "before": [], "inf": False, "no_grad": False},
                  {"rows": 4, "before": [], "inf": False, "no_grad": False}]},
}
CLASSES["statistics dict handed to the step, a new one between calls"] = dict(
    CLASSES["statistics object handed to the step, a new one between calls"],
    features=[["stats_dict", 2.0]])


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_the_program_of_each_class_found(name):
    spec = CLASSES[name]
    render(spec)  # a valid spec
    result = check(spec)
    if name == "backward hook warning in a compiled block":
        assert result["warnings"], "the traced backward's graph break gave no CompileWarning"
