"""nn.ParameterList, nn.ParameterDict and Module's full backward hooks (and pre-hooks).

Expected values are worked out by hand: a Linear with weight [[2, 3]] and bias 0.5 on
x = [[1, 1]] under loss 3 * sum(output) has grad_output [[3]] and grad_input [[6, 9]].
"""

import warnings
from collections import OrderedDict

import pytest

import autojit
from autojit import nn

# ---- ParameterList --------------------------------------------------------------------------


def test_parameter_list_registers_and_wraps_tensors():
    data = autojit.zeros(2, 3)
    given = nn.Parameter(autojit.ones(3))
    weights = nn.ParameterList([data, given])
    assert len(weights) == 2
    assert type(weights[0]) is nn.Parameter and weights[0].requires_grad and weights[0].is_leaf
    assert weights[1] is given and weights[-1] is given
    # The Parameter made from a plain tensor shares its storage.
    data.add_(5.0)
    assert weights[0].tolist() == [[5.0] * 3] * 2
    assert [name for name, _ in weights.named_parameters()] == ["0", "1"]
    assert list(weights.state_dict()) == ["0", "1"]
    assert [tuple(p.shape) for p in weights] == [(2, 3), (3,)]
    assert weights.append(autojit.ones(1)) is weights
    assert weights.extend([autojit.ones(4)]) is weights
    weights += [autojit.ones(5)]
    assert [tuple(p.shape) for p in weights.parameters()] == [(2, 3), (3,), (1,), (4,), (5,)]
    weights[0] = autojit.full((2,), 7.0)
    assert type(weights[0]) is nn.Parameter and weights[0].tolist() == [7.0, 7.0]
    assert "0" not in dir(weights)


