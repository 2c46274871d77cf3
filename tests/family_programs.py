"""Random training programs of the families the first generator (random_programs.py) does not
draw, as Python source written against a framework named `torch`: what family_runs.py runs on
torch, on autojit eagerly and on autojit compiled, and compares.

A program is drawn as a spec, a dict of plain values (JSON-able: a failing one can be printed
and drawn again), and rendered as a whole script. Its model is one of four (`MODELS`: an MLP, an
MLP with BatchNorm and an in-place ReLU, a small ResNet of convolutions with BatchNorm, residual
adds and in-place ReLUs, a model of a ModuleList and a ModuleDict), float64, its parameters set
from NumPy so that every framework starts from the same values. It is compiled one of two
ways (`spec["mode"]`):

- "step": the whole training step `step(x, y)` wrapped by `WRAP`;
- "submodule": the model's `block` wrapped by `WRAP` (`model.block = torch.compile(...)`),
  the loss, backward, optimizer and scheduler run outside it, as most torch.compile users do.

and made of the drawn features of each family (`FEATURES`: custom autograd Functions with
mark_dirty and with double backward, a gradient penalty through directly nested
checkpoints, global and module hooks, tensor hooks, `.data` writes,
torch.func's grad and vmap inside the step, checkpoint under autocast, a running-statistics
object or dict passed to the step (its tensors written in place, one assigned, the object
returned; a new one drawn between calls, as a generation loop hands a new cache to each
call), a Function returning
and differentiating into tensors a factory made and a copy filled, random draws from
generators and dropout, schedulers stepped inside the step, GradScaler with non-finite steps,
parametrizations, logging the loss), with drawn changes of the program's state between calls
(`MUTATIONS`: the ModuleList and ModuleDict grown, cut and switched, hooks added and removed,
generators reseeded, learning rates, train and eval, `.grad` cleared, parameters written, the
logger's level set, loggers made). The script
defines `step`, the calls, and `record(call, out)` after each one, which the runner gives.

Drawing goes through random_programs.Choices (hypothesis's `draw`, or a `random.Random`).
"""

from __future__ import annotations

import random

from random_programs import Choices

MODELS = ("mlp", "bn", "resnet", "listdict")
MODES = ("step", "step", "submodule")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw", "nadam", "adamax", "rmsprop")
# The optimizers with a momentum or betas a cycling scheduler moves.
CYCLING = ("momentum", "adam", "adamw", "nadam", "adamax", "rmsprop")
SCHEDULERS = ("none", "none", "onecycle", "sequential", "chained", "cyclic", "warm_restarts",
              "plateau")
GRADIENTS = ("backward", "backward", "backward", "autograd", "func")

_step = lambda spec: spec["mode"] == "step"  # noqa: E731
_no_bn = lambda spec: spec["model"] in ("mlp", "listdict")  # noqa: E731

