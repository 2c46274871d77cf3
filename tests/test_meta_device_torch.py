"""The meta device against torch: factories, conversions and ops give meta tensors of torch's
shapes and dtypes without data; reading values raises torch's errors; printing, autograd,
Module.to("meta"), Module.to_empty, and the model-ensembling pattern (a deep copy of a model
on the meta device as functional_call's template under vmap) against torch.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from torch_compare import torch

import autojit


def _describe(framework, value):
    """What a meta result is compared by: device, shape, dtype and requires_grad (or the
    value of anything that is not a tensor)."""
    if isinstance(value, (tuple, list)):
        return [_describe(framework, item) for item in value]
    if isinstance(value, framework.Tensor):
        return (str(value.device), tuple(value.shape), str(value.dtype).split(".")[-1],
                value.requires_grad)
    return value


def _outcome(framework, function):
    try:
        return ("returns", _describe(framework, function(framework)))
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return ("raises", type(error).__name__, str(error).split("\n")[0])


def _m(t, *shape, **options):
    return t.empty(*shape, device="meta", **options)


CASES = {
    "empty": lambda t: _m(t, 2, 3),
    "factories": lambda t: (t.zeros(2, dtype=t.int64, device="meta"), t.ones(3, device="meta"),
                            t.full((2,), 1.5, device="meta"), t.arange(3, device="meta"),
                            t.tensor([1.0, 2.0], device="meta"), t.randn(4, device="meta"),
                            t.eye(3, device="meta")),
    "likes": lambda t: (t.empty_like(_m(t, 2)), t.zeros_like(_m(t, 2, 1)), _m(t, 2).new_zeros(3),
                        t.rand_like(_m(t, 2), dtype=t.float64)),
    "to_meta": lambda t: t.ones(2, 3).to("meta"),
    "to_meta_requires_grad": lambda t: t.ones(2, requires_grad=True).to("meta"),
    "arithmetic": lambda t: (_m(t, 2, 3) * 2 + 1).sum(0),
    "matmul": lambda t: _m(t, 2, 3) @ _m(t, 3, 4),
    "reductions": lambda t: (_m(t, 2, 3).mean(), _m(t, 2, 3).amax(1), (_m(t, 2) > 0).any()),
    "layout": lambda t: (_m(t, 2, 3).t(), _m(t, 2, 3)[0], _m(t, 6).reshape(2, 3),
                         t.cat([_m(t, 2), _m(t, 3)]), _m(t, 2, 3).unsqueeze(0)),
    "nn": lambda t: (t.softmax(_m(t, 2, 3), 1), t.nn.functional.linear(_m(t, 2, 3), _m(t, 4, 3)),
                     t.nn.functional.cross_entropy(_m(t, 2, 3),
                                                   t.zeros(2, dtype=t.int64, device="meta"))),
    "scalar_tensor_operand": lambda t: _m(t, 2) + t.tensor(1.0),
    "index_with_meta": lambda t: _m(t, 4, 2)[t.tensor([0, 1], device="meta")],
    "inplace": lambda t: _m(t, 2).add_(1),
    "copy_from_cpu": lambda t: _m(t, 2, 3).copy_(t.ones(2, 3)),
    "setitem": lambda t: _m(t, 2, 3).__setitem__(0, 1.0),
    "device_object": lambda t: str(t.device("meta")),
    "flags": lambda t: (_m(t, 2).is_meta, _m(t, 2).is_cpu, _m(t, 2).is_cuda,
                        _m(t, 2).get_device(), _m(t, 2, 3).stride(), _m(t, 2, 3).is_contiguous()),
    "mixed_devices": lambda t: _m(t, 2, 3) + t.ones(2, 3),
    "numpy": lambda t: _m(t, 2).numpy(),
    "item": lambda t: _m(t, 1).item(),
    "item_of_many": lambda t: _m(t, 2).item(),
    "float": lambda t: float(_m(t, 1)),
    "bool": lambda t: bool(_m(t, 1)),
    "tolist": lambda t: _m(t, 2).tolist(),
    "cpu": lambda t: _m(t, 2).cpu(),
    "to_cpu": lambda t: _m(t, 2).to("cpu"),
    "nonzero": lambda t: _m(t, 2).nonzero(),
    "allclose": lambda t: t.allclose(_m(t, 2), _m(t, 2)),
}
# torch's messages for an op with no meta implementation name its kernel; autojit's say there
# is no data: the types agree.
TYPE_ONLY = {"nonzero"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_tensors_as_torch(name):
    mine, theirs = _outcome(autojit, CASES[name]), _outcome(torch, CASES[name])
    if name in TYPE_ONLY:
        mine, theirs = mine[:2], theirs[:2]
    assert mine == theirs


def test_printing_as_torch():
    for make in (lambda t: _m(t, 2, 3), lambda t: _m(t, 2, dtype=t.int64),
                 lambda t: t.nn.Parameter(_m(t, 3)), lambda t: (_m(t, 2, requires_grad=True) * 2),
                 lambda t: _m(t, 0)):
        printed = [repr(make(t)).replace("torch.", "autojit.").replace("MulBackward0", "Mul")
                   for t in (torch, autojit)]
        assert printed[1] == printed[0]


def test_no_memory_and_no_random_draw():
    big = autojit.empty(10 ** 7, 10 ** 6, device="meta")  # 40 TB if it held data
    assert big.shape == (10 ** 7, 10 ** 6) and big.nbytes == 4 * 10 ** 13
    autojit.manual_seed(3)
    autojit.randn(10 ** 9, device="meta")
    first = autojit.rand(1).item()
    autojit.manual_seed(3)
    assert autojit.rand(1).item() == first


def test_autograd_on_meta_tensors_as_torch():
    results = []
    for t in (torch, autojit):
        weight = _m(t, 3, 2, requires_grad=True)
        loss = (weight.exp() * 2).sum()
        loss.backward()
        (weight * 3).sum().backward()  # accumulated into the meta .grad
        results.append(_describe(t, (loss, weight.grad)))
    assert results[1] == results[0]


def test_module_to_meta_and_to_empty_as_torch():
    for t in (torch, autojit):
        model = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.BatchNorm1d(4))
        assert model.to("meta") is model
        weight = model[0].weight  # torch makes new Parameters here, autojit keeps them
        assert isinstance(weight, t.nn.Parameter) and weight.requires_grad and weight.is_meta
        assert model[1].running_mean.is_meta
        copied = copy.deepcopy(model)
        assert copied[0].weight.is_meta and copied[0].weight is not weight
        assert model.to_empty(device="cpu") is model
        weight = model[0].weight
        assert isinstance(weight, t.nn.Parameter) and weight.requires_grad
        assert weight.device == t.device("cpu") and weight.shape == (4, 3)
        out = model(t.ones(2, 3))  # uninitialized values: shape only
        assert out.shape == (2, 4)
        model[1].to_empty(device="meta", recurse=False)
        assert model[1].weight.is_meta and not model[0].weight.is_meta


def _mlp_class(t):
    """The model of torch's model-ensembling tutorial, for either framework."""
    class MLP(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = t.nn.Linear(4, 8)
            self.norm = t.nn.BatchNorm1d(8)
            self.fc2 = t.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.norm(self.fc1(x)).relu())

    return MLP


def test_model_ensembling_as_torch():
    rng = np.random.default_rng(0)
    values = [[rng.standard_normal(shape) for shape in ((8, 4), (8,), (8,), (8,), (3, 8), (3,))]
              for _ in range(3)]
    x = rng.standard_normal((5, 4))
    outputs, grads = [], []
    for t in (torch, autojit):
        mlp = _mlp_class(t)
        models = [mlp() for _ in range(3)]
        for model, arrays in zip(models, values):
            with t.no_grad():
                for parameter, array in zip(model.parameters(), arrays):
                    parameter.copy_(t.tensor(array, dtype=t.float32))
        params, buffers = t.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def fmodel(params, buffers, x, t=t, base=base):
            return t.func.functional_call(base, (params, buffers), (x,))

        out = t.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers,
                                                         t.tensor(x, dtype=t.float32))
        out.square().sum().backward()
        outputs.append(out.detach().numpy())
        grads.append(params["fc1.weight"].grad.numpy())
        assert base.fc1.weight.is_meta
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5)
