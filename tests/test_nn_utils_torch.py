"""autojit.nn.utils against torch.nn.utils: gradient clipping (clip_grad_norm_ for each norm
type, clip_grad_value_, get_total_norm, clip_grads_with_norm_, error_if_nonfinite),
parameters_to_vector and vector_to_parameters, a compiled training step that clips,
weight_norm/remove_weight_norm (torch's state_dict loaded, outputs and gradients) and
stateless.functional_call."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autojit
from autojit.nn import utils

torch = pytest.importorskip("torch")
# torch deprecates its hook-form weight_norm (autojit has no parametrizations form yet).
pytestmark = pytest.mark.filterwarnings("ignore:.*weight_norm. is deprecated:FutureWarning")

_rng = np.random.default_rng(0)
ARRAYS = [_rng.standard_normal((2, 3)), _rng.standard_normal(4), _rng.standard_normal(1)]


def _params(lib, dtype="float64", with_grads=(0, 1, 2), scale=1.0):
    params = [lib.nn.Parameter(lib.tensor(array, dtype=getattr(lib, dtype)))
              for array in ARRAYS]
    for index in with_grads:
        params[index].grad = lib.tensor(ARRAYS[index] * scale + 0.5, dtype=getattr(lib, dtype))
    return params


def _grads(params) -> list:
    return [None if param.grad is None else param.grad.numpy().copy() for param in params]


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 0.5, 3.0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    params, reference = _params(autojit), _params(torch)
    total = utils.clip_grad_norm_(params, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(reference, max_norm, norm_type)
    assert isinstance(total, autojit.Tensor) and total.ndim == 0
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_clip_grad_norm_float32_skips_missing_grads_and_takes_one_tensor():
    params, reference = _params(autojit, "float32", (0, 2)), _params(torch, "float32", (0, 2))
    total = utils.clip_grad_norm_(iter(params), 0.3)
    expected = torch.nn.utils.clip_grad_norm_(iter(reference), 0.3)
    assert total.dtype is autojit.float32
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-6)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        assert (got is None) == (want is None)
        if got is not None:
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=1e-6)
    single = _params(autojit)[1]
    np.testing.assert_allclose(utils.clip_grad_norm_(single, 1.0).item(),
                               torch.nn.utils.clip_grad_norm_(_params(torch)[1], 1.0).item())


def test_no_gradients_give_a_zero_norm():
    assert utils.clip_grad_norm_(_params(autojit, with_grads=()), 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        utils.clip_grad_norm_((p for p in []), 1.0)


def test_error_if_nonfinite_as_torch():
    for lib in (torch, autojit):
        params = _params(lib, scale=math.inf)
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients "
                                               "from `parameters` is non-finite"):
            lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    params, reference = _params(autojit, scale=math.inf), _params(torch, scale=math.inf)
    assert utils.clip_grad_norm_(params, 1.0).item() == math.inf
    torch.nn.utils.clip_grad_norm_(reference, 1.0)
    np.testing.assert_array_equal(_grads(params)[0], _grads(reference)[0])


def test_total_norm_and_clip_with_norm_as_torch():
    params, reference = _params(autojit), _params(torch)
    total = utils.get_total_norm([p.grad for p in params], 3.0, foreach=True)
    expected = torch.nn.utils.get_total_norm([p.grad for p in reference], 3.0)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    utils.clip_grads_with_norm_(params, 0.7, total)
    torch.nn.utils.clip_grads_with_norm_(reference, 0.7, expected)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_clip_grad_value_matches_torch():
    params, reference = _params(autojit), _params(torch)
    assert utils.clip_grad_value_(params, 0.6, foreach=False) is None
    torch.nn.utils.clip_grad_value_(reference, 0.6)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        np.testing.assert_array_equal(got, want)


def test_deprecated_clip_grad_norm_warns():
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        utils.clip_grad_norm(_params(autojit), 1.0)


def test_parameters_to_vector_and_back():
    params, reference = _params(autojit), _params(torch)
    vector = utils.parameters_to_vector(params)
    np.testing.assert_array_equal(
        vector.detach().numpy(), torch.nn.utils.parameters_to_vector(reference).detach().numpy())
    assert vector.requires_grad
    utils.vector_to_parameters(autojit.arange(11.0, dtype=autojit.float64), params)
    torch.nn.utils.vector_to_parameters(torch.arange(11.0, dtype=torch.float64), reference)
    for param, expected in zip(params, reference, strict=True):
        assert param.shape == tuple(expected.shape)
        np.testing.assert_array_equal(param.detach().numpy(), expected.detach().numpy())
    for lib in (torch, autojit):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], _params(lib))


def _clipped_training(compiled, steps=4):
    rng = np.random.default_rng(2)
    autojit.manual_seed(0)
    model = autojit.nn.Linear(3, 2)
    with autojit.no_grad():
        model.weight.copy_(autojit.tensor(rng.standard_normal((2, 3)), dtype=autojit.float32))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    x = autojit.tensor(rng.standard_normal((5, 3)) * 4, dtype=autojit.float32)

    def train_step(x):
        loss = model(x).square().mean()
        loss.backward()
        norm = utils.clip_grad_norm_(model.parameters(), 0.5)
        utils.clip_grad_value_(model.parameters(), 0.3)
        optimizer.step()
        optimizer.zero_grad()
        return norm

    function = autojit.compile(train_step, fullgraph=True) if compiled else train_step
    norms = [function(x).item() for _ in range(steps)]
    return norms, model.weight.detach().numpy().copy(), function


def test_clipping_compiles_and_matches_eager():
    eager_norms, eager_weight, _ = _clipped_training(False)
    norms, weight, function = _clipped_training(True)
    np.testing.assert_allclose(norms, eager_norms, rtol=1e-5)
    np.testing.assert_allclose(weight, eager_weight, rtol=1e-5, atol=1e-6)
    assert len(function.executables) == 1


# ---- weight_norm (the hook form) -------------------------------------------------------------

def _state_from_torch(module, reference) -> None:
    module.load_state_dict({key: autojit.tensor(value.detach().numpy())
                            for key, value in reference.state_dict().items()})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layer, dim", [("linear", 0), ("linear", None), ("conv", 1),
                                        ("conv", -1)])
def test_weight_norm_matches_torch(layer, dim, dtype):
    def make(lib):
        torch.manual_seed(0)
        module = lib.nn.Linear(3, 4) if layer == "linear" else lib.nn.Conv1d(2, 3, 2)
        module = module.to(getattr(lib, dtype))
        return lib.nn.utils.weight_norm(module, dim=dim)

    reference, module = make(torch), make(autojit)
    _state_from_torch(module, reference)
    assert _keys_shapes(module) == _keys_shapes(reference)
    shape = (5, 3) if layer == "linear" else (2, 2, 5)
    array = np.random.default_rng(0).standard_normal(shape)
    outputs = []
    for lib, net in ((autojit, module), (torch, reference)):
        x = lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=True)
        out = net(x)
        out.square().sum().backward()
        outputs.append([out.detach().numpy(), x.grad.numpy()]
                       + [p.grad.numpy() for _, p in net.named_parameters()])
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for got, expected in zip(*outputs, strict=True):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 1e-2)


def _keys_shapes(module) -> list:
    return [(key, tuple(value.shape)) for key, value in module.state_dict().items()]


def test_remove_weight_norm_folds_back_as_torch():
    reference = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    module = autojit.nn.utils.weight_norm(autojit.nn.Linear(3, 2))
    _state_from_torch(module, reference)
    torch.nn.utils.remove_weight_norm(reference)
    assert autojit.nn.utils.remove_weight_norm(module) is module
    assert _keys_shapes(module) == _keys_shapes(reference)
    assert isinstance(module.weight, autojit.nn.Parameter)
    np.testing.assert_allclose(module.weight.detach().numpy(),
                               reference.weight.detach().numpy(), rtol=1e-6)
    for lib, net in ((torch, reference), (autojit, module)):
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            lib.nn.utils.remove_weight_norm(net)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the "
                                               "same parameter weight"):
            lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))


def _weight_normed_training(compiled, wrap=autojit.nn.utils.weight_norm):
    autojit.manual_seed(0)
    model = wrap(autojit.nn.Linear(3, 2))
    optimizer = autojit.optim.Adam(model.parameters(), lr=0.05)
    x = autojit.tensor(np.random.default_rng(3).standard_normal((6, 3)), dtype=autojit.float32)

    def step(x):
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    return [function(x).item() for _ in range(4)], next(model.parameters()).detach().numpy()


@pytest.mark.parametrize("wrap", [autojit.nn.utils.weight_norm, autojit.nn.utils.spectral_norm],
                         ids=["weight_norm", "spectral_norm"])
def test_hook_forms_under_compile_stay_compiled_and_match_eager(wrap):
    """The hook stores the recomputed weight on the module (module.weight, as torch's), a
    tensor with history that the step's backward frees: each compiled run stores its value
    with a node raising eager's error on a later backward (compiler/result_template.py), so
    the step stays compiled, with no CompileWarning, and gives eager's results."""
    eager_losses, eager_g = _weight_normed_training(False, wrap)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        losses, g = _weight_normed_training(True, wrap)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(g, eager_g, rtol=1e-5)


# ---- stateless.functional_call --------------------------------------------------------------

def test_functional_call_replaces_for_one_call():
    from autojit.nn.utils.stateless import functional_call

    model = autojit.nn.Sequential(autojit.nn.Linear(2, 2), autojit.nn.BatchNorm1d(2))
    original = model[0].weight
    weight = autojit.ones(2, 2, requires_grad=True)
    x = autojit.tensor([[1.0, 2.0], [3.0, -1.0]])
    out = functional_call(model, {"0.weight": weight, "0.bias": autojit.zeros(2)}, (x,))
    expected = model[1](x @ autojit.ones(2, 2).T)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    out.sum().backward()
    assert weight.grad is not None and model[0].weight is original
    assert [key for key, _ in model.named_parameters()] == \
        ["0.weight", "0.bias", "1.weight", "1.bias"]
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(model, {"0.weight": weight}, x, strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(model, ({"0.bias": weight}, {"0.bias": weight}), x)


# ---- fusion ----------------------------------------------------------------------------------

def _trained_bn(lib, bn):
    """Running statistics and affine parameters away from their defaults."""
    rng = np.random.default_rng(5)
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(rng.standard_normal(bn.num_features),
                                         dtype=bn.running_mean.dtype))
        bn.running_var.copy_(lib.tensor(rng.random(bn.num_features) + 0.5,
                                        dtype=bn.running_var.dtype))
        if bn.weight is not None:
            bn.weight.copy_(lib.tensor(rng.standard_normal(bn.num_features),
                                       dtype=bn.weight.dtype))
    return bn


@pytest.mark.parametrize("kind", ["conv", "conv-no-bias", "linear"])
def test_fused_layers_match_torch(kind):
    results = []
    for lib in (torch, autojit):
        torch.manual_seed(0)
        if kind == "linear":
            layer, bn = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)
            x = np.random.default_rng(6).standard_normal((5, 3))
        else:
            layer, bn = lib.nn.Conv2d(2, 3, 2, bias=kind == "conv"), lib.nn.BatchNorm2d(3)
            x = np.random.default_rng(6).standard_normal((2, 2, 4, 4))
        if lib is autojit:  # torch's values, loaded
            layer.load_state_dict({k: autojit.tensor(v.numpy())
                                   for k, v in results[0][3].items()})
        _trained_bn(lib, bn)
        layer.eval()
        bn.eval()
        fuse = lib.nn.utils.fuse_linear_bn_eval if kind == "linear" \
            else lib.nn.utils.fuse_conv_bn_eval
        fused = fuse(layer, bn)
        inputs = lib.tensor(x, dtype=lib.float32)
        results.append((fused(inputs).detach().numpy(), bn(layer(inputs)).detach().numpy(),
                        _keys_shapes(fused),
                        {k: v.detach().clone() for k, v in layer.state_dict().items()}))
    (expected, _, expected_keys, _), (got, unfused, keys, _) = results
    assert keys == expected_keys
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, unfused, rtol=1e-5, atol=1e-5)