# A feature: (where in the step, source lines, whether the spec allows it). Where: "setup"
# (after the model and optimizer are made), "forward" (after `out = model(x)`), "loss" (after
# the loss, before backward), "after" (after the optimizer's step) and "end". HEAD is the
# model's last Linear; {v} a value drawn from VALUES.
FEATURES = {
    "function_dirty": ("forward", "out = Twice.apply(out.clone())", _step),
    "nested_checkpoint_penalty": ("loss", "inner = lambda h: checkpoint(lambda k: k.sin() * k, h, "
                                  "use_reentrant=False)\n"
                                  "(penalty,) = torch.autograd.grad(checkpoint(inner, out, "
                                  "use_reentrant=False).sum(), HEAD.weight, create_graph=True)\n"
                                  "loss = loss + 0.01 * penalty.pow(2).sum()", _step),
    "function_double": ("loss", "(penalty,) = torch.autograd.grad(Cube.apply(out).sum(), "
                        "HEAD.weight, create_graph=True)\n"
                        "loss = loss + 0.01 * penalty.pow(2).sum()", _step),
    "global_hook": ("setup", "handles.append(torch.nn.modules.module."
                    "register_module_forward_hook(count_forward))", None),
    "global_pre_hook": ("setup", "handles.append(torch.nn.modules.module."
                        "register_module_forward_pre_hook(count_pre))", None),
    "global_backward_hook": ("setup", "handles.append(torch.nn.modules.module."
                             "register_module_full_backward_hook(count_backward))", None),
    "module_hook": ("setup", "handles.append(HEAD.register_forward_hook(scale_output))", None),
    "module_pre_hook": ("setup", "handles.append(HEAD.register_forward_pre_hook(shift_input))",
                        None),
    "tensor_hook": ("forward", "out.register_hook(lambda g: g * {v})", _step),
    # a hook on a view that covers its base sees the view's own gradient; one registered on a
    # view before its base is written stays with the old value (torch's rules)
    "view_hook": ("forward", "out = out * 1\nwhole = out[:]\n"
                  "whole.register_hook(lambda g: g * {v})\nout = out + whole", _step),
    "written_view_hook": ("forward", "out = out * 1\nfirst = out[:1]\n"
                          "first.register_hook(lambda g: g * {v})\nout.mul_({v})\n"
                          "out = out + first", _step),
    "data_assign": ("after", "HEAD.bias.data = HEAD.bias.data * {v}", _step),
    "data_inplace": ("after", "HEAD.weight.data.clamp_(-{v}, {v})", _step),
    "vector_write": ("after", "vector = torch.nn.utils.parameters_to_vector(model.parameters())"
                     "\ntorch.nn.utils.vector_to_parameters(vector * {v}, model.parameters())",
                     _step),
    "func_vmap": ("loss", "rows = torch.func.vmap(lambda row: row.pow(2).sum())(out)\n"
                  "loss = loss + 0.01 * rows.mean()", _step),
    "checkpoint": ("forward", "out = model.head(checkpoint(model.block, x, "
                   "use_reentrant={v}))", lambda spec: spec["model"] != "listdict"),
    "autocast_checkpoint": ("forward", 'with torch.autocast("cpu", dtype=torch.bfloat16):\n'
                            "    hidden = checkpoint(model.block, x, use_reentrant={v})\n"
                            "out = model.head(hidden.to(DTYPE))",
                            lambda spec: spec["model"] != "listdict"),
    "generator_noise": ("forward", "out = out + 0.01 * torch.randn(out.shape, generator=GEN, "
                        "dtype=DTYPE)", _step),
    "global_noise": ("forward", "out = out + 0.01 * torch.randn(out.shape, dtype=DTYPE)",
                     _step),
    "dropout": ("forward", "out = torch.nn.functional.dropout(out, {v}, model.training)", _step),
    "parametrize_scale": ("setup", 'torch.nn.utils.parametrize.register_parametrization(HEAD, '
                          '"weight", Halved())', None),
    "weight_norm": ("setup", "torch.nn.utils.parametrizations.weight_norm(HEAD)", None),
    "filled_function": ("setup", "model.block = torch.nn.Sequential(model.block, Filled())",
                        lambda spec: spec["model"] != "listdict"),
    "count_calls": ("end", 'counts["calls"] = counts.get("calls", 0) + 1', _step),
    "item_branch": ("end", 'if loss.item() > {v}:\n    counts["big"] = counts.get("big", 0) + 1',
                    _step),
    "history": ("end", "history.append(loss.item())", _step),
    "log_loss": ("end", 'LOG.info("loss %.6g", loss.item())\nLOG.debug("debug %.3f", loss.item())',
                 _step),
    # a progress bar updated inside the step: deferred calls, whose state is never traced
    "progress_bar": ("end", 'BAR.set_postfix(loss=loss.item())\n'
                     'BAR.set_description(f"loss {loss.item():.6g}")\nBAR.update(1)', _step),
    "history_tensor": ("end", "history.append(loss)", _step),
    # `stats` is an argument of the step (see _step_source), returned with the loss: a
    # Stats object, or a dict of the same tensors
    "stats_object": ("end", "stats.total.add_(loss.detach())\nstats.count.add_(1)\n"
                     "stats.last = loss.detach() * {v}", _step),
    "stats_dict": ("end", 'stats["total"].add_(loss.detach())\nstats["count"].add_(1)\n'
                   'stats["last"] = loss.detach() * {v}', _step),
}
VALUES = {"tensor_hook": (0.5, 2.0), "view_hook": (0.5, 3.0), "written_view_hook": (0.5, 2.0),
          "data_assign": (0.5, 0.9), "data_inplace": (0.3, 1.0),
          "vector_write": (0.9, 1.01), "checkpoint": (False, True),
          "autocast_checkpoint": (False, True), "dropout": (0.25, 0.5),
          "item_branch": (0.1, 1.0), "stats_object": (1.0, 2.0),
          "stats_dict": (1.0, 2.0)}
