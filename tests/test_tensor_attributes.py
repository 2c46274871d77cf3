"""Tensor attributes and conversions (tensor.py, tensor_methods.py) and nn.Parameter.

Shape queries, dtype/device, autograd metadata (requires_grad, grad setter checks, grad_fn and
next_functions, is_leaf), data access (numpy, item, tolist, __array__), aliasing (data,
detach, detach_, clone, contiguous), dtype conversions, and torch's type promotion rules.
"""

import numpy as np
import pytest

import autojit
from autojit.nn import Parameter

# ---- shape and type ------------------------------------------------------------------------------


def test_shape_queries():
    x = autojit.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, autojit.Size)
    assert repr(x.shape) == "autojit.Size([2, 3, 4])"
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3
    assert x.numel() == 24 and x.nelement() == 24 and x.shape.numel() == 24
    assert len(x) == 2
    scalar = autojit.tensor(1.0)
    assert scalar.shape == () and scalar.dim() == 0 and scalar.numel() == 1
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-3, 2\], but got 3\)"):
        x.size(3)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(scalar)


def test_dtype_and_device():
    x = autojit.tensor([1.0])
    assert x.dtype is autojit.float32 and repr(x.dtype) == "autojit.float32"
    assert x.device == autojit.device("cpu") and str(x.device) == "cpu"
    assert not x.is_cuda and x.is_floating_point()
    assert not autojit.tensor([1]).is_floating_point()


# ---- autograd metadata -------------------------------------------------------------------------


def test_requires_grad_flags():
    x = autojit.tensor([1.0, 2.0])
    assert not x.requires_grad and x.is_leaf
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        autojit.tensor([1, 2]).requires_grad_()
    y = autojit.tensor([1.0], requires_grad=True) * 2
    assert not y.is_leaf and y.requires_grad
    y.requires_grad_(True)  # allowed: it already requires grad
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables"):
        y.requires_grad_(False)


def test_grad_setter_checks():
    x = autojit.zeros(2, 3, requires_grad=True)
    x.grad = autojit.ones(2, 3)
    assert x.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = autojit.ones(3, 2)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        x.grad = autojit.ones(2, 3, dtype=autojit.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = [[1.0] * 3] * 2
    x.grad = None
    assert x.grad is None
    x.grad = autojit.ones(2, 3)
    del x.grad
    assert x.grad is None


def test_non_leaf_grad_access_warns():
    y = autojit.tensor([1.0], requires_grad=True) * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert y.grad is None


def test_grad_fn_names_and_next_functions():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    w = autojit.tensor([3.0, 4.0], requires_grad=True)
    product = x * w
    total = product.sum()
    assert type(product.grad_fn).__name__ == "MulBackward0"
    assert type(total.grad_fn).__name__ == "SumBackward0"
    assert total.grad_fn.next_functions[0][0] is product.grad_fn
    accumulators = [node for node, _ in product.grad_fn.next_functions]
    assert [type(node).__name__ for node in accumulators] == ["AccumulateGrad"] * 2
    assert accumulators[0].variable is x and accumulators[1].variable is w
    assert x.grad_fn is None
    assert type((x + 1).grad_fn).__name__ == "AddBackward0"
    assert type(x.exp().grad_fn).__name__ == "ExpBackward0"


def test_no_history_without_requires_grad():
    x = autojit.tensor([1.0, 2.0])
    assert (x * 2).grad_fn is None
    with autojit.no_grad():
        assert (autojit.tensor([1.0], requires_grad=True) * 2).grad_fn is None


# ---- data access ---------------------------------------------------------------------------------


def test_numpy_item_tolist():
    x = autojit.tensor([[1.0, 2.0], [3.0, 4.0]])
    array = x.numpy()
    assert isinstance(array, np.ndarray) and array.dtype == np.float32
    array[0, 0] = 9.0  # numpy() shares storage
    assert x.tolist() == [[9.0, 2.0], [3.0, 4.0]]
    assert autojit.tensor([2.5]).item() == 2.5
    assert isinstance(autojit.tensor(3).item(), int)
    assert isinstance(autojit.tensor(True).item(), bool)
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to "
                                           "Scalar"):
        x.item()
    assert autojit.tensor(5).tolist() == 5


def test_numpy_refuses_tensors_that_require_grad():
    x = autojit.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]
    assert x.numpy(force=True).tolist() == [1.0]


