"""torch.nn's older and smaller names, against torch: nn.init's deprecated functions without the
trailing underscore (torch's FutureWarning, then the function itself), NLLLoss2d, the
deprecated Container, nn.utils.rnn.invert_permutation and nn.utils.skip_init."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

DEPRECATED = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
              "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]
ARGUMENTS = {"constant": (0.25,), "sparse": (0.5,)}


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_init_functions_warn_and_initialize(name):
    shape = (3, 4, 3) if name == "dirac" else (4, 6)
    messages = []
    for lib in (torch, autojit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tensor = lib.empty(*shape)
            result = getattr(lib.nn.init, name)(tensor, *ARGUMENTS.get(name, ()))
        assert result is tensor
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[0] == messages[1] == [
        (FutureWarning, f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.")]
    # the same draws as the function itself
    autojit.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = getattr(autojit.nn.init, name)(autojit.empty(*shape), *ARGUMENTS.get(name, ()))
    autojit.manual_seed(3)
    new = getattr(autojit.nn.init, name + "_")(autojit.empty(*shape), *ARGUMENTS.get(name, ()))
    np.testing.assert_array_equal(old.numpy(), new.numpy())


@pytest.mark.parametrize("name", ["constant", "eye", "dirac"])
def test_deterministic_deprecated_inits_are_torchs_values(name):
    shape = (3, 4, 3) if name == "dirac" else (4, 6)
    values = []
    for lib in (torch, autojit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            values.append(getattr(lib.nn.init, name)(lib.empty(*shape),
                                                     *ARGUMENTS.get(name, ())).numpy())
    np.testing.assert_array_equal(values[0], values[1])


def test_nll_loss_2d_is_nll_loss():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5))
    target = rng.integers(0, 3, (2, 4, 5))
    weight = rng.random(3) + 0.5
    results = []
    for lib in (torch, autojit):
        scores = lib.tensor(x, requires_grad=True)
        loss = lib.nn.NLLLoss2d(weight=lib.tensor(weight), ignore_index=1)(
            lib.nn.functional.log_softmax(scores, 1), lib.tensor(target))
        loss.backward()
        assert isinstance(lib.nn.NLLLoss2d(), lib.nn.NLLLoss)
        results.append((loss.item(), scores.grad.numpy()))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-14)


def test_container_warns_and_holds_its_children():
    seen = []
    for lib in (torch, autojit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            container = lib.nn.Container(first=lib.nn.Linear(2, 3), second=lib.nn.ReLU())
        seen.append(([(w.category, str(w.message)) for w in caught],
                     [name for name, _ in container.named_children()],
                     sorted(container.state_dict())))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("permutation", [[2, 0, 3, 1], [0], [], None])
def test_invert_permutation_is_torchs(permutation):
    results = []
    for lib in (torch, autojit):
        given = None if permutation is None else lib.tensor(permutation, dtype=lib.int64)
        inverse = lib.nn.utils.rnn.invert_permutation(given)
        results.append(None if inverse is None else (str(inverse.dtype).split(".")[-1],
                                                     inverse.tolist()))
    assert results[0] == results[1]


def test_skip_init_makes_the_module_without_initializing_it():
    layer = autojit.nn.utils.skip_init(autojit.nn.Linear, 5, 2, bias=False)
    assert tuple(layer.weight.shape) == (2, 5) and layer.bias is None
    assert layer.weight.device.type == "cpu" and layer.weight.requires_grad
    assert isinstance(layer.weight, autojit.nn.Parameter)
    assert tuple(autojit.nn.utils.skip_init(autojit.nn.Conv2d, in_channels=3, out_channels=4,
                                            kernel_size=2).weight.shape) == (4, 3, 2, 2)

    class NoDevice(autojit.nn.Module):
        def __init__(self, size):
            super().__init__()

    class NoDeviceTorch(torch.nn.Module):
        def __init__(self, size):
            super().__init__()

    for lib, module in ((torch, NoDeviceTorch), (autojit, NoDevice)):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(module, 3)
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int)
