"""torch.nested's strided nested tensors against torch (autojit/nested.py): construction, the
answers about sizes and their errors, unbind, values and padding, elementwise ops, printing,
and gradients through as_nested_tensor, values, unbind and to_padded_tensor."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

A = np.arange(6.0).reshape(2, 3)
B = np.arange(12.0).reshape(4, 3)


def _both(call):
    """call(lib, nested tensor of A and B) under torch and autojit."""
    results = []
    for lib in (torch, autojit):
        nt = lib.nested.nested_tensor([lib.tensor(A), lib.tensor(B)])
        try:
            results.append(("ok", call(lib, nt)))
        except Exception as error:  # noqa: BLE001 - compared with torch's
            results.append((type(error).__name__, str(error)))
    return results


def _plain(value):
    if hasattr(value, "is_nested") and value.is_nested:
        return ("nested", [_plain(part) for part in value.unbind()])
    if hasattr(value, "numpy"):
        return ("tensor", str(value.dtype).split(".")[1], value.detach().numpy().tolist())
    if isinstance(value, (tuple, list)):
        return [_plain(part) for part in value]
    if type(value).__name__ == "Size":
        return tuple(value)
    return value


def _same(ours, theirs) -> None:
    """Equal structure, names and dtypes; values to float64 rounding (erf's last place)."""
    if isinstance(ours, (list, tuple)) and ours and isinstance(ours[0], str) and \
            ours[0] == "tensor":
        assert ours[:2] == theirs[:2]
        assert np.allclose(np.array(ours[2], dtype=float), np.array(theirs[2], dtype=float),
                           rtol=1e-12, atol=0)
    elif isinstance(ours, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for mine, other in zip(ours, theirs):
            _same(mine, other)
    else:
        assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda L, nt: (nt.dim(), nt.size(0), nt.size(2), nt.size(-1), nt.numel(), nt.is_nested,
                   nt.requires_grad, nt.is_contiguous()),
    lambda L, nt: nt.size(1), lambda L, nt: nt.size(), lambda L, nt: nt.shape,
    lambda L, nt: len(nt), lambda L, nt: nt.size(3),
    lambda L, nt: nt.values(), lambda L, nt: nt._nested_tensor_size(),
    lambda L, nt: nt._nested_tensor_strides(), lambda L, nt: nt.unbind(),
    lambda L, nt: nt.unbind(1), lambda L, nt: nt[1],
    lambda L, nt: nt.to_padded_tensor(-1.0), lambda L, nt: L.nested.to_padded_tensor(
        nt, 0.0, (3, 5, 4)),
    lambda L, nt: nt + 2, lambda L, nt: 1 - nt, lambda L, nt: nt * nt, lambda L, nt: nt.sin(),
    lambda L, nt: nt / (nt + 1), lambda L, nt: nt > 1, lambda L, nt: nt == nt,
    lambda L, nt: nt.exp(),
    lambda L, nt: nt > L.tensor(0.0), lambda L, nt: nt.clone().mul_(2),
    lambda L, nt: L.nn.functional.gelu(nt), lambda L, nt: nt.bool(),
    lambda L, nt: nt + L.tensor(1.0), lambda L, nt: nt + L.ones(3),
    lambda L, nt: nt.to(L.float64), lambda L, nt: nt.clone(), lambda L, nt: nt.detach(),
    lambda L, nt: nt.sum(), lambda L, nt: L.nested.nested_tensor([[1, 2], [3]]),
    lambda L, nt: L.nested.nested_tensor([L.ones(2, 2), L.ones(3)]),
    lambda L, nt: repr(nt).replace("torch.", "").replace("autojit.", ""),
])
def test_nested_tensors_answer_as_torchs(call):
    theirs, ours = _both(call)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        _same(_plain(ours[1]), _plain(theirs[1]))
    elif ours[0] == "NotImplementedError":
        assert "NestedTensorCPU" in ours[1]
    else:
        assert ours[1] == theirs[1]


def test_values_share_memory_and_gradients_flow():
    for lib in (torch, autojit):
        x = lib.tensor(np.arange(60.0).reshape(5, 4, 3), requires_grad=True)
        nested = lib.nested.as_nested_tensor(list(lib.split(x, [2, 3])))
        assert nested.requires_grad and nested.is_nested
        values = nested.contiguous().values()
        grad = lib.tensor(np.random.default_rng(0).random((5, 4, 3)))
        values.view(-1, 4, 3).backward(grad)
        assert lib.equal(x.grad, grad)
        held = lib.nested.nested_tensor([lib.ones(2), lib.ones(3)])
        held.values().add_(1)  # values() is the nested tensor's own memory
        assert held.to_padded_tensor(0.0).tolist() == [[2.0, 2.0, 0.0], [2.0, 2.0, 2.0]]


