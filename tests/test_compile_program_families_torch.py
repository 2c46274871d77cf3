"""Training steps from program families the random programs did not draw, run three ways:
torch eager, autojit eager and autojit compiled, every call observed and compared.

Each program is written once against a framework's names (`program(torch, wrap)`), wraps its
step with `wrap` (the identity, or `autojit.compile`) and returns what a user could see after
each call: parameters and their `.grad` (values, whether a new tensor), versions, optimizer
and scheduler state, what the step returned. Compiled must equal eager and eager must equal
torch; a compiled step must also have run compiled (no fallback to eager), unless the program
says it may fall back, and then with a CompileWarning.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

torch = pytest.importorskip("torch")


def _plain(value):
    if isinstance(value, (torch.Tensor, autojit.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape),
                value.detach().numpy().copy())
    if isinstance(value, tuple) and value and value[0] == "tensor":  # observed already
        return value
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _same(a, b, path="") -> list:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor") or a[1:3] != b[1:3]:
            return [f"{path}: {a[:3]} != {b[:3] if isinstance(b, tuple) else b!r}"]
        close = np.allclose(a[3], b[3], rtol=1e-6, atol=1e-7, equal_nan=True)
        return [] if close else [f"{path}: {a[3].tolist()} != {b[3].tolist()}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} != {list(b)}"]
        return [d for key in a for d in _same(a[key], b[key], f"{path}[{key!r}]")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _same(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if np.isclose(a, b, rtol=1e-6, atol=1e-9) else [f"{path}: {a} != {b}"]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def run_three(program, fallback_allowed: bool = False):
    """Run `program` on torch, autojit eager and autojit compiled; assert they agree. Returns
    the compiled function's stats."""
    expected = _plain(program(torch, lambda fn: fn))
    eager = _plain(program(autojit, lambda fn: fn))
    assert not _same(expected, eager), "autojit eager != torch:\n" + "\n".join(
        _same(expected, eager)[:8])
    compiled_functions = []

    def wrap(fn):
        compiled_functions.append(autojit.compile(fn))
        return compiled_functions[-1]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = _plain(program(autojit, wrap))
    assert not _same(eager, compiled), "compiled != eager:\n" + "\n".join(
        _same(eager, compiled)[:8])
    warned = [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]
    stats = compiled_functions[0].stats()
    if not fallback_allowed:
        assert not warned, warned
        assert stats.eager_calls == 0 and stats.compiled_calls > 0, stats
    return stats


def linear(torch, inputs=3, outputs=2):
    """A float64 Linear layer with the same values on every framework."""
    layer = torch.nn.Linear(inputs, outputs, dtype=torch.float64)
    rng = np.random.default_rng(inputs * 10 + outputs)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    return layer


# ---- .data written inside the step -------------------------------------------------------------

def data_writes(torch, wrap):
    model = linear(torch)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        opt.step()
        model.bias.data = model.bias.data * 0.5
        vec = torch.nn.utils.parameters_to_vector(model.parameters())
        torch.nn.utils.vector_to_parameters(vec * 0.9, model.parameters())
        return loss.detach()

    step = wrap(step)
    seen = []
    for call in range(4):
        loss = step(torch.ones(4, 3, dtype=torch.float64) * (call + 1) * 0.1)
        seen.append(_plain([loss, model.weight, model.bias, model.weight._version,
                            model.bias._version]))
    return seen


def test_data_assigned_inside_the_step():
    run_three(data_writes)


def data_new_shape(torch, wrap):
    model = linear(torch)

    def step(x):
        out = model(x).sum()
        model.bias.data = torch.zeros(4, dtype=torch.float64)
        return out.detach()

    step = wrap(step)
    seen = []
    for _ in range(2):
        seen.append([step(torch.ones(1, 3, dtype=torch.float64)).shape, model.bias.shape])
        model.bias.data = torch.zeros(2, dtype=torch.float64)
    return seen


def test_data_of_another_shape_falls_back_with_a_warning():
    run_three(data_new_shape, fallback_allowed=True)


# ---- .grad assigned from gradients computed inside the step ------------------------------------

def func_grads(torch, wrap, with_optimizer: bool):
    model = linear(torch)
    opt = torch.optim.SGD(model.parameters(), lr=0.1) if with_optimizer else None
    func = torch.func

    def step(x):
        params = {name: p.detach() for name, p in model.named_parameters()}

        def loss_of(params):
            return func.functional_call(model, params, (x,)).pow(2).sum()

        grads = func.grad(loss_of)(params)
        for name, p in model.named_parameters():
            p.grad = grads[name]
        if opt is not None:
            opt.step()

    step = wrap(step)
    seen, previous = [], None
    for call in range(4):
        step(torch.ones(4, 3, dtype=torch.float64) * (call + 1) * 0.1)
        grad = model.weight.grad
        seen.append(_plain([grad, grad is not previous, model.weight, model.bias.grad]))
        previous = grad
    return seen