def test_fusion_needs_eval_mode_as_torch():
    for lib in (torch, autojit):
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2))
        message = (r"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
                   r"got linear.out_features=3 and bn.num_features=2")
        with pytest.raises(AssertionError, match=message):
            lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(),
                                             lib.nn.BatchNorm1d(2).eval())


# ---- parametrize ---------------------------------------------------------------------------

def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

        def right_inverse(self, a):
            return a.triu()

    return Symmetric()


def _scaled(lib):
    class Scaled(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.tensor(2.0, dtype=lib.float64))

        def forward(self, x):
            return x * self.scale

    return Scaled()


def test_parametrized_linear_matches_torch():
    from autojit.nn.utils import parametrize

    outputs = []
    reference_state = None
    for lib in (torch, autojit):
        torch.manual_seed(0)
        layer = lib.nn.Linear(3, 3).double()
        if reference_state is not None:
            layer.load_state_dict({k: autojit.tensor(v) for k, v in reference_state.items()})
        reference_state = reference_state or {k: v.numpy().copy()
                                              for k, v in layer.state_dict().items()}
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", _symmetric(lib))
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", _scaled(lib))
        x = lib.tensor(np.random.default_rng(7).standard_normal((4, 3)), requires_grad=True)
        out = layer(x)
        out.square().sum().backward()
        outputs.append((_keys_shapes(layer), type(layer).__name__, out.detach().numpy(),
                        x.grad.numpy(), [p.grad.numpy() for _, p in layer.named_parameters()],
                        [name for name, _ in layer.named_parameters()],
                        lib.nn.utils.parametrize.is_parametrized(layer, "weight"),
                        lib.nn.utils.parametrize.is_parametrized(layer, "bias")))
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
        outputs.append((_keys_shapes(layer), type(layer).__name__,
                        layer.weight.detach().numpy(), parametrize.is_parametrized(layer)
                        if lib is autojit else lib.nn.utils.parametrize.is_parametrized(layer)))
    (keys, name, out, x_grad, grads, names, *flags), after = outputs[0], outputs[1]
    (keys2, name2, out2, x_grad2, grads2, names2, *flags2), after2 = outputs[2], outputs[3]
    assert (keys, name, names, flags) == (keys2, name2, names2, flags2)
    np.testing.assert_allclose(out2, out, rtol=1e-12)
    np.testing.assert_allclose(x_grad2, x_grad, rtol=1e-12)
    for got, expected in zip(grads2, grads, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert after[0] == after2[0] and after[1] == after2[1] and after[3] == after2[3]
    np.testing.assert_allclose(after2[2], after[2], rtol=1e-12)


def test_parametrize_cached_errors_and_assignment():
    from autojit.nn.utils import parametrize

    layer = autojit.nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", _symmetric(autojit))
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    layer.weight = autojit.tensor([[1.0, 2.0], [2.0, 3.0]])  # through right_inverse
    assert layer.weight.tolist() == [[1.0, 2.0], [2.0, 3.0]]
    assert parametrize.type_before_parametrizations(layer) is autojit.nn.Linear
    for lib in (torch, autojit):
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                             "parametrized element with name 'kernel'"):
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "kernel",
                                                              _symmetric(lib))
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight")


