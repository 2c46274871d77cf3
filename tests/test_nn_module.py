"""nn.Module: registration, traversal, modes, dtype conversion, state_dict, hooks and reprs.

The expected strings (reprs, error messages) are the reference framework's, written out here.
"""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import autojit
from autojit import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.register_buffer("steps", autojit.zeros(()))
        self.register_buffer("scratch", autojit.ones(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# ---- registration ---------------------------------------------------------------------------


def test_setattr_registers_parameters_buffers_and_children():
    net = Net()
    assert list(net._parameters) == []
    assert list(net._modules) == ["fc1", "act", "fc2"]
    assert list(net._buffers) == ["steps", "scratch"]
    assert net.fc2.bias is None
    assert "fc1" not in net.__dict__  # children live in _modules, reached through __getattr__
    net.scale = nn.Parameter(autojit.ones(1))
    assert list(net._parameters) == ["scale"]
    net.scale = None  # a parameter slot keeps None
    assert net._parameters["scale"] is None and net.scale is None
    del net.scale
    assert "scale" not in net._parameters
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'scale'"):
        _ = net.scale
    # Assigning a module over a buffer moves the name between registries.
    net.steps = nn.Identity()
    assert "steps" not in net._buffers and "steps" in net._modules


def test_registration_errors():
    net = Net()
    with pytest.raises(TypeError, match=r"cannot assign 'autojit.FloatTensor' as parameter "
                                        r"'weight' \(autojit.nn.Parameter or None expected\)"):
        net.fc1.weight = autojit.zeros(3, 4)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'fc1'"):
        net.fc1 = 3
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'steps'"):
        net.steps = "x"
    with pytest.raises(KeyError, match="attribute 'fc1' already exists"):
        net.register_buffer("fc1", autojit.zeros(1))
    with pytest.raises(KeyError) as error:
        net.register_buffer("a.b", autojit.zeros(1))
    assert error.value.args[0] == 'buffer name can\'t contain "."'
    with pytest.raises(KeyError) as error:
        net.register_parameter("", None)
    assert error.value.args[0] == 'parameter name can\'t be empty string ""'
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        net.add_module("x", 1)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        leaf = nn.Parameter(autojit.ones(2))
        nonleaf = leaf * 2
        nonleaf.__class__ = nn.Parameter
        net.register_parameter("w", nonleaf)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(autojit.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before "
                                             r"Module.__init__\(\) call"):
        Early()
    with pytest.raises(NotImplementedError,
                       match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(1)


def test_buffer_assignment_keeps_persistence():
    net = Net()
    net.scratch = autojit.zeros(2)
    assert "scratch" in net._non_persistent_buffers_set
    assert "scratch" not in net.state_dict()
    net.steps = None
    assert "steps" not in net.state_dict()


def test_get_submodule_parameter_buffer():
    model = nn.Sequential(Net(), nn.Linear(2, 2))
    assert model.get_submodule("0.fc1") is model[0].fc1
    assert model.get_submodule("") is model
    assert model.get_parameter("0.fc1.bias") is model[0].fc1.bias
    assert model.get_buffer("0.steps") is model[0].steps
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        model.get_submodule("0.nope")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Module"):
        model.get_submodule("0.steps")


# ---- traversal --------------------------------------------------------------------------------


def test_named_parameters_buffers_children_modules():
    net = Net()
    assert [name for name, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias",
                                                             "fc2.weight"]
    assert [name for name, _ in net.named_parameters(prefix="m")] == [
        "m.fc1.weight", "m.fc1.bias", "m.fc2.weight"]
    assert list(net.named_parameters(recurse=False)) == []
    assert [name for name, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [name for name, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [name for name, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.children())[0] is net.fc1
    assert len(list(net.modules())) == 4
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())


def test_shared_parameters_and_modules_counted_once():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(model.parameters())) == 2
    assert len(list(model.named_parameters(remove_duplicate=False))) == 4
    assert [name for name, _ in model.named_modules()] == ["", "0", "1"]
    assert [name for name, _ in model.named_modules(remove_duplicate=False)] == ["", "0", "1",
                                                                                  "2"]
    assert len(model.state_dict()) == 4  # state_dict keeps every name


def test_apply_visits_children_first():
    net = Net()
    seen = []
    assert net.apply(lambda module: seen.append(type(module).__name__)) is net
    assert seen == ["Linear", "ReLU", "Linear", "Net"]


def test_dir_lists_registered_names():
    names = dir(Net())
    assert {"fc1", "act", "steps", "forward", "training"} <= set(names)
    assert "0" not in dir(nn.Sequential(nn.ReLU()))


# ---- modes and gradients ---------------------------------------------------------------------


def test_train_eval_propagate():
    model = nn.Sequential(Net(), nn.Sequential(nn.Dropout(), nn.ReLU()))
    assert all(module.training for module in model.modules())
    assert model.eval() is model
    assert not any(module.training for module in model.modules())
    model[1].train()
    assert model[1][0].training and not model.training and not model[0].fc1.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train(1)


def test_requires_grad_and_zero_grad():
    net = Net()
    net(autojit.ones(5, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())


def test_to_double_keeps_parameter_identity():
    net = Net()
    weight = net.fc1.weight
    before = weight.detach().numpy().copy()
    assert net.double() is net
    assert net.fc1.weight is weight and weight.dtype is autojit.float64
    assert weight.requires_grad and isinstance(weight, nn.Parameter)
    np.testing.assert_allclose(weight.detach().numpy(), before, rtol=1e-7)
    assert net.steps.dtype is autojit.float64
    out = net(autojit.ones(2, 4, dtype=autojit.float64))
    assert out.dtype is autojit.float64
    net.to(autojit.float32)
    assert weight.dtype is autojit.float32
    net.to("cpu")
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex "
                                        "dtypes, but got desired dtype=autojit.int64"):
        net.to(autojit.int64)


def test_deepcopy_and_pickle():
    net = Net()
    clone = copy.deepcopy(net)
    assert clone.fc1.weight is not net.fc1.weight
    assert isinstance(clone.fc1.weight, nn.Parameter) and clone.fc1.weight.requires_grad
    np.testing.assert_array_equal(clone.fc1.weight.detach().numpy(),
                                  net.fc1.weight.detach().numpy())
    restored = pickle.loads(pickle.dumps(net))
    assert isinstance(restored.fc2.weight, nn.Parameter)
    x = autojit.randn(3, 4)
    np.testing.assert_array_equal(restored(x).detach().numpy(), net(x).detach().numpy())


# ---- state_dict ------------------------------------------------------------------------------


def test_state_dict_keys_and_detached_tensors():
    net = Net()
    state = net.state_dict()
    assert isinstance(state, OrderedDict)
    assert list(state) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert not state["fc1.weight"].requires_grad
    assert state["fc1.weight"].numpy() is not None
    kept = net.state_dict(keep_vars=True)
    assert kept["fc1.weight"] is net.fc1.weight
    assert list(net.state_dict(prefix="model.")) == ["model.steps", "model.fc1.weight",
                                                      "model.fc1.bias", "model.fc2.weight"]


def test_state_dict_round_trip():
    source, target = Net(), Net()
    weight = target.fc1.weight
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert target.fc1.weight is weight  # copied into, not replaced
    x = autojit.randn(3, 4)
    np.testing.assert_array_equal(target(x).detach().numpy(), source(x).detach().numpy())
    assign = Net()
    assign.load_state_dict(source.state_dict(), assign=True)
    assert assign.fc1.weight is not source.fc1.weight
    assert isinstance(assign.fc1.weight, nn.Parameter) and assign.fc1.weight.requires_grad


def test_load_state_dict_missing_keys():
    net = Net()
    state = net.state_dict()
    del state["fc1.bias"]
    with pytest.raises(RuntimeError) as error:
        net.load_state_dict(state)
    assert str(error.value) == ('Error(s) in loading state_dict for Net:\n\t'
                                'Missing key(s) in state_dict: "fc1.bias". ')
    result = net.load_state_dict(state, strict=False)  # reported, not raised
    assert result.missing_keys == ["fc1.bias"] and result.unexpected_keys == []


def test_load_state_dict_unexpected_keys():
    layer = nn.Linear(2, 3)
    state = layer.state_dict()
    state["extra"] = autojit.zeros(1)
    state["sub.weight"] = autojit.zeros(1)
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict(state)
    assert str(error.value) == ('Error(s) in loading state_dict for Linear:\n\t'
                                'Unexpected key(s) in state_dict: "extra", "sub.weight". ')


def test_load_state_dict_missing_and_unexpected_together():
    layer = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict({"weight": autojit.zeros(3, 2), "bias2": autojit.zeros(3)})
    assert str(error.value) == ('Error(s) in loading state_dict for Linear:\n\t'
                                'Missing key(s) in state_dict: "bias". \n\t'
                                'Unexpected key(s) in state_dict: "bias2". ')


def test_load_state_dict_size_mismatch():
    layer = nn.Linear(2, 3)
    state = {"weight": autojit.zeros(3, 4), "bias": autojit.zeros(3)}
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict(state)
    assert str(error.value) == (
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
        "param with shape autojit.Size([3, 4]) from checkpoint, the shape in current model is "
        "autojit.Size([3, 2]).")
    # A size mismatch is an error even when strict=False.
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        layer.load_state_dict(state, strict=False)


def test_load_state_dict_rejects_non_tensors_and_non_mappings():
    layer = nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias", expected '
                                           'autojit.Tensor'):
        layer.load_state_dict({"weight": autojit.zeros(3, 2), "bias": [0.0, 0.0, 0.0]})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got "):
        layer.load_state_dict([("weight", autojit.zeros(3, 2))])


# ---- hooks and calling ----------------------------------------------------------------------


def test_forward_hooks_run_in_order_and_can_replace():
    layer = nn.Linear(2, 2)
    calls = []

    def pre(module, args):
        calls.append("pre")
        return (args[0] * 0,)

    def post(module, args, output):
        calls.append("post")
        assert not args[0].numpy().any()  # the pre-hook's replacement reached forward
        return output + 1

    pre_handle = layer.register_forward_pre_hook(pre)
    post_handle = layer.register_forward_hook(post)
    out = layer(autojit.ones(1, 2))
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(out.detach().numpy(), layer.bias.detach().numpy()[None] + 1)
    pre_handle.remove()
    post_handle.remove()
    pre_handle.remove()  # idempotent
    calls.clear()
    layer(autojit.ones(1, 2))
    assert calls == []


def test_forward_hooks_with_kwargs_prepend_and_always_call():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            if factor < 0:
                raise ValueError("negative")
            return x * factor

    module = Scale()
    order = []
    module.register_forward_hook(lambda m, a, o: order.append("second"))
    module.register_forward_hook(lambda m, a, o: order.append("first"), prepend=True)
    module.register_forward_pre_hook(lambda m, a, k: (a, {"factor": 3.0}), with_kwargs=True)
    seen = {}
    module.register_forward_hook(lambda m, a, k, o: seen.update(k), with_kwargs=True)
    assert module(autojit.ones(1), factor=2.0).item() == 3.0
    assert order == ["first", "second"] and seen == {"factor": 3.0}

    failing = Scale()
    always = []
    failing.register_forward_hook(lambda m, a, o: always.append(o), always_call=True)
    with pytest.raises(ValueError, match="negative"):
        failing(autojit.ones(1), factor=-1.0)
    assert always == [None]


def test_hook_sees_intermediate_activations():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    captured = {}
    model[1].register_forward_hook(lambda m, a, o: captured.setdefault("relu", o))
    model(autojit.randn(5, 3))
    assert tuple(captured["relu"].shape) == (5, 4)
    assert (captured["relu"].detach().numpy() >= 0).all()


# ---- reprs -----------------------------------------------------------------------------------


def test_module_reprs_match_the_reference_strings():
    assert repr(Net()) == (
        "Net(\n"
        "  (fc1): Linear(in_features=4, out_features=3, bias=True)\n"
        "  (act): ReLU()\n"
        "  (fc2): Linear(in_features=3, out_features=2, bias=False)\n"
        ")")
    nested = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Tanh()))
    assert repr(nested) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=2, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Tanh()\n"
        "  )\n"
        ")")
    assert repr(nn.Module()) == "Module()"

    class Multi(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Identity()

        def extra_repr(self):
            return "first\nsecond"

    assert repr(Multi()) == "Multi(\n  first\n  second\n  (inner): Identity()\n)"
