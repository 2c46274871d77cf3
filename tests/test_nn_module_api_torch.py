"""nn's module-level API against torch: the global module hooks (forward, backward and
registration) with their order and handles, the private base classes at torch.nn.modules'
paths with torch's class hierarchy, RNNBase.flatten_parameters, and DataParallel."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import autojit
import autojit.nn.modules

torch = pytest.importorskip("torch")

SUBMODULES = ["adaptive", "loss", "batchnorm", "instancenorm", "conv", "pooling", "dropout",
              "padding", "rnn", "activation", "linear", "container", "normalization", "sparse",
              "transformer", "upsampling", "flatten", "fold", "distance", "pixelshuffle",
              "channelshuffle", "lazy", "module"]
# Before their first call autojit's lazy norm layers are also their non-lazy class, which
# torch's become only when they materialize.
LAZY_NORMS = {f"Lazy{kind}Norm{n}d" for kind in ("Batch", "Instance") for n in (1, 2, 3)} | {
    "_LazyNormBase"}


def _classes():
    """(module path, name, torch class, autojit class or None) for each torch.nn module class."""
    found = []
    for sub in SUBMODULES:
        theirs = importlib.import_module("torch.nn.modules." + sub)
        ours = importlib.import_module("autojit.nn.modules." + sub)
        for name, cls in vars(theirs).items():
            if inspect.isclass(cls) and cls.__module__ == theirs.__name__ and \
                    issubclass(cls, torch.nn.Module):
                found.append((sub, name, cls, getattr(ours, name, None)))
    return found


def test_base_classes_at_torchs_paths_with_torchs_hierarchy():
    classes = _classes()
    names = {name for _, name, _, _ in classes} | {"Module", "LazyModuleMixin"}
    missing = []
    for sub, name, theirs, ours in classes:
        if ours is None:
            missing.append(f"{sub}.{name}")
            continue
        if name in LAZY_NORMS:
            continue
        expected = [c.__name__ for c in theirs.__mro__ if c.__name__ in names]
        assert [c.__name__ for c in ours.__mro__ if c.__name__ in names] == expected, name
    # What autojit.nn does not have at all, private bases included.
    assert sorted(missing) == [
        "container.Container", "conv._ConvTransposeMixin",
        "loss.LinearCrossEntropyLoss", "loss.NLLLoss2d"]


@pytest.mark.parametrize("layer, base", [
    ("InstanceNorm2d(3)", "batchnorm._BatchNorm"), ("Dropout2d()", "dropout.Dropout"),
    ("ZeroPad2d(1)", "padding.ConstantPad2d"), ("AvgPool1d(2)", "pooling._AvgPoolNd"),
    ("ReflectionPad1d(1)", "padding._ReflectionPadNd"), ("BatchNorm1d(2)", "batchnorm._NormBase")])
def test_isinstance_checks_as_torch(layer, base):
    def check(t):
        module, name = base.split(".")
        cls = getattr(importlib.import_module(f"{t.__name__}.nn.modules.{module}"), name)
        return isinstance(eval(f"t.nn.{layer}", {"t": t}), cls)

    assert check(autojit) == check(torch)


def test_a_subclass_of_the_private_loss_base():
    def run(t):
        from importlib import import_module

        loss_module = import_module(t.__name__ + ".nn.modules.loss")

        class Scaled(loss_module._WeightedLoss):
            def forward(self, input, target):  # noqa: A002
                return ((input - target) ** 2 * self.weight).sum() if \
                    self.reduction == "sum" else ((input - target) ** 2).mean()

        loss = Scaled(weight=t.tensor([1.0, 2.0]), reduction="sum")
        return loss.reduction, loss(t.tensor([1.0, 2.0]), t.zeros(2)).item(), \
            list(dict(loss.named_buffers()))

    assert run(autojit) == run(torch)


def _hooked_program(t):
    mm = importlib.import_module(t.__name__ + ".nn.modules.module")
    log = []
    handles = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__))),
        mm.register_module_forward_hook(lambda m, a, o: log.append(("gpost", type(m).__name__))),
        mm.register_module_forward_hook(lambda m, a, k, o: o * 2 if isinstance(
            m, t.nn.Linear) else None, with_kwargs=True),
        mm.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("gbpre", type(m).__name__))),
        mm.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("gback", type(m).__name__))),
    ]
    try:
        t.manual_seed(0)
        model = t.nn.Sequential(t.nn.Linear(3, 2), t.nn.Tanh())
        with t.no_grad():
            model[0].weight.copy_(t.tensor([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]]))
            model[0].bias.zero_()
        model[0].register_forward_pre_hook(lambda m, a: log.append(("pre", "Linear")))
        model[0].register_forward_hook(lambda m, a, o: log.append(("post", "Linear")))
        x = t.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        out = model(x)
        out.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    log.append(("after", type(model(x)).__name__))
    return log, out.detach().numpy(), x.grad.numpy()


def test_global_module_hooks_as_torch():
    (their_log, their_out, their_grad), (log, out, grad) = (_hooked_program(t)
                                                            for t in (torch, autojit))
    assert log == their_log
    np.testing.assert_allclose(out, their_out, rtol=1e-5)
    np.testing.assert_allclose(grad, their_grad, rtol=1e-5)


def test_registration_hooks_as_torch():
    def run(t):
        mm = importlib.import_module(t.__name__ + ".nn.modules.module")
        seen = []
        handles = [
            mm.register_module_buffer_registration_hook(
                lambda m, n, b: seen.append(("buffer", n)) or (b * 2 if b is not None else b)),
            mm.register_module_parameter_registration_hook(
                lambda m, n, p: seen.append(("param", n))),
            mm.register_module_module_registration_hook(
                lambda m, n, s: seen.append(("module", n, type(s).__name__))),
        ]
        try:
            norm = t.nn.BatchNorm1d(2)
            norm.extra = t.nn.Identity()
            norm.add_module("other", t.nn.ReLU())
            norm.register_buffer("scale", t.ones(2))
            norm.scale = t.ones(2)
        finally:
            for handle in handles:
                handle.remove()
        t.nn.Linear(1, 1)
        return seen, norm.scale.tolist(), norm.running_var.tolist()

    assert run(autojit) == run(torch)


def test_flatten_parameters_does_nothing_as_on_cpu():
    for t in (torch, autojit):
        lstm = t.nn.LSTM(2, 3, num_layers=2)
        before = [p.detach().clone() for p in lstm.parameters()]
        assert lstm.flatten_parameters() is None
        assert all(bool((a == b.detach()).all()) for a, b in zip(before, lstm.parameters()))


def test_data_parallel_without_a_device_calls_the_module():
    if autojit.cuda.is_available():
        pytest.skip("a GPU is present: DataParallel moves the module to it")

    def run(t):
        t.manual_seed(0)
        inner = t.nn.Linear(3, 2)
        with t.no_grad():
            inner.weight.copy_(t.tensor([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]]))
            inner.bias.fill_(0.5)
        model = t.nn.DataParallel(inner)
        x = t.ones(4, 3, requires_grad=True)
        out = model(x)
        out.sum().backward()
        return (sorted(model.state_dict()), model.device_ids, repr(model), hasattr(model, "dim"),
                out.detach().numpy().tolist(), x.grad.numpy().tolist(), model.module is inner)

    assert run(autojit) == run(torch)


def test_data_parallel_compiles():
    model = autojit.nn.DataParallel(autojit.nn.Sequential(autojit.nn.Linear(3, 4),
                                                          autojit.nn.ReLU()))
    # On the module's device (the GPU where one is, or the CUDA simulator's): a copy from
    # another device inside the compiled function would need the data, and break the graph.
    x = autojit.randn(5, 3).to(next(model.parameters()).device)
    compiled = autojit.compile(model, fullgraph=True)
    np.testing.assert_allclose(compiled(x).detach().cpu().numpy(),
                               model(x).detach().cpu().numpy(), rtol=1e-6)


def test_buffer_marks_a_tensor_to_register_as_torchs():
    results = []
    for library in (autojit, torch):
        module = library.nn.Module()
        module.kept = library.nn.Buffer(library.ones(2))
        module.scratch = library.nn.Buffer(library.zeros(3), persistent=False)
        module.grown = library.nn.Buffer(library.ones(2, requires_grad=True))
        module.kept = library.full((2,), 5.0)  # a plain tensor replaces a buffer: still one
        marked = library.nn.Buffer(library.arange(3.0))
        empty = library.nn.Buffer()
        results.append((
            [name for name, _ in module.named_buffers()], list(module.state_dict()),
            module.kept.tolist(), module.grown.requires_grad, module.grown.is_leaf,
            type(marked).__name__, isinstance(marked, library.nn.Buffer),
            isinstance(library.ones(1), library.nn.Buffer), marked.persistent,
            tuple(empty.shape)))
    assert results[0] == results[1]
    with pytest.raises(AttributeError, match="'int' object has no attribute 'detach'"):
        autojit.nn.Buffer(3)


def _state_dict_hook_log(top) -> list:
    log = []
    model = top.nn.Sequential(top.nn.Linear(2, 2), top.nn.Linear(2, 1))

    def renaming(state, prefix, metadata, strict, missing, unexpected, errors):
        log.append(("pre", prefix, sorted(state)))
        if prefix + "old_w" in state:
            state[prefix + "weight"] = state.pop(prefix + "old_w")

    model[0]._register_load_state_dict_pre_hook(renaming)
    handle = model[1].register_load_state_dict_pre_hook(
        lambda module, state, prefix, *rest: log.append(("public", type(module).__name__, prefix)))

    def clearing(module, keys):
        log.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.unexpected_keys.clear()

    model.register_load_state_dict_post_hook(clearing)
    model[0].register_state_dict_pre_hook(lambda module, prefix, keep: log.append(
        ("save pre", prefix, keep)))
    model[1]._register_state_dict_hook(lambda module, state, prefix, metadata: log.append(
        ("save post", prefix, sorted(state))))
    state = model.state_dict()
    renamed = dict(state)
    renamed["0.old_w"] = renamed.pop("0.weight")
    renamed["extra"] = top.ones(1)
    log.append(str(model.load_state_dict(renamed)))
    handle.remove()
    model.load_state_dict(state)
    model.register_load_state_dict_post_hook(lambda module, keys: 3)
    try:
        model.load_state_dict(state)
    except AssertionError as error:
        log.append(str(error))
    return log


def test_state_dict_hooks_run_as_torchs():
    assert _state_dict_hook_log(autojit) == _state_dict_hook_log(torch)


def _conversions(top) -> list:
    class ToByCpu(top.nn.Linear):
        def to(self, *args, **kwargs):  # a library's to() that calls cpu(): no recursion
            return self.cpu()

    layer = ToByCpu(2, 2)
    layer.to("cpu")
    layer.double()
    complex_layer = top.nn.Linear(2, 2).to(top.complex64)
    complex_layer.float()  # float() converts floating-point tensors only
    return [str(layer.weight.dtype).split(".")[-1], str(complex_layer.weight.dtype).split(".")[-1]]


def test_float_and_cpu_do_not_go_through_to():
    assert _conversions(autojit) == _conversions(torch)


def _own_apply(top) -> list:
    class Bounded(top.nn.Module):
        """gpytorch's constraints: a plain tensor attribute converted by the module's own
        _apply with the function it is given, which must return a tensor for every tensor."""

        def __init__(self):
            super().__init__()
            self.scale = top.nn.Parameter(top.ones(2))
            self.bound = top.tensor([0.5, 2.0])
            self.steps = top.tensor([1, 2])

        def _apply(self, fn, recurse=True):
            self.bound = fn(self.bound)
            self.steps = fn(self.steps)
            return super()._apply(fn, recurse)

    model = top.nn.Sequential(Bounded())
    model.double()
    model.to(top.float32)
    model.to("cpu")
    inner = model[0]
    return [str(t.dtype).split(".")[-1] for t in (inner.scale, inner.bound, inner.steps)]


def test_a_modules_own_apply_gets_a_function_of_tensors():
    assert _own_apply(autojit) == _own_apply(torch)


def _extra_state_log(top) -> list:
    class Counter(top.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = top.nn.Linear(2, 2)
            self.count = 3

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]

    log = []
    state = top.nn.Sequential(Counter(), top.nn.ReLU()).state_dict()
    log.append((list(state), state["0._extra_state"]))
    state["0._extra_state"] = {"count": 7}
    fresh = top.nn.Sequential(Counter(), top.nn.ReLU())
    log.append((str(fresh.load_state_dict(state)), fresh[0].count))
    del state["0._extra_state"]
    for strict in (True, False):
        try:
            log.append(str(fresh.load_state_dict(state, strict=strict)))
        except RuntimeError as error:
            log.append(str(error))
    plain = top.nn.Sequential(top.nn.Linear(2, 2))
    extra = dict(plain.state_dict(), **{"0._extra_state": 1})
    try:
        plain.load_state_dict(extra)
    except RuntimeError as error:
        log.append(str(error))
    try:
        top.nn.Linear(2, 2).get_extra_state()
    except RuntimeError as error:
        log.append(str(error))
    module = importlib.import_module(top.__name__ + ".nn.modules.module")
    log.append(module._EXTRA_STATE_KEY_SUFFIX)
    return log


def test_extra_state_is_saved_and_loaded_as_torchs():
    assert _extra_state_log(autojit) == _extra_state_log(torch)


def test_squeeze_takes_dims_as_separate_arguments_as_torchs_method():
    for top in (torch, autojit):
        x = top.zeros(1, 1, 3, 1)
        assert [tuple(x.squeeze(0, 1).shape), tuple(x.squeeze(0, 3, 1).shape),
                tuple(x.squeeze(dim=(0, 1)).shape), tuple(x.squeeze(1).shape),
                tuple(x.squeeze().shape)] == [(3, 1), (3,), (3, 1), (1, 3, 1), (3,)]