# The features that make a program's values differ from torch's: random draws (another
# generator) and bfloat16 (another rounding). Such programs are compared eager with compiled.
NOT_TORCH = {"generator_noise", "global_noise", "dropout", "autocast_checkpoint"}

_listdict = lambda spec: spec["model"] == "listdict"  # noqa: E731
_has_stats = lambda spec: bool({"stats_object", "stats_dict"} & {  # noqa: E731
    name for name, _ in spec["features"]})
_has_gen = lambda spec: "generator_noise" in [name for name, _ in spec["features"]]  # noqa: E731
MUTATIONS = {
    "lr": ('opt.param_groups[0]["lr"] = {v}', lambda spec: spec["sched"] == "none"),
    "train": ("model.train()", None),
    "eval": ("model.eval()", None),
    "zero_grad": ("model.zero_grad()", None),
    "grad_none": ("HEAD.weight.grad = None", None),
    "data_mul": ("HEAD.bias.data.mul_({v})", None),
    "global_hook_add": ("handles.append(torch.nn.modules.module."
                        "register_module_forward_hook(count_forward))", None),
    "module_hook_add": ("handles.append(HEAD.register_forward_hook(scale_output))", None),
    "hook_remove": ("if handles:\n    handles.pop().remove()", None),
    "reseed": ("GEN.manual_seed({v})", _has_gen),
    "append_block": ("inner.blocks.append(fresh_linear(6, 6, {v}))", _listdict),
    "pop_block": ("if len(inner.blocks) > 1:\n    del inner.blocks[-1]", _listdict),
    "fresh_stats": ("stats = new_stats()", lambda spec: _has_stats(spec)),
    "log_level": ("LOG.setLevel({v})", None),
    "new_logger": ('logging.getLogger("family.made{v}")', None),
    "new_bar": ("BAR = tqdm(file=io.StringIO(), mininterval=0)", None),
    "switch_head": ('inner.head_name = "b" if inner.head_name == "a" else "a"', _listdict),
    "replace_head": ('inner.heads["b"] = fresh_linear(6, 6, {v})', _listdict),
    "add_head": ('inner.heads["c"] = fresh_linear(6, 6, {v})\ninner.head_name = "c"',
                 _listdict),
}
MUTATION_VALUES = {"lr": (0.05, 0.2), "data_mul": (0.5, 2.0), "reseed": (1, 2),
                   "append_block": (1, 2), "replace_head": (3, 4), "add_head": (5, 6),
                   "log_level": (10, 30), "new_logger": (1, 2)}


def draw_spec(choices: Choices) -> dict:
    """One program: everything `render` needs, as plain values."""
    spec = {
        "seed": choices.integer(0, 999),
        "model": choices.pick(MODELS),
        "mode": choices.pick(MODES),
        "opt": choices.pick(OPTIMIZERS),
        "grads": "backward",
        "scaler": False,
    }
    spec["sched"] = choices.pick([name for name in SCHEDULERS if name not in (
        "onecycle", "cyclic") or spec["opt"] in CYCLING])
    if spec["mode"] == "step":
        spec["grads"] = choices.pick([name for name in GRADIENTS
                                      if name != "func" or _no_bn(spec)])
        spec["scaler"] = spec["grads"] == "backward" and choices.chance(20)
    allowed = [name for name, entry in FEATURES.items()
               if entry[2] is None or entry[2](spec)]
    spec["features"] = []
    for _ in range(choices.integer(1, 4)):
        name = choices.pick(allowed)
        if name not in [drawn for drawn, _ in spec["features"]]:
            spec["features"].append([name, choices.pick(VALUES[name]) if name in VALUES
                                     else None])
    mutations = [name for name, (_, rule) in MUTATIONS.items() if rule is None or rule(spec)]
    calls = []
    for index in range(choices.integer(2, 5)):
        before = []
        if index:
            for _ in range(choices.integer(0, 2)):
                name = choices.pick(mutations)
                before.append([name, choices.pick(MUTATION_VALUES[name])
                               if name in MUTATION_VALUES else None])
        calls.append({"rows": choices.pick((4, 4, 6, 3)), "before": before,
                      "inf": spec["scaler"] and index > 0 and choices.chance(30),
                      "no_grad": spec["mode"] == "submodule" and index > 1 and
                      choices.chance(15)})
    spec["calls"] = calls
    return spec


