"""torch.nn's older, smaller and newer names, against torch: nn.init's deprecated functions
without the trailing underscore (torch's FutureWarning, then the function itself), NLLLoss2d,
the deprecated Container, nn.utils.rnn.invert_permutation, nn.utils.skip_init,
nn.utils.convert_conv2d_weight_memory_format (and 3d), nn.factory_kwargs, F.conv_tbc and
F.native_channel_shuffle, and torch 2.13's LinearCrossEntropyLoss with
LinearCrossEntropyOptions."""

from __future__ import annotations

import dataclasses
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


LINEAR_CE = [dict(), dict(bias=True), dict(out_features=(2,), bias=True),
             dict(reduction="sum", label_smoothing=0.1), dict(reduction="none", ignore_index=2),
             dict(weight="w", reduction="mean"), dict(options="default")]


@pytest.mark.parametrize("options", LINEAR_CE, ids=lambda o: "-".join(o) or "defaults")
def test_linear_cross_entropy_loss_is_torchs(options):
    rng = np.random.default_rng(1)
    k_dim = options.get("out_features") is not None
    x = rng.standard_normal((4, 5))
    target = rng.integers(0, 3, (4, 2) if k_dim else (4,))
    results, reference = [], None
    for lib in (torch, autojit):
        kwargs = dict(options)
        if kwargs.get("weight") == "w":
            kwargs["weight"] = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)
        if kwargs.get("options") == "default":
            kwargs["options"] = lib.nn.LinearCrossEntropyOptions()
        module = lib.nn.LinearCrossEntropyLoss(5, 3, dtype=lib.float64, **kwargs)
        if reference is None:
            reference = {key: value.detach().numpy() for key, value in
                         module.state_dict().items()}
        else:
            assert sorted(module.state_dict()) == sorted(reference)
            module.load_state_dict({key: lib.tensor(value) for key, value in
                                    reference.items()})
        inputs = lib.tensor(x, requires_grad=True)
        loss = module(inputs, lib.tensor(target))
        (loss * lib.tensor(np.linspace(0.5, 1.5, loss.numel())).reshape(loss.shape)).sum() \
            .backward()
        results.append((repr(module), loss.detach().numpy(), inputs.grad.numpy(),
                        module.linear.weight.grad.numpy()))
    assert results[0][0] == results[1][0]
    for expected, got in zip(results[0][1:], results[1][1:], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)


def test_linear_cross_entropy_options_and_errors_are_torchs():
    assert repr(autojit.nn.LinearCrossEntropyOptions()) == repr(
        torch.nn.LinearCrossEntropyOptions())
    for kwargs in (dict(acc_policy="fast"), dict(chunking_method="rows"),
                   dict(chunking_method="aspect_ratio:0")):
        messages = []
        for lib in (torch, autojit):
            with pytest.raises(ValueError) as caught:
                lib.nn.LinearCrossEntropyOptions(**kwargs)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
    options = autojit.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:4")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.acc_policy = "compact"
    for kwargs in (dict(weight="bad"), dict(label_smoothing=1.5)):
        messages = []
        for lib in (torch, autojit):
            given = dict(kwargs)
            if given.get("weight") == "bad":
                given["weight"] = lib.ones(2)
            with pytest.raises(RuntimeError) as caught:
                lib.nn.LinearCrossEntropyLoss(5, 3, **given)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]


def test_convolution_weights_converted_to_channels_last_as_torchs():
    results = []
    for lib in (torch, autojit):
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Conv2d(8, 4, 3), lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)),
            lib.nn.Conv3d(2, 3, 2), lib.nn.ConvTranspose3d(3, 2, 2), lib.nn.Linear(2, 2))
        values = [p.detach().numpy().copy() for p in model.parameters()]
        parameters = list(model.parameters())
        assert lib.nn.utils.convert_conv2d_weight_memory_format(model, lib.channels_last) \
            is model
        lib.nn.utils.convert_conv3d_weight_memory_format(model, lib.channels_last_3d)
        assert all(a is b for a, b in zip(parameters, model.parameters(), strict=True))
        for value, parameter in zip(values, model.parameters(), strict=True):
            np.testing.assert_array_equal(parameter.detach().numpy(), value)
        results.append([p.stride() for p in model.parameters()])
        lib.nn.utils.convert_conv2d_weight_memory_format(model, lib.contiguous_format)
        results.append([p.stride() for p in model.parameters()])
    assert results[:2] == results[2:]


def test_factory_kwargs_are_torchs():
    cases = [None, {}, {"device": "cpu", "dtype": "d"}, {"factory_kwargs": {"dtype": "d"}},
             {"dtype": "d", "factory_kwargs": {"device": "cpu"}}, {"weight": 1},
             {"dtype": "d", "factory_kwargs": {"dtype": "d"}}]
    for kwargs in cases:
        seen = []
        for lib in (torch, autojit):
            given = None if kwargs is None else {
                key: ({k: lib.float64 if v == "d" else v for k, v in value.items()}
                      if isinstance(value, dict) else lib.float64 if value == "d" else value)
                for key, value in kwargs.items()}
            try:
                result = lib.nn.factory_kwargs(given)
                seen.append({key: str(value).split(".")[-1] for key, value in result.items()})
            except TypeError as error:
                seen.append(str(error))
        assert seen[0] == seen[1], kwargs


@pytest.mark.parametrize("pad", [0, 1, 3])
def test_conv_tbc_is_torchs(pad):
    rng = np.random.default_rng(pad)
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), \
        rng.standard_normal(4)
    results = []
    for lib in (torch, autojit):
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = lib.nn.functional.conv_tbc(*leaves, pad)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum() \
            .backward()
        results.append([out.stride(), out.detach().numpy()] +
                       [leaf.grad.numpy() for leaf in leaves])
    assert results[0][0] == results[1][0]
    for expected, got in zip(results[0][1:], results[1][1:], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_conv_tbc_errors_and_native_channel_shuffle_are_torchs():
    shapes = [((7, 2), (3, 3, 4), (4,)), ((7, 2, 3), (3, 3), (4,)),
              ((7, 2, 3), (3, 3, 4), (2,)), ((7, 2, 3), (3, 5, 4), (4,))]
    for x, w, b in shapes:
        messages = []
        for lib in (torch, autojit):
            with pytest.raises(RuntimeError) as caught:
                lib.nn.functional.conv_tbc(lib.zeros(*x), lib.zeros(*w), lib.zeros(*b))
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
    values = np.arange(2 * 6 * 2 * 2.0).reshape(2, 6, 2, 2)
    expected = torch.nn.functional.native_channel_shuffle(torch.tensor(values), 3).numpy()
    got = autojit.nn.functional.native_channel_shuffle(autojit.tensor(values), 3).numpy()
    np.testing.assert_array_equal(got, expected)