def _parametrized_training(compiled):
    from autojit.nn.utils import parametrize

    autojit.manual_seed(0)
    model = autojit.nn.Linear(3, 3)
    parametrize.register_parametrization(model, "weight", _symmetric(autojit))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    x = autojit.tensor(np.random.default_rng(3).standard_normal((6, 3)), dtype=autojit.float32)

    def step(x):
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(step, fullgraph=True) if compiled else step
    return [function(x).item() for _ in range(4)], model.weight.detach().numpy()


def test_parametrized_training_compiles_and_matches_eager():
    eager_losses, eager_weight = _parametrized_training(False)
    losses, weight = _parametrized_training(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(weight, eager_weight, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(weight, weight.T)


# ---- parametrizations.weight_norm ---------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, None])
def test_parametrized_weight_norm_matches_torch(dim):
    outputs = []
    state = None
    for lib in (torch, autojit):
        torch.manual_seed(0)
        layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4).double(), dim=dim)
        if state is None:
            state = {k: v.detach().numpy().copy() for k, v in layer.state_dict().items()}
        else:
            layer.load_state_dict({k: autojit.tensor(v) for k, v in state.items()})
        x = lib.tensor(np.random.default_rng(8).standard_normal((5, 3)), requires_grad=True)
        out = layer(x)
        out.square().sum().backward()
        outputs.append((_keys_shapes(layer), out.detach().numpy(), x.grad.numpy(),
                        [p.grad.numpy() for _, p in layer.named_parameters()]))
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
        outputs.append((_keys_shapes(layer), layer.weight.detach().numpy()))
    assert outputs[0][0] == outputs[2][0] and outputs[1][0] == outputs[3][0]
    for got, expected in zip(outputs[2][1:3] + (outputs[3][1],),
                             outputs[0][1:3] + (outputs[1][1],), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    for got, expected in zip(outputs[2][3], outputs[0][3], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_parametrized_weight_norm_compiles_without_a_break():
    def run(compiled):
        autojit.manual_seed(0)
        model = autojit.nn.utils.parametrizations.weight_norm(autojit.nn.Linear(3, 2))
        optimizer = autojit.optim.Adam(model.parameters(), lr=0.05)
        x = autojit.tensor(np.random.default_rng(3).standard_normal((6, 3)),
                           dtype=autojit.float32)

        def step(x):
            loss = model(x).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss.detach()

        function = autojit.compile(step, fullgraph=True) if compiled else step
        return [function(x).item() for _ in range(4)]

    np.testing.assert_allclose(run(True), run(False), rtol=1e-5)


# ---- spectral_norm (the hook form) -------------------------------------------------------------

@pytest.mark.parametrize("layer, iterations", [("linear", 1), ("conv", 3)])
def test_spectral_norm_matches_torch(layer, iterations):
    results = []
    state = None
    for lib in (torch, autojit):
        torch.manual_seed(0)
        module = lib.nn.Linear(3, 4) if layer == "linear" else lib.nn.Conv1d(2, 3, 2)
        module = lib.nn.utils.spectral_norm(module.double(), n_power_iterations=iterations)
        if state is None:
            state = {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
        else:
            module.load_state_dict({k: autojit.tensor(v) for k, v in state.items()})
        shape = (5, 3) if layer == "linear" else (2, 2, 5)
        x = lib.tensor(np.random.default_rng(9).standard_normal(shape), requires_grad=True)
        outs = [module(x) for _ in range(2)]  # training mode: two power-iteration steps
        module.eval()
        outs.append(module(x))
        sum(out.square().sum() for out in outs).backward()
        results.append(([k for k in module.state_dict()],
                        [out.detach().numpy() for out in outs], x.grad.numpy(),
                        [p.grad.numpy() for _, p in module.named_parameters()],
                        [b.numpy().copy() for _, b in module.named_buffers()]))
        lib.nn.utils.remove_spectral_norm(module)
        results.append(([k for k in module.state_dict()], module.weight.detach().numpy()))
    assert results[0][0] == results[2][0] and results[1][0] == results[3][0]
    for got, expected in zip(results[2][1] + [results[2][2]] + results[2][3] + results[2][4]
                             + [results[3][1]],
                             results[0][1] + [results[0][2]] + results[0][3] + results[0][4]
                             + [results[1][1]], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_spectral_norm_errors_as_torch():
    for lib in (torch, autojit):
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but "
                                             "got n_power_iterations=0"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2)))
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2))