def test_parameter_list_slicing_errors_and_calling():
    weights = nn.ParameterList([autojit.zeros(1), autojit.ones(2), autojit.ones(3)])
    tail = weights[1:]
    assert type(tail) is nn.ParameterList and len(tail) == 2
    assert tail[0] is weights[1] and tail[1] is weights[2]
    assert [p.numel() for p in weights[::2]] == [1, 3]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        weights[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        weights[-4] = autojit.ones(1)
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, "
                                        "but got Tensor"):
        weights.extend(autojit.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        weights(autojit.ones(1))


def test_parameter_list_repr_and_other_objects():
    weights = nn.ParameterList([autojit.zeros(2, 3), nn.Parameter(autojit.ones(3).double()),
                                "note", nn.Linear(1, 1)])
    assert repr(weights) == (
        "ParameterList(\n"
        "    (0): Parameter containing: [autojit.float32 of size 2x3]\n"
        "    (1): Parameter containing: [autojit.float64 of size 3]\n"
        "    (2): Object of type: str\n"
        "    (3): Object of type: Linear\n"
        "  (3): Linear(in_features=1, out_features=1, bias=True)\n"
        ")")
    assert weights[2] == "note"
    # The module entry's parameters are registered under its index.
    assert list(weights.state_dict()) == ["0", "1", "3.weight", "3.bias"]
    assert repr(nn.ParameterList()) == "ParameterList()"


class Mixture(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([autojit.full((2,), 2.0), autojit.full((2,), 3.0)])
        self.shifts = nn.ParameterDict({"right": autojit.ones(2), "left": autojit.zeros(2)})

    def forward(self, x):
        for scale in self.scales:
            x = x * scale
        return x + self.shifts["left"] - self.shifts["right"]


def test_containers_inside_a_model_train_and_round_trip():
    model = Mixture()
    assert [name for name, _ in model.named_parameters()] == [
        "scales.0", "scales.1", "shifts.left", "shifts.right"]
    assert repr(model) == (
        "Mixture(\n"
        "  (scales): ParameterList(\n"
        "      (0): Parameter containing: [autojit.float32 of size 2]\n"
        "      (1): Parameter containing: [autojit.float32 of size 2]\n"
        "  )\n"
        "  (shifts): ParameterDict(\n"
        "      (left): Parameter containing: [autojit.FloatTensor of size 2]\n"
        "      (right): Parameter containing: [autojit.FloatTensor of size 2]\n"
        "  )\n"
        ")")
    x = autojit.tensor([1.0, 2.0])
    assert model(x).tolist() == [5.0, 11.0]  # 6x + 0 - 1
    model(x).sum().backward()
    # d/d scale0 = x * scale1, d/d scale1 = x * scale0, d/d left = 1, d/d right = -1
    assert model.scales[0].grad.tolist() == [3.0, 6.0]
    assert model.scales[1].grad.tolist() == [2.0, 4.0]
    assert model.shifts["left"].grad.tolist() == [1.0, 1.0]
    assert model.shifts["right"].grad.tolist() == [-1.0, -1.0]
    autojit.optim.SGD(model.parameters(), lr=0.5).step()
    assert model.scales[0].tolist() == [0.5, -1.0]
    state = model.state_dict()
    assert list(state) == ["scales.0", "scales.1", "shifts.left", "shifts.right"]
    fresh = Mixture()
    fresh.load_state_dict(state)
    assert fresh.scales[0].tolist() == [0.5, -1.0] and fresh.shifts["left"].tolist() == [-0.5] * 2
    model.double()
    assert model.scales[1].dtype is autojit.float64 and model.shifts["right"].dtype is \
        autojit.float64


# ---- ParameterDict --------------------------------------------------------------------------


def test_parameter_dict_order_and_wrapping():
    plain = nn.ParameterDict({"b": autojit.zeros(2), "a": nn.Parameter(autojit.ones(1, 2))})
    assert list(plain.keys()) == ["a", "b"]  # a plain dict is added in sorted key order
    assert type(plain["b"]) is nn.Parameter and plain["b"].requires_grad
    ordered = nn.ParameterDict(OrderedDict([("b", autojit.zeros(1)), ("a", autojit.zeros(1))]))
    assert list(ordered) == ["b", "a"]
    pairs = nn.ParameterDict([("y", autojit.zeros(1)), ("x", autojit.zeros(1))])
    assert list(pairs.keys()) == ["y", "x"] and list(reversed(pairs)) == ["x", "y"]
    assert [name for name, _ in pairs.named_parameters()] == ["y", "x"]
    assert list(pairs.state_dict()) == ["y", "x"]
    assert repr(plain) == (
        "ParameterDict(\n"
        "    (a): Parameter containing: [autojit.FloatTensor of size 1x2]\n"
        "    (b): Parameter containing: [autojit.FloatTensor of size 2]\n"
        ")")
    assert repr(nn.ParameterDict()) == "ParameterDict()"


def test_parameter_dict_mapping_methods():
    params = nn.ParameterDict({"a": autojit.zeros(1)})
    params["b"] = autojit.ones(2)
    assert len(params) == 2 and "b" in params and "c" not in params
    assert [key for key, _ in params.items()] == ["a", "b"]
    assert [value.numel() for value in params.values()] == [1, 2]
    assert params.get("c") is None and params.get("a") is params["a"]
    made = params.setdefault("c", autojit.full((3,), 4.0))
    assert type(made) is nn.Parameter and params["c"].tolist() == [4.0] * 3
    assert params.setdefault("c", None) is made
    copied = params.copy()
    assert list(copied) == ["a", "b", "c"] and copied["a"] is params["a"]
    key, value = params.popitem()
    assert key == "c" and value is made and list(params) == ["a", "b"]
    popped = params.pop("a")
    assert popped.numel() == 1 and list(params) == ["b"]
    assert [name for name, _ in params.named_parameters()] == ["b"]
    del params["b"]
    assert len(params) == 0 and list(params.parameters()) == []
    copied.clear()
    assert len(copied) == 0
    with pytest.raises(KeyError):
        copied.popitem()
    shared = nn.Parameter(autojit.zeros(1))
    keys = params.fromkeys(["p", "q"], shared)
    assert list(keys) == ["p", "q"] and keys["p"] is shared and keys["q"] is shared
    assert list(keys.parameters()) == [shared]  # one parameter under two names
    left = nn.ParameterDict({"a": autojit.zeros(1)})
    right = nn.ParameterDict({"b": autojit.zeros(1)})
    assert list(left | right) == ["a", "b"] and list(left) == ["a"]
    left |= right
    assert list(left) == ["a", "b"]


def test_parameter_dict_errors():
    params = nn.ParameterDict()
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as "
                                        r"it is not a string \(type is 'int'\)"):
        params[1] = autojit.ones(1)
    assert len(params) == 0
    with pytest.raises(AttributeError, match="'ParameterDict' object has no attribute 'z'"):
        params["z"]
    with pytest.raises(TypeError, match="ParametersDict.update should be called with an "
                                        "iterable of key/value pairs, but got int"):
        params.update(3)
    with pytest.raises(ValueError, match="ParameterDict update sequence element #0 has length 3; "
                                         "2 is required"):
        params.update([("a", 1, 2)])
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        params(autojit.ones(1))


# ---- backward hooks ---------------------------------------------------------------------------


def values(grads):
    return [None if grad is None else grad.tolist() for grad in grads]


def recorder(log, name):
    def hook(module, grad_input, grad_output):
        log.append((name, "hook", values(grad_input), values(grad_output)))

    def pre_hook(module, grad_output):
        log.append((name, "pre", values(grad_output)))

    return hook, pre_hook


def fixed_linear():
    layer = nn.Linear(2, 1)
    with autojit.no_grad():
        layer.weight.copy_(autojit.tensor([[2.0, 3.0]]))
        layer.bias.fill_(0.5)
    return layer


def test_linear_hooks_see_input_and_output_gradients():
    layer, log = fixed_linear(), []
    hook, pre_hook = recorder(log, "linear")
    layer.register_full_backward_hook(hook)
    layer.register_full_backward_pre_hook(pre_hook)
    x = autojit.ones(1, 2, requires_grad=True)
    (layer(x) * 3).sum().backward()
    assert log == [("linear", "pre", [[[3.0]]]), ("linear", "hook", [[[6.0, 9.0]]], [[[3.0]]])]
    assert x.grad.tolist() == [[6.0, 9.0]] and layer.bias.grad.tolist() == [3.0]


def test_input_without_grad_fires_on_output_gradients_with_a_warning():
    layer, log = fixed_linear(), []
    hook, pre_hook = recorder(log, "linear")
    layer.register_full_backward_hook(hook)
    layer.register_full_backward_pre_hook(pre_hook)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (layer(autojit.ones(1, 2)) * 3).sum().backward()
    assert log == [("linear", "pre", [[[3.0]]]), ("linear", "hook", [None], [[[3.0]]])]
    assert [str(w.message) for w in caught] == [
        "Full backward hook is firing when gradients are computed with respect to module outputs "
        "since no inputs require gradients."]
    assert caught[0].filename == __file__
    layer.register_full_backward_hook(lambda module, grad_input, grad_output: (autojit.ones(1),))
    with pytest.raises(RuntimeError, match="Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients."):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer(autojit.ones(1, 2)).sum().backward()


def test_sequential_order_of_calls():
    model, log = nn.Sequential(nn.Linear(2, 2), nn.ReLU()), []
    for name, module in (("first", model[0]), ("relu", model[1]), ("model", model)):
        hook, pre_hook = recorder(log, name)
        module.register_full_backward_hook(hook)
        if name != "relu":
            module.register_full_backward_pre_hook(pre_hook)
    model(autojit.tensor([[1.0, -1.0]], requires_grad=True)).sum().backward()
    assert [entry[:2] for entry in log] == [("model", "pre"), ("relu", "hook"), ("first", "pre"),
                                            ("first", "hook"), ("model", "hook")]


class TwoInputs(nn.Module):
    def forward(self, a, b, c=None):
        return a * b, a + 1


def test_two_inputs_one_without_grad_and_a_non_tensor():
    module, log = TwoInputs(), []
    hook, pre_hook = recorder(log, "two")
    module.register_full_backward_hook(hook)
    module.register_full_backward_pre_hook(pre_hook)
    a = autojit.tensor([2.0], requires_grad=True)
    product, _ = module(a, autojit.tensor([5.0]), 7)
    (product * 10).sum().backward()
    # b does not require grad: a zero gradient; c is not a tensor: None. The unused output: None.
    assert log == [("two", "pre", [[10.0], None]),
                   ("two", "hook", [[50.0], [0.0], None], [[10.0], None])]
    log.clear()
    a = autojit.tensor([2.0], requires_grad=True)
    b = autojit.tensor([5.0], requires_grad=True)
    product, shifted = module(a, b)
    (product * 10 + shifted).sum().backward()
    assert log == [("two", "pre", [[10.0], [1.0]]),
                   ("two", "hook", [[51.0], [20.0]], [[10.0], [1.0]])]


def test_integer_input_gets_an_integer_zero_gradient():
    class Lookup(nn.Module):
        def forward(self, index, table):
            return table[index]

    module, seen = Lookup(), []
    module.register_full_backward_hook(lambda m, grad_input, grad_output: seen.append(grad_input))
    table = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    module(autojit.tensor([2, 0]), table).sum().backward()
    (index_grad, table_grad), = seen
    assert index_grad.dtype is autojit.int64 and index_grad.tolist() == [0, 0]
    assert table_grad.tolist() == [1.0, 0.0, 1.0]


def test_hooks_replace_gradients():
    module = TwoInputs()
    handle = module.register_full_backward_hook(
        lambda m, grad_input, grad_output: (grad_input[0] * 0 + 100, None))
    a = autojit.tensor([2.0], requires_grad=True)
    b = autojit.tensor([5.0], requires_grad=True)
    module(a, b)[0].sum().backward()
    assert a.grad.tolist() == [100.0] and b.grad is None
    handle.remove()
    module.register_full_backward_pre_hook(lambda m, grad_output: [grad_output[0] * 2, None])
    a = autojit.tensor([2.0], requires_grad=True)
    b = autojit.tensor([5.0], requires_grad=True)
    module(a, b)[0].sum().backward()
    assert a.grad.tolist() == [10.0] and b.grad.tolist() == [4.0]
    # autograd.grad sees the replaced gradients as well.
    a = autojit.tensor([2.0], requires_grad=True)
    (grad,) = autojit.autograd.grad(module(a, b)[0].sum(), a)
    assert grad.tolist() == [10.0]


def test_removed_and_prepended_hooks():
    layer, order = fixed_linear(), []
    first = layer.register_full_backward_hook(lambda *args: order.append("first"))
    layer.register_full_backward_hook(lambda *args: order.append("second"))
    layer.register_full_backward_hook(lambda *args: order.append("front"), prepend=True)
    layer.register_full_backward_pre_hook(lambda *args: order.append("pre"))
    layer.register_full_backward_pre_hook(lambda *args: order.append("pre front"), prepend=True)
    x = autojit.ones(1, 2, requires_grad=True)
    layer(x).sum().backward()
    assert order == ["pre front", "pre", "front", "first", "second"]
    order.clear()
    first.remove()
    layer(x).sum().backward()
    assert order == ["pre front", "pre", "front", "second"]


def test_each_call_reports_its_own_gradients():
    layer, seen = nn.Linear(1, 1, bias=False), []
    with autojit.no_grad():
        layer.weight.fill_(2.0)
    layer.register_full_backward_hook(
        lambda m, grad_input, grad_output: seen.append((grad_input[0].item(),
                                                        grad_output[0].item())))
    x = autojit.ones(1, 1, requires_grad=True)
    (layer(x) + layer(x) * 10).sum().backward()
    assert sorted(seen) == [(2.0, 1.0), (20.0, 10.0)]


def test_wrong_hook_results_are_refused():
    module = TwoInputs()
    a = autojit.tensor([2.0], requires_grad=True)
    b = autojit.tensor([5.0], requires_grad=True)
    handle = module.register_full_backward_hook(lambda m, grad_input, grad_output: (None,))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                           "grad_input, got 1, but expected 2"):
        module(a, b)[0].sum().backward()
    handle.remove()
    handle = module.register_full_backward_pre_hook(lambda m, grad_output: (None,))
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of "
                                           "grad_output, got 1, but expected 2"):
        module(a, b)[0].sum().backward()
    handle.remove()

    def widen(m, grad_input, grad_output):
        return (autojit.ones(3), None)

    handle = module.register_full_backward_hook(widen)
    with pytest.raises(RuntimeError, match=r"hook 'widen' has changed the size of value "
                                           r"\(expected \[1\], got \[3\]\)"):
        module(a, b)[0].sum().backward()
    handle.remove()
    module.register_full_backward_hook(lambda m, grad_input, grad_output: (3.0, None))
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'float'"):
        module(a, b)[0].sum().backward()