@pytest.mark.parametrize("with_optimizer", [False, True])
def test_torch_func_gradients_assigned_to_grad(with_optimizer):
    run_three(lambda torch, wrap: func_grads(torch, wrap, with_optimizer))


def materialized_grads(torch, wrap):
    model, extra = linear(torch), torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
    opt = torch.optim.SGD([*model.parameters(), extra], lr=0.1)

    def step(x):
        loss = model(x).sum()
        model.weight.grad, extra.grad = torch.autograd.grad(
            loss, [model.weight, extra], allow_unused=True, materialize_grads=True)
        opt.step()

    step = wrap(step)
    seen, previous = [], None
    for call in range(4):
        step(torch.ones(4, 3, dtype=torch.float64) * (call + 1))
        seen.append(_plain([extra.grad, extra.grad is not previous, extra, model.weight]))
        previous = extra.grad
        extra.grad.add_(5.0)  # the next call's zeros are new ones
    return seen


def test_materialized_zeros_assigned_to_grad_are_new_each_call():
    run_three(materialized_grads)


# ---- global module hooks ---------------------------------------------------------------------

def global_hooks(torch, wrap, raises: bool):
    from_module = torch.nn.modules.module
    model = torch.nn.Sequential(linear(torch, 3, 3), torch.nn.Tanh(), linear(torch, 3, 1))
    counts = {"pre": 0, "post": 0}

    def pre(module, args):
        counts["pre"] += 1

    def post(module, args, output):
        counts["post"] += 1
        return output * 1.0

    handles = [from_module.register_module_forward_pre_hook(pre),
               from_module.register_module_forward_hook(post)]

    def step(x):
        loss = model(x).sum()
        if raises:
            torch.ones(2, 3) @ torch.ones(2, 3)
        return loss

    step = wrap(step)
    seen = []
    try:
        for call in range(4):
            try:
                out = step(torch.ones(2, 3, dtype=torch.float64) * call)
            except RuntimeError as error:
                out = type(error).__name__
            seen.append(_plain([out, dict(counts)]))
    finally:
        for handle in handles:
            handle.remove()
    return seen


@pytest.mark.parametrize("raises", [False, True])
def test_global_module_hooks_run_on_every_call(raises):
    run_three(lambda torch, wrap: global_hooks(torch, wrap, raises), fallback_allowed=raises)


# ---- schedulers stepped inside the step --------------------------------------------------------

def one_cycle(torch, wrap, optimizer: str):
    model = linear(torch, 3, 1)
    opt = getattr(torch.optim, optimizer)(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10,
                                                cycle_momentum=True)

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        sched.step()

    step = wrap(step)
    seen = []
    for call in range(4):
        step(torch.ones(2, 3, dtype=torch.float64) * call)
        group = opt.param_groups[0]
        seen.append(_plain([list(group["betas"]), type(group["betas"]).__name__, group["lr"],
                            model.weight]))
    return seen


@pytest.mark.parametrize("optimizer", ["Adam", "Adamax", "NAdam"])
def test_one_cycle_cycling_betas_inside_the_step(optimizer):
    run_three(lambda torch, wrap: one_cycle(torch, wrap, optimizer))


