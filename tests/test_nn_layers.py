"""The simple layers, the containers and nn.init: reprs, initialization, gradients, training.

Expected reprs and error messages are the reference framework's strings, written out here.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import autojit
from autojit import nn
from autojit.autograd import gradcheck, gradgradcheck
from autojit.nn import functional as F
from autojit.nn import init

# ---- reprs -----------------------------------------------------------------------------------

REPRS = [
    (lambda: nn.Linear(3, 4), "Linear(in_features=3, out_features=4, bias=True)"),
    (lambda: nn.Linear(3, 4, bias=False), "Linear(in_features=3, out_features=4, bias=False)"),
    (lambda: nn.Bilinear(2, 3, 4),
     "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)"),
    (lambda: nn.Identity(), "Identity()"),
    (lambda: nn.ReLU(), "ReLU()"),
    (lambda: nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (lambda: nn.GELU(), "GELU(approximate='none')"),
    (lambda: nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (lambda: nn.SiLU(), "SiLU()"),
    (lambda: nn.Tanh(), "Tanh()"),
    (lambda: nn.Sigmoid(), "Sigmoid()"),
    (lambda: nn.LogSigmoid(), "LogSigmoid()"),
    (lambda: nn.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda: nn.Softmax(), "Softmax(dim=None)"),
    (lambda: nn.LogSoftmax(1), "LogSoftmax(dim=1)"),
    (lambda: nn.Softmin(1), "Softmin(dim=1)"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.ELU(), "ELU(alpha=1.0)"),
    (lambda: nn.ELU(0.5), "ELU(alpha=0.5)"),
    (lambda: nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda: nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"),
    (lambda: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.Embedding(10, 3), "Embedding(10, 3)"),
    (lambda: nn.Embedding(10, 3, padding_idx=-1), "Embedding(10, 3, padding_idx=9)"),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (lambda: nn.Dropout(0.1), "Dropout(p=0.1, inplace=False)"),
    (lambda: nn.ModuleList(), "ModuleList()"),
    (lambda: nn.Sequential(), "Sequential()"),
    (lambda: nn.ModuleDict(), "ModuleDict()"),
    (lambda: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
     "ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
     "  (3): ReLU()\n)"),
    (lambda: nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(2, 3)}),
     "ModuleDict(\n  (a): ReLU()\n  (b): Linear(in_features=2, out_features=3, bias=True)\n)"),
    (lambda: nn.Sequential(OrderedDict(fc=nn.Linear(2, 2), act=nn.Tanh())),
     "Sequential(\n  (fc): Linear(in_features=2, out_features=2, bias=True)\n"
     "  (act): Tanh()\n)"),
    (lambda: nn.ModuleList([nn.Sequential(nn.ReLU()), nn.Sequential(nn.ReLU())]),
     "ModuleList(\n  (0-1): 2 x Sequential(\n    (0): ReLU()\n  )\n)"),
]


@pytest.mark.parametrize("make, expected", REPRS, ids=[text.split("(")[0] + str(index)
                                                        for index, (_, text) in enumerate(REPRS)])
def test_repr(make, expected):
    assert repr(make()) == expected


# ---- Linear and Bilinear ----------------------------------------------------------------------


def test_linear_default_init_bounds_and_spread():
    autojit.manual_seed(0)
    layer = nn.Linear(64, 256)
    bound = 1 / math.sqrt(64)
    weight = layer.weight.detach().numpy()
    bias = layer.bias.detach().numpy()
    assert weight.shape == (256, 64) and bias.shape == (256,)
    assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
    # U(-b, b) has standard deviation b / sqrt(3); 16384 samples pin it within a few percent.
    assert abs(weight.std() - bound / math.sqrt(3)) < 0.03 * bound
    assert abs(weight.mean()) < 0.02 * bound
    assert np.abs(weight).max() > 0.95 * bound


def test_linear_is_seeded_and_matches_the_formula():
    autojit.manual_seed(3)
    first = nn.Linear(3, 2)
    autojit.manual_seed(3)
    second = nn.Linear(3, 2)
    np.testing.assert_array_equal(first.weight.detach().numpy(), second.weight.detach().numpy())
    x = autojit.randn(4, 3)
    expected = x.numpy() @ first.weight.detach().numpy().T + first.bias.detach().numpy()
    np.testing.assert_allclose(first(x).detach().numpy(), expected, rtol=1e-6)
    assert first(autojit.randn(2, 5, 3)).shape == (2, 5, 2)
    assert nn.Linear(3, 2, dtype=autojit.float64).weight.dtype is autojit.float64


def test_linear_shape_error():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(3x4 and 3x5\)"):
        F.linear(autojit.zeros(3, 4), autojit.zeros(5, 3))


def test_bilinear_init_and_errors():
    autojit.manual_seed(0)
    layer = nn.Bilinear(4, 3, 5)
    bound = 1 / math.sqrt(4)
    assert layer.weight.shape == (5, 4, 3)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    x1, x2 = autojit.randn(6, 4), autojit.randn(6, 3)
    expected = np.einsum("ni,kij,nj->nk", x1.numpy(), layer.weight.detach().numpy(),
                         x2.numpy()) + layer.bias.detach().numpy()
    np.testing.assert_allclose(layer(x1, x2).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input batch dimensions do not "
                                           "match at dim 0: got 3 and 2"):
        F.bilinear(autojit.zeros(3, 4), autojit.zeros(2, 5), autojit.zeros(6, 4, 5))
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 4 but "
                                           "expected 3"):
        F.bilinear(autojit.zeros(3, 4), autojit.zeros(3, 5), autojit.zeros(6, 3, 5))
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 5 but "
                                           "expected 6"):
        F.bilinear(autojit.zeros(3, 4), autojit.zeros(3, 5), autojit.zeros(6, 4, 5),
                   autojit.zeros(5))


def test_gradcheck_through_linear_and_bilinear_modules():
    autojit.manual_seed(1)
    linear = nn.Linear(3, 2).double()
    bilinear = nn.Bilinear(3, 2, 2).double()
    x = autojit.randn(4, 3, dtype=autojit.float64, requires_grad=True)
    y = autojit.randn(4, 2, dtype=autojit.float64, requires_grad=True)

    def model(x, y, w1, b1, w2, b2):
        hidden = F.linear(x, w1, b1).tanh()
        return F.bilinear(x, hidden * y, w2, b2)

    params = (linear.weight, linear.bias, bilinear.weight, bilinear.bias)
    assert gradcheck(model, (x, y, *params))
    assert gradgradcheck(model, (x, y, *params))

    # And through the modules' own forward, differentiating w.r.t. the parameters.
    def through_modules(x, y):
        return bilinear(x, linear(x) * y)

    assert gradcheck(through_modules, (x, y))
    assert gradgradcheck(through_modules, (x, y))


# ---- activations, flatten, identity -----------------------------------------------------------


def test_activation_modules_match_the_functions():
    x = autojit.tensor([[-2.0, -0.5, 0.0, 0.5, 3.0]])
    data = x.numpy().astype(np.float64)
    cases = [
        (nn.ReLU(), np.maximum(data, 0)),
        (nn.Tanh(), np.tanh(data)),
        (nn.Sigmoid(), 1 / (1 + np.exp(-data))),
        (nn.SiLU(), data / (1 + np.exp(-data))),
        (nn.LeakyReLU(0.1), np.where(data > 0, data, 0.1 * data)),
        (nn.ELU(), np.where(data > 0, data, np.expm1(data))),
        (nn.Softplus(), np.log1p(np.exp(data))),
        (nn.Softmax(dim=1), np.exp(data) / np.exp(data).sum(1, keepdims=True)),
        (nn.LogSoftmax(dim=1), data - np.log(np.exp(data).sum(1, keepdims=True))),
        (nn.GELU("tanh"), 0.5 * data * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                     * (data + 0.044715 * data ** 3)))),
    ]
    for module, expected in cases:
        np.testing.assert_allclose(module(x).numpy(), expected, rtol=1e-5, atol=1e-6,
                                   err_msg=repr(module))
    with pytest.raises(ValueError, match="approximate argument must be either none or tanh"):
        nn.GELU("fast")


def test_flatten_unflatten_identity():
    x = autojit.randn(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(1, (3, 1))(nn.Flatten()(x)[:, :3]).shape == (2, 3, 1)
    assert nn.Identity(3, key="ignored")(x) is x


# ---- Embedding --------------------------------------------------------------------------------


def test_embedding_lookup_and_padding_row():
    autojit.manual_seed(0)
    table = nn.Embedding(6, 3, padding_idx=2)
    assert not table.weight.detach().numpy()[2].any()  # the padding row starts at zero
    ids = autojit.tensor([[0, 2, 5], [2, 2, 1]])
    out = table(ids)
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(out.detach().numpy(), table.weight.detach().numpy()[ids.numpy()])
    (out * autojit.arange(3.0)).sum().backward()
    grad = table.weight.grad.numpy()
    assert not grad[2].any()  # no gradient reaches the padding row
    np.testing.assert_array_equal(grad[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(grad[3], [0.0, 0.0, 0.0])


def test_embedding_errors_and_from_pretrained():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=7)
    with pytest.raises(NotImplementedError, match="sparse gradients"):
        nn.Embedding(5, 3, sparse=True)
    with pytest.raises(IndexError, match="index out of range in self"):
        nn.Embedding(5, 3)(autojit.tensor([1, 7]))
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar "
                                           "types: Long, Int; but got autojit.FloatTensor"):
        F.embedding(autojit.tensor([1.0]), autojit.zeros(5, 3))
    weights = autojit.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    frozen = nn.Embedding.from_pretrained(weights)
    assert not frozen.weight.requires_grad
    np.testing.assert_allclose(frozen(autojit.tensor([1])).numpy(), [[4.0, 5.1, 6.3]])


# ---- Dropout ----------------------------------------------------------------------------------


def test_dropout_scales_is_seeded_and_is_identity_in_eval():
    layer = nn.Dropout(p=0.25)
    x = autojit.ones(4000)
    autojit.manual_seed(7)
    first = layer(x).numpy()
    autojit.manual_seed(7)
    np.testing.assert_array_equal(layer(x).numpy(), first)
    kept = first != 0
    np.testing.assert_allclose(first[kept], 1 / 0.75)
    assert abs(kept.mean() - 0.75) < 0.03
    layer.eval()
    assert layer(x) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout(1.5)


def test_dropout_gradient_uses_the_same_mask():
    x = autojit.ones(50, requires_grad=True)
    autojit.manual_seed(1)
    out = F.dropout(x, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())


# ---- containers -------------------------------------------------------------------------------


def test_sequential_indexing_slicing_and_editing():
    layers = [nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)]
    model = nn.Sequential(*layers)
    assert len(model) == 3 and model[0] is layers[0] and model[-1] is layers[2]
    assert list(model) == layers
    head = model[1:]
    assert isinstance(head, nn.Sequential) and list(head._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        model[5]
    model.append(nn.Sigmoid())
    assert len(model) == 4 and repr(model[3]) == "Sigmoid()"
    del model[0]
    assert list(model._modules) == ["0", "1", "2"] and model[0] is layers[1]
    model[0] = nn.Tanh()
    assert isinstance(model[0], nn.Tanh)
    model.insert(0, nn.Identity())
    assert isinstance(model[0], nn.Identity) and len(model) == 4
    assert len(model + nn.Sequential(nn.ReLU())) == 5
    assert isinstance(model.pop(0), nn.Identity) and len(model) == 3
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        nn.Sequential(1)


def test_sequential_ordered_dict_forward():
    model = nn.Sequential(OrderedDict([("fc", nn.Linear(3, 2)), ("act", nn.ReLU())]))
    assert model.fc is model[0]
    x = autojit.randn(4, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(),
                                  model.act(model.fc(x)).detach().numpy())
    assert [name for name, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]


def test_module_list_and_dict():
    blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(blocks) == 3 and len(list(blocks.parameters())) == 6
    blocks.append(nn.ReLU())
    blocks.extend([nn.Tanh()])
    assert isinstance(blocks[-1], nn.Tanh) and isinstance(blocks[1:3], nn.ModuleList)
    del blocks[0]
    assert list(blocks._modules) == ["0", "1", "2", "3"]
    blocks.insert(1, nn.Identity())
    assert isinstance(blocks[1], nn.Identity)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        blocks[9]
    heads = nn.ModuleDict({"a": nn.Linear(2, 1)})
    heads["b"] = nn.ReLU()
    heads.update([("c", nn.Tanh())])
    assert list(heads) == ["a", "b", "c"] and "b" in heads and len(heads) == 3
    assert [name for name, _ in heads.named_parameters()] == ["a.weight", "a.bias"]
    assert isinstance(heads.pop("c"), nn.Tanh) and list(heads.keys()) == ["a", "b"]


# ---- nn.init ----------------------------------------------------------------------------------


def test_init_functions_fill_in_place_and_return_the_tensor():
    weight = nn.Parameter(autojit.empty(300, 200))
    for function, check in [
        (init.zeros_, lambda a: not a.any()),
        (init.ones_, lambda a: (a == 1).all()),
        (lambda t: init.constant_(t, 0.5), lambda a: (a == 0.5).all()),
        (lambda t: init.uniform_(t, -0.1, 0.1), lambda a: np.abs(a).max() <= 0.1),
        (lambda t: init.normal_(t, 1.0, 0.01), lambda a: abs(a.mean() - 1) < 1e-3),
        (lambda t: init.trunc_normal_(t, std=1.0, a=-0.5, b=0.5),
         lambda a: np.abs(a).max() <= 0.5),
    ]:
        assert function(weight) is weight
        assert check(weight.detach().numpy())
        assert weight.is_leaf and weight.requires_grad
    assert (init.eye_(autojit.empty(2, 3)).numpy() == np.eye(2, 3)).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(autojit.empty(3))


def test_init_fan_based_statistics():
    autojit.manual_seed(0)
    weight = autojit.empty(400, 100)
    gain = math.sqrt(2.0)
    init.kaiming_normal_(weight, nonlinearity="relu")
    assert abs(weight.numpy().std() - gain / math.sqrt(100)) < 0.02 * gain / math.sqrt(100)
    init.kaiming_uniform_(weight, mode="fan_out", nonlinearity="relu")
    assert np.abs(weight.numpy()).max() <= gain * math.sqrt(3 / 400)
    init.xavier_uniform_(weight)
    assert np.abs(weight.numpy()).max() <= math.sqrt(6 / 500)
    init.xavier_normal_(weight, gain=2.0)
    assert abs(weight.numpy().std() - 2 * math.sqrt(2 / 500)) < 0.05 * 2 * math.sqrt(2 / 500)
    conv = autojit.empty(8, 4, 3, 3)  # fan_in = 4 * 9
    init.kaiming_uniform_(conv, a=math.sqrt(5))
    assert np.abs(conv.numpy()).max() <= 1 / 6


def test_init_gain_and_errors():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity swish"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor "
                                         "with fewer than 2 dimensions"):
        init.xavier_uniform_(autojit.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of "
                                         r"\['fan_in', 'fan_out'\]"):
        init.kaiming_normal_(autojit.empty(3, 3), mode="fan_avg")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        init.kaiming_uniform_(autojit.empty(0, 3))
    assert "Initializing zero-element tensors is a no-op" in str(caught[0].message)


# ---- training -----------------------------------------------------------------------------------


def _regression_data():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(64, 3)).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    return autojit.tensor(x), autojit.tensor(y)


def _mlp():
    autojit.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))


def test_small_mlp_trains():
    x, y = _regression_data()
    model = _mlp()
    losses = []
    for _ in range(30):
        loss = F.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        with autojit.no_grad():
            for param in model.parameters():
                param -= 0.1 * param.grad
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def _make_step(model):
    def step(x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        with autojit.no_grad():
            for param in model.parameters():
                param.sub_(0.1 * param.grad)
        model.zero_grad()
        return loss.detach()

    return step


def test_sequential_mlp_step_compiles_and_matches_eager():
    """Parameters are captured inputs of the graph; the updates are written back to them."""
    x, y = _regression_data()
    eager_model, compiled_model = _mlp(), _mlp()
    make_step = _make_step
    eager_step = make_step(eager_model)
    compiled_step = autojit.compile(make_step(compiled_model), fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        for _ in range(4):
            expected = eager_step(x, y)
            got = compiled_step(x, y)
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    for (name, eager_param), compiled_param in zip(eager_model.named_parameters(),
                                                   compiled_model.parameters(), strict=True):
        assert isinstance(compiled_param, nn.Parameter) and compiled_param.grad is None
        np.testing.assert_allclose(compiled_param.detach().numpy(),
                                   eager_param.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_compiled_step_with_parameters_reuses_its_executable():
    x, y = _regression_data()
    step = autojit.compile(_make_step(_mlp()))
    for _ in range(3):
        step(x, y)
    assert len(step.executables) == 1 and step.executables[0].calls == 3