def test_outputs_that_are_not_tensors():
    class AsDict(nn.Module):
        def forward(self, x):
            return {"y": x * 2}

    class Mixed(nn.Module):
        def forward(self, x):
            return x * 2, 3, "label"

    seen = []
    module = AsDict()
    module.register_full_backward_hook(lambda *args: seen.append(args))
    x = autojit.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="For backward hooks to be called, module output should "
                                         "be a Tensor or a tuple of Tensors but received "
                                         "<class 'dict'>"):
        result = module(x)
    result["y"].sum().backward()
    assert seen == [] and x.grad.tolist() == [2.0]
    mixed, log = Mixed(), []
    mixed.register_full_backward_hook(recorder(log, "mixed")[0])
    doubled, three, label = mixed(x)
    assert (three, label) == (3, "label")
    doubled.sum().backward()
    assert log == [("mixed", "hook", [[2.0]], [[1.0], None, None])]


def test_in_place_change_of_an_input_is_refused():
    class Doubler(nn.Module):
        def forward(self, x, counter):
            counter.add_(1)  # does not require grad: allowed
            return x.mul_(2)

    module = Doubler()
    module.register_full_backward_hook(lambda *args: None)
    counter = autojit.zeros(())
    module(autojit.ones(1), counter)  # nothing requires grad: nothing is hooked
    with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view and is "
                                           "being modified inplace"):
        module(autojit.ones(1, requires_grad=True).clone(), counter)
    assert counter.item() == 2.0


def test_no_grad_and_identity():
    module, log = nn.Identity(), []
    hook, pre_hook = recorder(log, "identity")
    module.register_full_backward_hook(hook)
    module.register_full_backward_pre_hook(pre_hook)
    x = autojit.tensor([3.0], requires_grad=True)
    with autojit.no_grad():
        assert module(x).grad_fn is None
    y = module(x)
    assert y is not x and y.grad_fn.name() == "BackwardHookFunctionBackward"
    (y * 2).sum().backward()
    assert log == [("identity", "pre", [[2.0]]), ("identity", "hook", [[2.0]], [[2.0]])]
    assert x.grad.tolist() == [2.0]