def test_array_protocol_and_python_numbers():
    x = autojit.tensor([1.0, 2.0])
    assert np.asarray(x).tolist() == [1.0, 2.0]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert float(autojit.tensor([2.5])) == 2.5 and int(autojit.tensor(7)) == 7
    assert bool(autojit.tensor([1])) and not bool(autojit.tensor(0.0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is "
                                           "ambiguous"):
        bool(x)


@pytest.mark.skipif(not hasattr(autojit.Tensor, "__getitem__"), reason="needs indexing")
def test_iteration_yields_rows():
    x = autojit.tensor([[1, 2], [3, 4]])
    assert [row.tolist() for row in x] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(autojit.tensor(1))


# ---- aliasing and copies ------------------------------------------------------------------------


def test_clone_is_a_differentiable_copy():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    assert type(y.grad_fn).__name__ == "CloneBackward0"
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    (y * autojit.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_detach_shares_storage_and_version_counter():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    alias = y.detach()
    assert alias.grad_fn is None and not alias.requires_grad and alias.is_leaf
    assert np.shares_memory(alias.numpy(), y.detach().numpy())
    version = y._version
    alias.add_(1.0)
    assert y._version == version + 1
    assert y.detach().tolist() == [3.0, 5.0]


def test_data_shares_storage_without_history():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    data = x.data
    assert not data.requires_grad and data.grad_fn is None
    data.mul_(10)
    assert x.detach().tolist() == [10.0, 20.0]


def test_assigning_data_of_another_shape_and_dtype_keeps_the_tensor_as_torchs():
    torch = pytest.importorskip("torch")
    results = []
    for library in (autojit, torch):
        weight = library.nn.Parameter(library.ones(2))
        (weight * 2).sum().backward()
        weight.data = library.ones(3, dtype=library.float64) * 3  # a layer resized in place
        plain = library.ones(2, 3)
        plain.data = library.zeros(5)
        results.append((str(weight.dtype).split(".")[-1], tuple(weight.shape),
                        weight.requires_grad, weight.is_leaf, type(weight).__name__,
                        weight.tolist(), weight.grad.tolist(), tuple(plain.shape)))
        with pytest.raises(TypeError):
            weight.data = 3
    assert results[0] == results[1]


def test_detach_in_place():
    x = autojit.tensor([1.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf


def test_contiguous():
    x = autojit.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.contiguous() is x and x.is_contiguous()
    transposed = x.permute(1, 0)
    result = transposed.contiguous()
    assert result.is_contiguous() and result.tolist() == [[1.0, 3.0], [2.0, 4.0]]


# ---- conversions -----------------------------------------------------------------------------


def test_dtype_conversions():
    x = autojit.tensor([1.5, -2.5])
    assert x.to(autojit.float64).dtype is autojit.float64
    assert x.to(dtype=autojit.float16).dtype is autojit.float16
    assert x.to(autojit.float32) is x
    assert x.double().dtype is autojit.float64 and x.half().dtype is autojit.float16
    assert x.long().tolist() == [1, -2] and x.long().dtype is autojit.int64
    assert x.int().dtype is autojit.int32
    assert autojit.tensor([1, 2]).float().dtype is autojit.float32
    assert x.bool().tolist() == [True, True]
    assert x.to(autojit.tensor([1])).dtype is autojit.int64
    assert x.type_as(autojit.tensor([1.0], dtype=autojit.float64)).dtype is autojit.float64
    assert x.to("cpu") is x
    assert x.to(autojit.float32, copy=True) is not x


def test_conversion_is_differentiable():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.requires_grad and y.grad_fn is not None
    (y * y).sum().backward()
    assert x.grad.dtype is autojit.float32 and x.grad.tolist() == [2.0, 4.0]


# ---- type promotion -------------------------------------------------------------------------


def f32(values):
    return autojit.tensor(values, dtype=autojit.float32)


@pytest.mark.parametrize("make, expected", [
    (lambda: f32([1.0]) * 2.5, autojit.float32),  # a Python float does not upcast float32
    (lambda: autojit.tensor([1, 2]) + 1.5, autojit.float32),  # int tensor + float -> default
    (lambda: autojit.tensor([1, 2]) * 2, autojit.int64),
    (lambda: autojit.tensor([1.0], dtype=autojit.float16) + autojit.tensor(1.0),
     autojit.float16),  # a 0-d tensor of the same category does not upcast
    (lambda: autojit.tensor([1.0], dtype=autojit.float16) + f32([1.0]), autojit.float32),
    (lambda: autojit.tensor([1], dtype=autojit.int32) + autojit.tensor(1), autojit.int32),
    (lambda: autojit.tensor([1], dtype=autojit.int32) + autojit.tensor([1]), autojit.int64),
    (lambda: autojit.tensor([True]) + 1, autojit.int64),
    (lambda: autojit.tensor([True]) + autojit.tensor([True]), autojit.bool),
    (lambda: autojit.tensor([1, 2]) / autojit.tensor([2, 2]), autojit.float32),
    (lambda: autojit.tensor([1], dtype=autojit.int32) + autojit.tensor(1.5, dtype=autojit.float64),
     autojit.float64),  # a 0-d tensor of a higher category brings its own dtype
    (lambda: f32([1.0]) + autojit.tensor(1.0, dtype=autojit.float64), autojit.float32),
    (lambda: autojit.tensor([1.0], dtype=autojit.float64) * 2, autojit.float64),
])
def test_promotion_follows_torch(make, expected):
    assert make().dtype is expected


def test_int_true_division_values():
    assert (autojit.tensor([1, 3]) / 2).tolist() == [0.5, 1.5]


# ---- Parameter --------------------------------------------------------------------------------


def test_parameter_is_a_leaf_that_requires_grad():
    parameter = Parameter(autojit.tensor([1.0, 2.0]))
    assert isinstance(parameter, autojit.Tensor) and isinstance(parameter, Parameter)
    assert parameter.requires_grad and parameter.is_leaf and parameter.grad_fn is None
    frozen = Parameter(autojit.tensor([1.0]), requires_grad=False)
    assert not frozen.requires_grad
    assert Parameter().shape == (0,)


def test_parameter_shares_the_source_storage():
    source = autojit.tensor([1.0, 2.0])
    parameter = Parameter(source)
    source.add_(1.0)
    assert parameter.detach().tolist() == [2.0, 3.0]


def test_parameter_in_ops_and_backward():
    weight = Parameter(autojit.tensor([[1.0, 2.0], [3.0, 4.0]]))
    x = autojit.tensor([[0.5, -1.0], [2.0, 1.0]])
    loss = (weight * x).sum()
    assert type(loss).__name__ == "Tensor" and loss.grad_fn is not None
    loss.backward()
    assert weight.grad.tolist() == [[0.5, -1.0], [2.0, 1.0]]
    assert repr(weight) == ("Parameter containing:\ntensor([[1., 2.],\n        [3., 4.]], "
                            "requires_grad=True)")