def random_spec(seed: int) -> dict:
    return draw_spec(Choices(rng=random.Random(seed)))


def compares_with_torch(spec: dict) -> bool:
    """Whether torch's run of the program must give autojit eager's values: no random draws,
    no bfloat16, and no hooks counting module calls in a checkpoint's recomputation (torch's
    non-reentrant one stops once it has the tensors it needs, before the last hooks run)."""
    names = {name for name, _ in spec["features"]}
    counting = {"global_hook", "global_pre_hook", "global_backward_hook"} & names or any(
        name == "global_hook_add" for call in spec["calls"] for name, _ in call["before"])
    # torch's full backward hooks are an autograd.Function without setup_context, which its
    # torch.func transforms refuse (autojit's run under them).
    refused = spec["grads"] == "func" and "global_backward_hook" in names
    return not names & NOT_TORCH and not (counting and "checkpoint" in names) and not refused


# ---- rendering ----------------------------------------------------------------------------------

HEADER = '''import io
import logging

import numpy as np
from tqdm import tqdm

DTYPE = torch.float64
checkpoint = torch.utils.checkpoint.checkpoint
counts = {{}}
history = []
handles = []
records = []
torch.manual_seed({seed})
# No monitor thread: it adjusts bars from another thread (and tqdm's own iteration of its
# instances there raised "Set changed size during iteration" while programs made bars).
tqdm.monitor_interval = 0
BAR = tqdm(file=io.StringIO(), mininterval=0)
LOG = logging.getLogger("family")
LOG.setLevel(logging.INFO)
LOG.propagate = False


class Records(logging.Handler):
    """Each record's message, kept in `records`; one of the handles the run removes."""

    def emit(self, record):
        records.append(record.getMessage())

    def remove(self):
        LOG.removeHandler(self)


handles.append(Records())
LOG.addHandler(handles[-1])


def fill(module, seed):
    """The same values on every framework: from NumPy, by parameter name."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            p.copy_(torch.tensor(rng.uniform(-0.6, 0.6, tuple(p.shape)), dtype=DTYPE))
    return module


class Stats:
    """Running statistics a step is handed (as a generation loop hands its cache)."""

    def __init__(self):
        self.total = torch.zeros((), dtype=DTYPE)
        self.count = torch.zeros((), dtype=torch.int64)
        self.last = torch.zeros((), dtype=DTYPE)


def fresh_linear(inputs, outputs, seed):
    return fill(torch.nn.Linear(inputs, outputs, dtype=DTYPE), seed)


def batch(rows, seed, image):
    rng = np.random.default_rng(seed)
    shape = (rows, 2, 5, 5) if image else (rows, 4)
    x = torch.tensor(rng.uniform(-1, 1, shape), dtype=DTYPE)
    y = torch.tensor(rng.uniform(-1, 1, (rows, 2)), dtype=DTYPE)
    return x, y


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2.0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2.0


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad


class FilledSquare(torch.autograd.Function):
    """x * x returned in a tensor a factory made and a copy filled, its gradient likewise: as
    transformers' grouped-expert op fills zeros with out= products."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with torch.no_grad():
            out = torch.zeros(x.shape, dtype=x.dtype)
            out.copy_(x * x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        grad_x = torch.zeros_like(x)
        grad_x.copy_(2 * x * grad)
        return grad_x


class Filled(torch.nn.Module):
    def forward(self, x):
        return 0.5 * FilledSquare.apply(x) + x


class Halved(torch.nn.Module):
    def forward(self, weight):
        return weight * 0.5


def count_forward(module, args, output):
    if type(module).__name__ != "OptimizedModule":  # torch.compile's proxy
        counts["forward"] = counts.get("forward", 0) + 1


def count_pre(module, args):
    if type(module).__name__ != "OptimizedModule":  # torch.compile's proxy
        counts["pre"] = counts.get("pre", 0) + 1


def count_backward(module, grad_input, grad_output):
    if type(module).__name__ != "OptimizedModule":  # torch.compile's proxy
        counts["backward"] = counts.get("backward", 0) + 1


def scale_output(module, args, output):
    return output * 0.5


def shift_input(module, args):
    return (args[0] + 0.1,)


class Flat(torch.nn.Module):
    def forward(self, x):
        return x.mean((2, 3))


class Residual(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False, dtype=DTYPE)
        self.bn1 = torch.nn.BatchNorm2d(channels, dtype=DTYPE)
        self.relu = torch.nn.ReLU(inplace=True)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False, dtype=DTYPE)
        self.bn2 = torch.nn.BatchNorm2d(channels, dtype=DTYPE)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


class Blocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(4, 6, dtype=DTYPE)
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(6, 6, dtype=DTYPE)])
        self.heads = torch.nn.ModuleDict({{"a": torch.nn.Linear(6, 6, dtype=DTYPE),
                                          "b": torch.nn.Linear(6, 6, dtype=DTYPE)}})
        self.head_name = "a"

    def forward(self, x):
        h = self.inner(x).tanh()
        for block in self.blocks:
            h = block(h).tanh() + h
        return self.heads[self.head_name](h)


'''

