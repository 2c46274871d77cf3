"""autojit.nn.utils.prune against torch.nn.utils.prune, on the Pruning Tutorial's LeNet with the
same weights in both: l1_unstructured, ln_structured (n = 1, 2, inf, -inf along dims 0, 1 and
-1), iterative pruning through a PruningContainer, global_unstructured, custom_from_mask,
importance_scores, identity and remove (masks, pruned and original values, parameter, buffer
and state_dict names, the hooks in _forward_pre_hooks, forward outputs and gradients,
is_pruned), the errors of amount validation and misuse (type and message), the count and
structure of what the random methods prune, and a compiled training step of a pruned Linear.

Every weight gets a distinct magnitude, across layers too, so the topk selections have no ties
and both libraries must pick the same entries and channels."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import autojit
import autojit.nn.utils.prune as prune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as torch_prune  # noqa: E402

LIBRARIES = ((torch, torch_prune), (autojit, prune))


def _lenet(lib):
    functional = lib.nn.functional

    class LeNet(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(1, 6, 3)
            self.conv2 = lib.nn.Conv2d(6, 16, 3)
            self.fc1 = lib.nn.Linear(16 * 5 * 5, 120)
            self.fc2 = lib.nn.Linear(120, 84)
            self.fc3 = lib.nn.Linear(84, 10)

        def forward(self, x):
            x = functional.max_pool2d(functional.relu(self.conv1(x)), (2, 2))
            x = functional.max_pool2d(functional.relu(self.conv2(x)), 2)
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            x = functional.relu(self.fc1(x))
            x = functional.relu(self.fc2(x))
            return self.fc3(x)

    return LeNet()


def _distinct_state(model, seed=0) -> dict:
    """A state for the model whose entries all have different magnitudes (random signs)."""
    rng = np.random.default_rng(seed)
    shapes = {key: tuple(value.shape) for key, value in model.state_dict().items()}
    total = sum(math.prod(shape) for shape in shapes.values())
    magnitudes = (rng.permutation(total) + 1.0) / total * 0.3
    signs = rng.choice([-1.0, 1.0], total)
    state, offset = {}, 0
    for key, shape in shapes.items():
        count = math.prod(shape)
        values = magnitudes[offset:offset + count] * signs[offset:offset + count]
        state[key] = values.reshape(shape).astype(np.float32)
        offset += count
    return state


def _models(seed=0):
    """torch's and autojit's LeNet with the same distinct weights."""
    models = [_lenet(lib) for lib, _ in LIBRARIES]
    state = _distinct_state(models[0], seed)
    for (lib, _), model in zip(LIBRARIES, models):
        model.load_state_dict({key: lib.tensor(value) for key, value in state.items()})
    return models


def _numpy(tensor) -> np.ndarray:
    return tensor.detach().numpy()


def _names(module) -> tuple:
    return ([name for name, _ in module.named_parameters()],
            [name for name, _ in module.named_buffers()], list(module.state_dict()))


def _hook_types(module) -> list:
    return [type(hook).__name__ for hook in module._forward_pre_hooks.values()]


def _assert_same_module(reference, module) -> None:
    """Names, hooks and every parameter, buffer and pruned attribute as torch's."""
    assert _names(module) == _names(reference)
    assert _hook_types(module) == _hook_types(reference)
    for (key, expected), (_, value) in zip(reference.state_dict().items(),
                                           module.state_dict().items()):
        np.testing.assert_array_equal(_numpy(value), _numpy(expected), err_msg=key)
    for hook in reference._forward_pre_hooks.values():
        if isinstance(hook, torch_prune.BasePruningMethod):
            name = hook._tensor_name
            np.testing.assert_array_equal(_numpy(getattr(module, name)),
                                          _numpy(getattr(reference, name)), err_msg=name)
            assert not isinstance(getattr(module, name), autojit.nn.Parameter)


def _forward_and_grads(reference, model, seed=1) -> None:
    """Outputs and gradients of every parameter (the _orig ones too) as torch's."""
    array = np.random.default_rng(seed).standard_normal((3, 1, 28, 28)).astype(np.float32)
    results = []
    for (lib, _), module in zip(LIBRARIES, (reference, model)):
        module.zero_grad()
        output = module(lib.tensor(array))
        output.square().sum().backward()
        grads = {name: _numpy(param.grad) for name, param in module.named_parameters()}
        results.append((_numpy(output), grads))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-4, atol=1e-5)
    assert list(results[1][1]) == list(results[0][1])
    for name, expected in results[0][1].items():
        # Sums of float32 products that cancel: the tolerance scales with the gradient.
        np.testing.assert_allclose(results[1][1][name], expected, rtol=1e-4,
                                   atol=1e-5 * max(1.0, np.abs(expected).max()), err_msg=name)