def test_padded_gradients_and_a_nested_leaf_are_torchs():
    grads = []
    for lib in (torch, autojit):
        y = lib.tensor(A, requires_grad=True)
        made = lib.nested.as_nested_tensor([y, y * 2, y[:1]])
        (made.to_padded_tensor(0.0) * lib.arange(3.0)).sum().backward()
        leaf = lib.nested.nested_tensor([lib.tensor(A), lib.tensor(B)], requires_grad=True)
        (leaf * 3).values().sum().backward()
        grads.append((y.grad.tolist(), leaf.is_leaf, leaf.grad.is_nested,
                      [part.tolist() for part in leaf.grad.unbind()]))
    assert grads[0] == grads[1]


def test_a_property_whose_id_was_reused_keeps_its_own_name(monkeypatch):
    # A property dispatch dropped can free its id for another one; the cache of property names
    # must not answer with the dropped one's name (is_nested read as is_cuda, intermittently).
    from autojit import nested
    from autojit.tensor.tensor import Tensor

    nt = autojit.nested.nested_tensor([autojit.ones(2), autojit.ones(3)])
    assert nt.is_nested is True  # dispatch has put its own properties on Tensor by now
    prop = Tensor.__dict__["is_nested"]
    monkeypatch.setitem(nested._PROPERTIES, id(prop), (property(lambda self: 0), "is_cuda"))
    assert nt.detach().is_nested is True


@pytest.mark.parametrize("call", [
    lambda L, nt: nt.sum(-1, keepdim=True), lambda L, nt: L.sum(nt, dim=2, keepdim=True),
    lambda L, nt: nt.sum([-1], True), lambda L, nt: nt.sum(-1), lambda L, nt: nt.sum(1, True),
    lambda L, nt: nt.sum(3, True), lambda L, nt: nt.sum((1, 2), True),
    lambda L, nt: nt.sum(None, True), lambda L, nt: nt.sum(-1, True, dtype=L.float64),
    lambda L, nt: nt.int().sum(-1, True), lambda L, nt: nt.to(L.uint8).sum(-1, True),
    lambda L, nt: nt.bool().sum(-1, True), lambda L, nt: nt.sum(),
    lambda L, nt: L.nested.nested_tensor([L.ones(2, 0, 3), L.ones(1, 2, 3)]).sum(-1, True),
    lambda L, nt: L.nested.nested_tensor([L.arange(3.0), L.arange(5.0)]).sum(-1, True),
    lambda L, nt: L.nested.nested_tensor([L.ones(2, 0), L.ones(1, 0)]).sum(-1, True),
])
def test_nested_sum_over_the_last_dim_is_torchs(call):
    theirs, ours = _both(call)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        _same(_plain(ours[1]), _plain(theirs[1]))
    elif ours[0] == "NotImplementedError":
        assert ours[1].split(" backend.")[0] == theirs[1].split(" backend.")[0]
    else:
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nested_sum_values_and_gradients_are_torchs(dtype):
    rng = np.random.default_rng(3)
    parts = [rng.standard_normal(shape) for shape in ((3, 2, 7), (1, 4, 7), (2, 3, 7))]
    grads = [rng.standard_normal(shape[:-1] + (1,)) for shape in ((3, 2, 7), (1, 4, 7),
                                                                  (2, 3, 7))]
    results = []
    for lib in (torch, autojit):
        kind = getattr(lib, dtype)
        leaves = [lib.tensor(part, dtype=kind, requires_grad=True) for part in parts]
        summed = lib.nested.as_nested_tensor(leaves).sum(-1, keepdim=True)
        summed.backward(lib.nested.nested_tensor([lib.tensor(g, dtype=kind) for g in grads]))
        results.append(([p.float().tolist() for p in summed.unbind()],
                        [leaf.grad.float().tolist() for leaf in leaves], summed.grad_fn.name()))
    theirs, ours = results
    assert ours[2] == theirs[2] == "SumBackwardAutogradNestedTensor1"
    tolerance = 1e-2 if dtype == "float16" else 1e-6
    for mine, other in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        assert np.allclose(mine, other, rtol=tolerance, atol=tolerance)


def test_nested_sum_saves_its_input_for_backward():
    # torch's test_per_dispatch_key_input_saving: sum's input is saved for nested tensors, so
    # writing it in place before backward raises.
    for lib in (torch, autojit):
        x = lib.nested.nested_tensor([lib.rand(2), lib.rand(2)], requires_grad=True).clone()
        result = x.sum(-1, keepdim=True)
        x.add_(x)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            result.backward(lib.nested.nested_tensor([lib.rand(1), lib.rand(1)]))