BLOCKS = {
    "mlp": "torch.nn.Sequential(torch.nn.Linear(4, 6, dtype=DTYPE), torch.nn.Tanh())",
    "bn": ("torch.nn.Sequential(torch.nn.Linear(4, 6, bias=False, dtype=DTYPE),\n"
           "                    torch.nn.BatchNorm1d(6, dtype=DTYPE), "
           "torch.nn.ReLU(inplace=True))"),
    "resnet": ("torch.nn.Sequential(torch.nn.Conv2d(2, 6, 3, padding=1, bias=False, "
               "dtype=DTYPE),\n                    torch.nn.BatchNorm2d(6, dtype=DTYPE), "
               "torch.nn.ReLU(inplace=True),\n                    Residual(6), Flat())"),
    "listdict": "Blocks()",
}
MODEL = '''class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = {block}
        self.head = torch.nn.Linear(6, 2, dtype=DTYPE)

    def forward(self, x):
        return self.head(self.block(x))


model = fill(Net(), {seed})
inner = model.block  # the block itself, also once model.block is compiled
'''

OPTIMIZER_SOURCE = {
    "sgd": "torch.optim.SGD(model.parameters(), lr=0.1)",
    "momentum": "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)",
    "adam": "torch.optim.Adam(model.parameters(), lr=0.01)",
    "adamw": "torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)",
    "nadam": "torch.optim.NAdam(model.parameters(), lr=0.01)",
    "adamax": "torch.optim.Adamax(model.parameters(), lr=0.01)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)",
}
SCHEDULER_SOURCE = {
    "onecycle": ("torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=20, "
                 "cycle_momentum=True)"),
    "sequential": ("torch.optim.lr_scheduler.SequentialLR(opt, [\n"
                   "    torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2),"
                   "\n    torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)], "
                   "milestones=[2])"),
    "chained": ("torch.optim.lr_scheduler.ChainedScheduler([\n"
                "    torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),\n"
                "    torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)])"),
    "cyclic": ("torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, "
               "step_size_up=2, cycle_momentum=True)"),
    "warm_restarts": "torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)",
    "plateau": "torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)",
}


def _fill(template: str, value) -> str:
    text = template.replace("{v}", repr(value)) if "{v}" in template else template
    return text.replace("HEAD", "model.head")


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line if line else line for line in text.splitlines())


def _lines(spec: dict, slot: str) -> list:
    return [_fill(FEATURES[name][1], value) for name, value in spec["features"]
            if FEATURES[name][0] == slot]