def sequential(torch, wrap, kind: str):
    schedulers = torch.optim.lr_scheduler
    model = linear(torch, 3, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    if kind == "sequential":
        inner = [schedulers.LinearLR(opt, start_factor=0.5, total_iters=2),
                 schedulers.ExponentialLR(opt, gamma=0.9)]
        sched = schedulers.SequentialLR(opt, inner, milestones=[2])
    else:
        inner = [schedulers.ExponentialLR(opt, gamma=0.9), schedulers.StepLR(opt, 2)]
        sched = schedulers.ChainedScheduler(inner)

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        sched.step()

    step = wrap(step)
    seen = []
    for _ in range(6):
        step(torch.ones(2, 3, dtype=torch.float64))
        seen.append(_plain([opt.param_groups[0]["lr"], sched.get_last_lr(),
                            [s._last_lr for s in inner],
                            [type(s._last_lr[0]).__name__ for s in inner],
                            [s._last_lr is sched._last_lr for s in inner], model.weight]))
    return seen


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_composed_schedulers_inside_the_step(kind):
    run_three(lambda torch, wrap: sequential(torch, wrap, kind))


# ---- GradScaler skipping steps -----------------------------------------------------------------

def scaled_steps(torch, wrap, optimizer: str):
    model = linear(torch, 3, 1)
    opt = getattr(torch.optim, optimizer)(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")

    def step(x):
        opt.zero_grad()
        scaler.scale(model(x).sum()).backward()
        scaler.step(opt)
        scaler.update()

    step = wrap(step)
    seen = []
    for call in range(7):
        scale = float("inf") if call in (1, 2, 5) else 1.0
        step(torch.ones(2, 3, dtype=torch.float64) * scale)
        seen.append(_plain([model.weight._version, model.bias._version, scaler.get_scale(),
                            model.weight, len(opt.state)]))
    return seen


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_grad_scaler_skipped_steps_leave_versions(optimizer):
    run_three(lambda torch, wrap: scaled_steps(torch, wrap, optimizer))


# ---- what the step returns ---------------------------------------------------------------------

LOG: list = []


def returns_global_list(torch, wrap):
    LOG.clear()

    def step(x):
        LOG.append((x * 2).sum().item())
        return LOG

    step = wrap(step)
    seen = []
    for call in range(3):
        out = step(torch.ones(2, dtype=torch.float64) * call)
        seen.append([out is LOG, list(out)])
    return seen


def test_a_returned_global_list_is_the_list_itself():
    run_three(returns_global_list)


@dataclasses.dataclass
class ModelOutput(OrderedDict):
    """transformers' ModelOutput, in short: a dataclass and an OrderedDict of its fields that
    are set, read as attributes, keys or positions."""

    logits: object = None
    loss: object = None
    hidden: object = None

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value

    def __getitem__(self, key):
        return dict(self.items())[key] if isinstance(key, str) else self.to_tuple()[key]

    def update(self, *args, **kwargs):
        raise RuntimeError("update() is not allowed on a ModelOutput")

    def to_tuple(self):
        return tuple(self[key] for key in self.keys())


def returns_model_output(torch, wrap):
    model = linear(torch)

    def forward(x):
        logits = model(x)
        return ModelOutput(logits=logits, loss=logits.pow(2).mean())

    forward = wrap(forward)
    seen = []
    for call in range(3):
        out = forward(torch.ones(2, 3, dtype=torch.float64) * call)
        out.loss.backward()
        seen.append(_plain([type(out).__name__, list(out.keys()), out.logits, out[1],
                            out.hidden, out["loss"], model.weight.grad]))
    return seen


def test_a_returned_ordered_dict_subclass_keeps_its_type():
    run_three(returns_model_output)


# ---- a global of a notebook's cell -------------------------------------------------------------

CELL = """
EPS = 1.0


class Scaled(torch.nn.Module):
    def forward(self, x):
        return x * EPS


def scaled(x):
    return x * EPS
"""


def notebook_globals(torch, wrap, namespace: dict):
    namespace = {**namespace, "torch": torch}
    exec(CELL, namespace)  # noqa: S102 - a cell run into a namespace, as a notebook does
    module, function = wrap(namespace["Scaled"]()), namespace["scaled"]
    seen = [_plain([module(torch.ones(2)), function(torch.ones(2))])]
    exec("EPS = 10.0", namespace)  # noqa: S102 - the next cell
    seen.append(_plain([module(torch.ones(2)), function(torch.ones(2))]))
    return seen


@pytest.mark.parametrize("namespace", [{}, {"__name__": "__main__"}],
                         ids=["no_name", "main"])
def test_a_global_changed_by_a_later_notebook_cell(namespace):
    run_three(lambda torch, wrap: notebook_globals(torch, wrap, namespace))


# ---- losses reduced by torch's deprecated size_average and reduce ----------------------------

def legacy_reductions(torch, wrap, reduce, size_average):
    model = linear(torch, 3, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    F = torch.nn.functional
    weights = torch.tensor([1.0, 0.5, 2.0, 0.25], dtype=torch.float64)

    def step(x, labels, y):
        opt.zero_grad()
        out = model(x)
        terms = (F.cross_entropy(out, labels, reduce=reduce, size_average=size_average),
                 F.mse_loss(out, y, reduce=reduce, size_average=size_average),
                 F.smooth_l1_loss(out, y, reduce=reduce, size_average=size_average),
                 F.binary_cross_entropy_with_logits(out, y.sigmoid(), reduce=reduce,
                                                    size_average=size_average))
        # per-sample losses (reduce=False) weighted by sample; reduced ones scaled alike
        loss = sum((term * weights[: term.shape[0]].reshape(-1, *[1] * (term.ndim - 1))).sum()
                   if term.ndim else term * 0.5 for term in terms)
        loss.backward()
        opt.step()
        return [term.detach() for term in terms]

    step = wrap(step)
    seen = []
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = torch.tensor(rng.standard_normal((4, 3)))
        labels = torch.tensor(rng.integers(0, 4, 4))
        y = torch.tensor(rng.standard_normal((4, 4)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch's deprecation warning
            seen.append(_plain([step(x, labels, y), model.weight, model.bias]))
    return seen


@pytest.mark.parametrize("reduce, size_average", [(False, None), (None, False), (True, True)],
                         ids=["none", "sum", "mean"])
def test_losses_reduced_by_legacy_size_average_and_reduce(reduce, size_average):
    run_three(lambda torch, wrap: legacy_reductions(torch, wrap, reduce, size_average))