@pytest.mark.parametrize("layer", ["linear", "conv"])
def test_parametrized_spectral_norm_matches_torch(layer):
    results = []
    state = None
    for lib in (torch, autojit):
        torch.manual_seed(0)
        module = lib.nn.Linear(3, 4) if layer == "linear" else lib.nn.Conv1d(2, 3, 2)
        module = lib.nn.utils.parametrizations.spectral_norm(module.double(),
                                                             n_power_iterations=2)
        if state is None:
            state = {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
        else:
            module.load_state_dict({k: autojit.tensor(v) for k, v in state.items()})
        shape = (5, 3) if layer == "linear" else (2, 2, 5)
        x = lib.tensor(np.random.default_rng(9).standard_normal(shape), requires_grad=True)
        outs = [module(x) for _ in range(2)]
        module.eval()
        outs.append(module(x))
        sum(out.square().sum() for out in outs).backward()
        results.append(([k for k in module.state_dict()], [o.detach().numpy() for o in outs],
                        x.grad.numpy(), [p.grad.numpy() for _, p in module.named_parameters()],
                        [b.numpy().copy() for _, b in module.named_buffers()]))
    assert results[0][0] == results[1][0]
    for got, expected in zip(results[1][1] + [results[1][2]] + results[1][3] + results[1][4],
                             results[0][1] + [results[0][2]] + results[0][3] + results[0][4],
                             strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_parametrized_spectral_norm_compiles_without_a_break():
    def wrap(layer):
        return autojit.nn.utils.parametrizations.spectral_norm(layer)

    eager_losses, eager_weight = _weight_normed_training(False, wrap)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        losses, weight = _weight_normed_training(True, wrap)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(weight, eager_weight, rtol=1e-5, atol=1e-6)