def _gradients(spec: dict) -> list:
    """The lines that leave the gradients in .grad (scaled by the GradScaler, if any)."""
    kind = spec["grads"]
    if kind == "autograd":
        return ["params = [p for p in model.parameters() if p.requires_grad]",
                "grads = torch.autograd.grad(loss, params, allow_unused=True, "
                "materialize_grads=True)",
                "for p, g in zip(params, grads):", "    p.grad = g"]
    if kind == "func":
        return ["params = {name: p.detach() for name, p in model.named_parameters()}",
                "def loss_of(params):",
                "    return ((torch.func.functional_call(model, params, (x,)) - y) ** 2)"
                ".mean()",
                "grads = torch.func.grad(loss_of)(params)",
                "for name, p in model.named_parameters():", "    p.grad = grads[name]"]
    if spec["scaler"]:
        return ["scaler.scale(loss).backward()"]
    return ["loss.backward()"]


def _optimizer_step(spec: dict) -> list:
    lines = ["scaler.step(opt)", "scaler.update()"] if spec["scaler"] else ["opt.step()"]
    if spec["sched"] == "plateau":
        lines.append("sched.step(loss.item())")
    elif spec["sched"] != "none":
        lines.append("sched.step()")
    return lines


def _step_source(spec: dict) -> str:
    """The training step, compiled whole, or around a compiled block (mode "submodule")."""
    body = ["opt.zero_grad()", "out = model(x)"] + _lines(spec, "forward")
    body.append("loss = ((out - y) ** 2).mean()")
    body += _lines(spec, "loss")
    body += _gradients(spec) + _optimizer_step(spec) + _lines(spec, "after") + \
        _lines(spec, "end")
    if _has_stats(spec):
        body.append("return loss.detach(), stats")
        return "def step(x, y, stats):\n" + _indent("\n".join(body), 4)
    body.append("return loss.detach()")
    return "def step(x, y):\n" + _indent("\n".join(body), 4)


def _call_source(spec: dict, index: int, call: dict) -> str:
    lines = [f"# call {index}"]
    for name, value in call["before"]:
        lines += ["try:", _indent(_fill(MUTATIONS[name][0], value), 4),
                  "except Exception as error:",
                  f"    errors.append(({index}, {name!r}, type(error).__name__))"]
    image = spec["model"] == "resnet"
    lines.append(f"x, y = batch({call['rows']}, {spec['seed'] * 10 + index}, {image})")
    if call["inf"]:
        lines.append("x = x * float('inf')")
    call_line = "out = step(x, y, stats)" if _has_stats(spec) else "out = step(x, y)"
    if call["no_grad"]:
        call_line = "with torch.no_grad():\n    out = model(x).sum()"
    lines += ["try:", _indent(call_line, 4), "except Exception as error:", "    out = error",
              f"record({index}, out)"]
    return "\n".join(lines)


def render(spec: dict) -> str:
    """The program's source: it reads `torch`, `WRAP` and `record`, defines everything else."""
    parts = [HEADER.format(seed=spec["seed"]),
             MODEL.format(block=BLOCKS[spec["model"]], seed=spec["seed"]),
             "errors = []", "GEN = torch.Generator().manual_seed(" + str(spec["seed"]) + ")",
             "opt = " + OPTIMIZER_SOURCE[spec["opt"]]]
    if spec["sched"] != "none":
        parts.append("sched = " + SCHEDULER_SOURCE[spec["sched"]])
    if spec["scaler"]:
        parts.append('scaler = torch.amp.GradScaler("cpu", init_scale=256.0)')
    parts += _lines(spec, "setup")
    if _has_stats(spec):
        in_dict = "stats_dict" in [name for name, _ in spec["features"]]
        parts.append("new_stats = (lambda: dict(vars(Stats()))) if " + repr(in_dict) +
                     " else Stats\nstats = new_stats()")
    parts.append("\n\n" + _step_source(spec) + "\n\n")
    if spec["mode"] == "step":
        parts.append("step = WRAP(step)")
    else:
        parts.append("model.block = WRAP(model.block)")
    parts += [_call_source(spec, index, call) for index, call in enumerate(spec["calls"])]
    return "\n".join(parts) + "\n"