def test_prune_is_reachable_as_torch_names_it():
    assert autojit.nn.utils.prune is prune
    assert set(torch_prune.__dict__) >= {name for name in prune.__all__}
    with pytest.raises(TypeError):
        prune.BasePruningMethod()


def test_tutorial_flow_matches_torch():
    reference, model = _models()
    for (_, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        conv = lenet.conv1
        original = conv.weight
        library_prune.l1_unstructured(conv, name="weight", amount=0.3)
        assert conv.weight_orig is original and "weight" in conv.__dict__
        library_prune.l1_unstructured(conv, name="bias", amount=3)
    _assert_same_module(reference.conv1, model.conv1)
    assert int((model.conv1.weight == 0).sum()) == round(0.3 * 54)
    _forward_and_grads(reference, model)

    for (_, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        library_prune.ln_structured(lenet.conv1, name="weight", amount=0.5, n=2, dim=0)
    _assert_same_module(reference.conv1, model.conv1)
    hook = next(hook for hook in model.conv1._forward_pre_hooks.values()
                if hook._tensor_name == "weight")
    assert isinstance(hook, prune.PruningContainer)
    assert [type(method).__name__ for method in hook] == ["L1Unstructured", "LnStructured"]
    assert list(model.state_dict()) == list(reference.state_dict())
    _forward_and_grads(reference, model)
    assert prune.is_pruned(model) and not prune.is_pruned(model.fc1)

    for (_, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        library_prune.remove(lenet.conv1, "weight")
    _assert_same_module(reference.conv1, model.conv1)
    assert isinstance(model.conv1.weight, autojit.nn.Parameter)
    assert _hook_types(model.conv1) == ["L1Unstructured"]
    for (_, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        library_prune.remove(lenet.conv1, "bias")
    assert not prune.is_pruned(model)
    _forward_and_grads(reference, model)


@pytest.mark.parametrize("n", [2, math.inf, 1, -math.inf])
@pytest.mark.parametrize("layer, dim, amount", [("conv2", 0, 0.5), ("conv2", 1, 2),
                                                ("fc1", 0, 0.3), ("fc1", 1, 100),
                                                ("fc2", -1, 0.25)])
def test_ln_structured_matches_torch(layer, dim, amount, n):
    reference, model = _models()
    for (_, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        library_prune.ln_structured(getattr(lenet, layer), "weight", amount=amount, n=n, dim=dim)
    _assert_same_module(getattr(reference, layer), getattr(model, layer))
    mask = _numpy(getattr(model, layer).weight_mask)
    others = tuple(axis for axis in range(mask.ndim) if axis != dim % mask.ndim)
    per_channel = mask.sum(axis=others)
    channels = mask.shape[dim]
    pruned = amount if isinstance(amount, int) else round(amount * channels)
    assert sorted(set(per_channel)) == [0.0, mask.size / channels]
    assert (per_channel == 0).sum() == pruned


def test_iterative_pruning_builds_a_container_as_torch():
    reference, model = _models(seed=3)
    steps = [("l1_unstructured", dict(amount=0.4)),
             ("ln_structured", dict(amount=0.25, n=2, dim=0)),
             ("ln_structured", dict(amount=0.25, n=1, dim=0)),
             ("ln_structured", dict(amount=3, n=math.inf, dim=1)),
             ("ln_structured", dict(amount=2, n=2, dim=-1)),
             ("l1_unstructured", dict(amount=40)),
             ("identity", {})]
    for function, kwargs in steps:
        for (_, library_prune), lenet in zip(LIBRARIES, (reference, model)):
            getattr(library_prune, function)(lenet.fc2, "weight", **kwargs)
        _assert_same_module(reference.fc2, model.fc2)
    container = model.fc2._forward_pre_hooks[next(iter(model.fc2._forward_pre_hooks))]
    assert len(container) == 7 and container[1].dim == 0
    # Each step acts on what the earlier ones left: the structured steps count the channels
    # that still have an entry, and the last L1 step prunes 40 entries that were still there.
    assert int((model.fc2.weight_mask == 0).sum()) == int((reference.fc2.weight_mask == 0).sum())
    _forward_and_grads(reference, model)


@pytest.mark.parametrize("amount", [0.2, 5000])
@pytest.mark.parametrize("scores", [False, True])
def test_global_unstructured_matches_torch(amount, scores):
    reference, model = _models(seed=4)
    rng = np.random.default_rng(5)
    score_arrays = {name: rng.permutation(getattr(reference, name).weight.numel())
                    .reshape(getattr(reference, name).weight.shape).astype(np.float32)
                    for name in ("conv2", "fc1")}
    for (lib, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        # fc3 already pruned: the global ranking must leave its pruned entries out.
        library_prune.l1_unstructured(lenet.fc3, "weight", amount=0.5)
        pairs = [(getattr(lenet, name), "weight")
                 for name in ("conv1", "conv2", "fc1", "fc2", "fc3")]
        importance = ({(getattr(lenet, name), "weight"): lib.tensor(array)
                       for name, array in score_arrays.items()} if scores else None)
        library_prune.global_unstructured(pairs, pruning_method=library_prune.L1Unstructured,
                                          importance_scores=importance, amount=amount)
    for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
        _assert_same_module(getattr(reference, name), getattr(model, name))
    assert _hook_types(model.fc3) == ["PruningContainer"]
    assert _hook_types(model.fc1) == ["CustomFromMask"]
    _forward_and_grads(reference, model)


def test_custom_from_mask_and_importance_scores_match_torch():
    reference, model = _models(seed=6)
    rng = np.random.default_rng(7)
    mask = (rng.random((84, 120)) > 0.3).astype(np.float32)
    conv_scores = rng.permutation(6 * 16 * 9).reshape(16, 6, 3, 3).astype(np.float32)
    bias_scores = rng.permutation(120).astype(np.float32)
    for (lib, library_prune), lenet in zip(LIBRARIES, (reference, model)):
        library_prune.l1_unstructured(lenet.fc2, "weight", amount=0.2)
        library_prune.custom_from_mask(lenet.fc2, "weight", mask=lib.tensor(mask))
        library_prune.l1_unstructured(lenet.fc1, "bias", amount=30,
                                      importance_scores=lib.tensor(bias_scores))
        library_prune.ln_structured(lenet.conv2, "weight", amount=4, n=1, dim=0,
                                    importance_scores=lib.tensor(conv_scores))
        library_prune.identity(lenet.conv1, "bias")
    first = np.abs(_numpy(model.fc2.weight_orig)) > np.quantile(
        np.abs(_numpy(model.fc2.weight_orig)), 0.2)
    np.testing.assert_array_equal(_numpy(model.fc2.weight_mask), mask * first)
    for name in ("fc2", "fc1", "conv2", "conv1"):
        _assert_same_module(getattr(reference, name), getattr(model, name))
    assert (_numpy(model.conv1.bias_mask) == 1).all()
    _forward_and_grads(reference, model)


def test_method_prune_matches_torch():
    rng = np.random.default_rng(8)
    array = ((rng.permutation(24) + 1.0) * rng.choice([-1.0, 1.0], 24)).reshape(4, 6)
    array = array.astype(np.float32)
    scores = rng.permutation(24).reshape(4, 6).astype(np.float32)
    mask = (np.arange(24).reshape(4, 6) % 5 != 0).astype(np.float32)
    results = []
    for lib, library_prune in LIBRARIES:
        tensor = lib.tensor(array)
        results.append([_numpy(method.prune(tensor, default_mask=lib.tensor(mask)))
                        for method in (library_prune.L1Unstructured(amount=5),
                                       library_prune.LnStructured(amount=2, n=2, dim=1),
                                       library_prune.CustomFromMask(lib.tensor(mask)))]
                       + [_numpy(library_prune.L1Unstructured(0.5).prune(
                           tensor, importance_scores=lib.tensor(scores)))])
    for expected, value in zip(*results):
        np.testing.assert_array_equal(value, expected)


def test_pruned_state_dict_loads_into_a_pruned_model():
    reference, model = _models(seed=9)
    torch_prune.l1_unstructured(reference.fc1, "weight", amount=0.6)
    prune.l1_unstructured(model.fc1, "weight", amount=0)  # the same hook, a mask of ones
    assert (_numpy(model.fc1.weight_mask) == 1).all()
    model.load_state_dict({key: autojit.tensor(_numpy(value))
                           for key, value in reference.state_dict().items()})
    model(autojit.zeros(1, 1, 28, 28))  # the hook recomputes fc1.weight from the loaded mask
    _assert_same_module(reference.fc1, model.fc1)
    _forward_and_grads(reference, model)


# ---- errors ---------------------------------------------------------------------------------

def _message(error) -> str:
    """The message with the library's name and object addresses left out."""
    text = re.sub(r" object at 0x[0-9a-f]+", " object", str(error))
    return re.sub(r"\b(torch|autojit)\.(nn\.utils\.prune\.)?", "", text)


def _same_failure(action) -> None:
    """action(lib, prune module, model) raises the same way in both libraries, and puts the
    parameter back (at the end of the module's parameters, where torch's re-registration puts
    it)."""
    failures = []
    for (lib, library_prune), lenet in zip(LIBRARIES, _models()):
        before = _names(lenet)
        with pytest.raises(Exception) as caught:
            action(lib, library_prune, lenet)
        after = _names(lenet)
        failures.append((type(caught.value), _message(caught.value), after))
        assert [sorted(names) for names in after] == [sorted(names) for names in before]
    assert failures[1] == failures[0]


@pytest.mark.parametrize("amount", [-1, 1.5, -0.2, "0.5", None, 100])
def test_amount_validation_matches_torch(amount):
    _same_failure(lambda lib, p, lenet: p.l1_unstructured(lenet.fc3, "bias", amount=amount))
    _same_failure(lambda lib, p, lenet: p.random_structured(lenet.fc3, "weight", amount, dim=0))


@pytest.mark.parametrize("case", [
    "structured-1d", "dim-out-of-range", "scores-shape", "remove-unpruned", "global-structured",
    "global-not-iterable", "global-scores-type", "container-name", "container-type",
    "custom-mask-shape"])
def test_misuse_errors_match_torch(case):
    actions = {
        "structured-1d": lambda lib, p, m: p.ln_structured(m.fc1, "bias", 2, n=2, dim=0),
        "dim-out-of-range": lambda lib, p, m: p.random_structured(m.fc1, "weight", 2, dim=2),
        "scores-shape": lambda lib, p, m: p.l1_unstructured(m.fc1, "weight", 2,
                                                            importance_scores=lib.ones(3)),
        "remove-unpruned": lambda lib, p, m: p.remove(m.fc3, "weight"),
        "global-structured": lambda lib, p, m: p.global_unstructured(
            [(m.fc3, "weight")], pruning_method=p.RandomStructured, amount=1),
        "global-not-iterable": lambda lib, p, m: p.global_unstructured(
            3, pruning_method=p.L1Unstructured, amount=1),
        "global-scores-type": lambda lib, p, m: p.global_unstructured(
            [(m.fc3, "weight")], p.L1Unstructured, importance_scores=[], amount=1),
        "container-name": lambda lib, p, m: p.PruningContainer(
            _named(p.L1Unstructured(1), "weight")).add_pruning_method(
                _named(p.L1Unstructured(1), "bias")),
        "container-type": lambda lib, p, m: p.PruningContainer(
            _named(p.L1Unstructured(1), "weight")).add_pruning_method(3),
        "custom-mask-shape": lambda lib, p, m: p.custom_from_mask(m.fc3, "bias",
                                                                  mask=lib.ones(3)),
    }
    _same_failure(actions[case])


def _named(method, name):
    method._tensor_name = name
    return method


# ---- the random methods: what they prune, not which entries ----------------------------------

def test_random_unstructured_prunes_the_amount_of_the_remaining_entries():
    autojit.manual_seed(0)
    conv = autojit.nn.Conv2d(6, 16, 3)
    prune.random_unstructured(conv, "weight", amount=0.3)
    first = _numpy(conv.weight_mask)
    assert (first == 0).sum() == round(0.3 * 864)
    prune.random_unstructured(conv, "weight", amount=0.5)
    second = _numpy(conv.weight_mask)
    assert (second[first == 0] == 0).all()
    assert (second == 0).sum() == round(0.3 * 864) + round(0.5 * (864 - round(0.3 * 864)))
    np.testing.assert_array_equal(_numpy(conv.weight), _numpy(conv.weight_orig) * second)
    prune.random_unstructured(conv, "bias", amount=16)
    assert (_numpy(conv.bias) == 0).all()
    autojit.manual_seed(0)
    again = autojit.nn.Conv2d(6, 16, 3)
    prune.random_unstructured(again, "weight", amount=0.3)
    np.testing.assert_array_equal(_numpy(again.weight_mask), first)


def test_random_structured_prunes_whole_channels():
    autojit.manual_seed(1)
    linear = autojit.nn.Linear(10, 8)
    prune.random_structured(linear, "weight", amount=3, dim=0)
    mask = _numpy(linear.weight_mask)
    rows = mask.sum(axis=1)
    assert sorted(set(rows)) == [0.0, 10.0] and (rows == 0).sum() == 3
    prune.random_structured(linear, "weight", amount=0.5, dim=1)
    mask = _numpy(linear.weight_mask)
    assert (mask.sum(axis=1) == 0).sum() == 3
    columns = mask.sum(axis=0)
    assert sorted(set(columns)) == [0.0, 5.0] and (columns == 0).sum() == 5
    assert [type(method).__name__ for method in linear._forward_pre_hooks[
        next(iter(linear._forward_pre_hooks))]] == ["RandomStructured", "RandomStructured"]


# ---- under autojit.compile ------------------------------------------------------------------

def _pruned_training(compiled):
    autojit.manual_seed(0)
    model = autojit.nn.Linear(4, 3)
    prune.l1_unstructured(model, "weight", amount=5)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    x = autojit.tensor(np.random.default_rng(10).standard_normal((6, 4)), dtype=autojit.float32)
    grads = []

    def step(x):
        loss = model(x).square().mean()
        loss.backward()
        grads.append(model.weight_orig.grad.detach().clone())
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    losses = [function(x).item() for _ in range(4)]
    return losses, model, [_numpy(grad) for grad in grads]


def test_compiled_training_step_stays_compiled_and_matches_eager():
    """The hook stores the masked weight on the module (module.weight, as torch's): a tensor
    with autograd history written into Python state, freed by the step's backward, which each
    compiled run stores with a node that raises eager's error on a later backward (no graph
    break, no CompileWarning); the results are eager's, and the mask zeroes the gradient of
    weight_orig, so the pruned entries keep their values."""
    eager_losses, eager_model, eager_grads = _pruned_training(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        losses, model, grads = _pruned_training(True)
    assert model.weight.grad_fn.name() == eager_model.weight.grad_fn.name()
    for weight in (model.weight, eager_model.weight):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            weight.sum().backward()
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(_numpy(model.weight_orig), _numpy(eager_model.weight_orig),
                               rtol=1e-6)
    mask = _numpy(model.weight_mask)
    assert (mask == 0).sum() == 5
    for grad, eager_grad in zip(grads, eager_grads):
        np.testing.assert_allclose(grad, eager_grad, rtol=1e-6)
        assert (grad[mask == 0] == 0).all() and (grad[mask == 1] != 0).all()
    # module.weight is what the last forward computed, before the last update (as in torch).
    with autojit.no_grad():
        model(autojit.zeros(1, 4))
    np.testing.assert_array_equal(_numpy(model.weight), _numpy(model.weight_orig) * mask)


def test_compiled_inference_of_a_pruned_model_needs_no_graph_break():
    autojit.manual_seed(0)
    model = autojit.nn.Sequential(autojit.nn.Linear(4, 5), autojit.nn.ReLU(),
                                  autojit.nn.Linear(5, 2))
    prune.l1_unstructured(model[0], "weight", amount=0.5)
    prune.ln_structured(model[2], "weight", amount=1, n=2, dim=0)
    x = autojit.randn(3, 4)
    compiled = autojit.compile(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        with autojit.no_grad():
            expected = model(x)
            np.testing.assert_allclose(_numpy(compiled(x)), _numpy(expected), rtol=1e-6)
            np.testing.assert_allclose(_numpy(compiled(x)), _numpy(expected), rtol=1e-6)
    rows = _numpy(model[2].weight).sum(axis=1)
    assert (rows == 0).sum() == 1 and len(compiled._compiled_function.executables) >= 1
