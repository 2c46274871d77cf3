"""Creation functions (creation.py) against torch's behaviour.

dtype inference, dtype= and requires_grad= on every factory, memory sharing of from_numpy and
as_tensor, range values, seeded random streams, the *_like forms, and the errors for bad
input. Expected values follow torch 2.x.
"""

import numpy as np
import pytest

import autojit

# ---- tensor(): dtype inference -------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype", [
    (1.5, autojit.float32),
    (3, autojit.int64),
    (True, autojit.bool),
    ([1, 2.0], autojit.float32),
    ([True, 1], autojit.int64),
    ([True, 1.5], autojit.float32),
    ([[1, 2], [3, 4]], autojit.int64),
    ([], autojit.float32),
    ([np.float64(1.0), 2], autojit.float64),
    (np.int32(3), autojit.int32),
    (np.zeros(2, np.float16), autojit.float16),
    (np.zeros(2, np.float64), autojit.float64),
    (np.zeros(2, np.int32), autojit.int32),
    ([np.array([1, 2]), np.array([3, 4])], autojit.int64),
])
def test_tensor_infers_torch_dtype(data, dtype):
    assert autojit.tensor(data).dtype is dtype


def test_tensor_follows_default_dtype():
    autojit.set_default_dtype(autojit.float64)
    try:
        assert autojit.tensor([1.5]).dtype is autojit.float64
        assert autojit.zeros(2).dtype is autojit.float64
        assert autojit.arange(0.0, 1.0, 0.5).dtype is autojit.float64
        assert autojit.tensor([1]).dtype is autojit.int64
    finally:
        autojit.set_default_dtype(autojit.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        autojit.set_default_dtype(autojit.int64)


def test_tensor_copies_its_data():
    array = np.array([1.0, 2.0])
    x = autojit.tensor(array)
    array[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    source = autojit.tensor([1.0, 2.0])
    copy = autojit.tensor(source, dtype=autojit.float64)
    assert copy.dtype is autojit.float64 and copy.tolist() == [1.0, 2.0]


def test_tensor_of_tensors_reads_one_element_each():
    # as torch: a tensor inside the list is one number (torch.stack joins tensors)
    x = autojit.tensor([autojit.tensor([1.0]), autojit.tensor(2.0)])
    assert x.shape == (2,) and x.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="only one element tensors can be converted"):
        autojit.tensor([autojit.tensor([1.0, 2.0]), autojit.tensor([3.0, 4.0])])


def test_tensor_dtype_and_requires_grad_arguments():
    x = autojit.tensor([1, 2], dtype=autojit.float64, requires_grad=True)
    assert x.dtype is autojit.float64 and x.requires_grad and x.is_leaf
    assert autojit.tensor([1.7, -1.7], dtype=autojit.int64).tolist() == [1, -1]
    with pytest.raises(TypeError, match=r"tensor\(\): argument 'dtype' must be autojit.dtype"):
        autojit.tensor([1.0], dtype="float16")
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype "
                       "can require gradients$"):  # torch's message, capitalized here
        autojit.tensor([1, 2], requires_grad=True)


def test_tensor_rejects_ragged_and_unknown_data():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        autojit.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        autojit.tensor([[1, 2], 3])
    with pytest.raises(TypeError, match="Could not infer dtype of str"):
        autojit.tensor(["a"])


# ---- from_numpy and as_tensor share memory -------------------------------------------------------

def test_from_numpy_is_zero_copy_both_ways():
    array = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = autojit.from_numpy(array)
    assert x.dtype is autojit.float64 and x.shape == (2, 2)
    array[0, 0] = 10.0
    assert x.tolist()[0][0] == 10.0
    x.add_(1.0)
    assert array[1, 1] == 5.0


@pytest.mark.parametrize("numpy_dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                         np.int16, np.int8, np.uint8, np.bool_, np.complex64,
                                         np.complex128, np.uint16, np.uint32, np.uint64])
def test_from_numpy_keeps_supported_dtypes(numpy_dtype):
    x = autojit.from_numpy(np.zeros(3, numpy_dtype))
    assert x.dtype.numpy == np.dtype(numpy_dtype)


@pytest.mark.parametrize("numpy_dtype", [np.longdouble, np.object_])
def test_from_numpy_rejects_unsupported_dtypes(numpy_dtype):
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        autojit.from_numpy(np.zeros(2, numpy_dtype))


def test_from_numpy_needs_an_array():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        autojit.from_numpy([1.0, 2.0])


def test_as_tensor_shares_when_it_can():
    array = np.array([1.0, 2.0], dtype=np.float32)
    shared = autojit.as_tensor(array)
    array[0] = 7.0
    assert shared.tolist()[0] == 7.0
    converted = autojit.as_tensor(array, dtype=autojit.float64)
    array[1] = 9.0
    assert converted.tolist() == [7.0, 2.0]
    x = autojit.tensor([1.0])
    assert autojit.as_tensor(x) is x
    assert autojit.as_tensor([1, 2]).dtype is autojit.int64


# ---- filled tensors ------------------------------------------------------------------------------

@pytest.mark.parametrize("factory, value", [(autojit.zeros, 0), (autojit.ones, 1),
                                            (autojit.empty, None)])
def test_filled_factories(factory, value):
    for shape_args in [(2, 3), ((2, 3),), ([2, 3],)]:
        x = factory(*shape_args)
        assert x.shape == (2, 3) and x.dtype is autojit.float32 and not x.requires_grad
        if value is not None:
            assert (x.numpy() == value).all()
    assert factory(()).shape == ()
    assert factory(4, dtype=autojit.int32).dtype is autojit.int32
    assert factory(2, dtype=autojit.bool).dtype is autojit.bool
    grad = factory(2, requires_grad=True)
    assert grad.requires_grad and grad.is_leaf


def test_full_infers_dtype_from_fill_value():
    assert autojit.full((2,), 1.5).dtype is autojit.float32
    assert autojit.full((2,), 3).dtype is autojit.int64
    assert autojit.full((2,), True).dtype is autojit.bool
    x = autojit.full((2, 2), 7, dtype=autojit.float64, requires_grad=True)
    assert x.dtype is autojit.float64 and x.requires_grad and x.tolist() == [[7.0, 7.0]] * 2


def test_negative_dimensions_raise():
    with pytest.raises(RuntimeError, match="negative"):
        autojit.zeros(2, -1)
    with pytest.raises(RuntimeError, match="negative"):
        autojit.full((-1,), 1.0)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        autojit.eye(-1)


@pytest.mark.parametrize("like, value", [(autojit.zeros_like, 0), (autojit.ones_like, 1),
                                         (autojit.empty_like, None)])
def test_like_factories_keep_shape_and_dtype(like, value):
    source = autojit.tensor([[1, 2, 3]], dtype=autojit.int32)
    x = like(source)
    assert x.shape == (1, 3) and x.dtype is autojit.int32
    if value is not None:
        assert (x.numpy() == value).all()
    y = like(source, dtype=autojit.float64, requires_grad=True)
    assert y.dtype is autojit.float64 and y.requires_grad


def test_full_like_and_random_like():
    source = autojit.zeros(2, 3, dtype=autojit.float64)
    assert autojit.full_like(source, 2.5).tolist() == [[2.5] * 3] * 2
    assert autojit.rand_like(source).dtype is autojit.float64
    assert autojit.randn_like(source).shape == (2, 3)
    integers = autojit.randint_like(autojit.zeros(50, dtype=autojit.int64), 3, 6)
    assert integers.dtype is autojit.int64
    assert set(integers.tolist()) <= {3, 4, 5}
    with pytest.raises(RuntimeError):
        autojit.rand_like(autojit.zeros(2, dtype=autojit.int64))


# ---- ranges --------------------------------------------------------------------------------------

def test_arange_values_and_dtypes():
    assert autojit.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert autojit.arange(5).dtype is autojit.int64
    assert autojit.arange(2, 8, 3).tolist() == [2, 5]
    assert autojit.arange(5, 0, -2).tolist() == [5, 3, 1]
    x = autojit.arange(0, 1, 0.1)
    assert x.dtype is autojit.float32 and x.shape == (10,)
    np.testing.assert_allclose(x.numpy(), np.arange(10) * 0.1, rtol=1e-6, atol=1e-7)
    assert autojit.arange(1, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert autojit.arange(4, dtype=autojit.float64).dtype is autojit.float64
    assert autojit.arange(3, requires_grad=True, dtype=autojit.float32).requires_grad
    assert autojit.arange(0).shape == (0,)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        autojit.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step "
                                           "sign"):
        autojit.arange(0, 5, -1)


def test_linspace():
    x = autojit.linspace(0, 1, 5)
    assert x.dtype is autojit.float32 and x.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert autojit.linspace(0, 10, 5, dtype=autojit.int64).tolist() == [0, 2, 5, 7, 10]
    assert autojit.linspace(3, 3, 1).tolist() == [3.0]
    assert autojit.linspace(0, 1, 0).shape == (0,)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        autojit.linspace(0, 1, -1)


def test_eye():
    assert autojit.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert autojit.eye(2).dtype is autojit.float32
    assert autojit.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert autojit.eye(3, dtype=autojit.int64).dtype is autojit.int64
    assert autojit.eye(2, requires_grad=True).requires_grad


# ---- random --------------------------------------------------------------------------------------

def test_manual_seed_reproduces_every_stream():
    def draw():
        return (autojit.rand(3).tolist(), autojit.randn(2, 2).tolist(),
                autojit.randint(0, 100, (5,)).tolist())

    autojit.manual_seed(1234)
    first = draw()
    autojit.manual_seed(1234)
    assert draw() == first
    autojit.manual_seed(4321)
    assert draw() != first


def test_random_values_and_dtypes():
    autojit.manual_seed(0)
    uniform = autojit.rand(1000)
    assert uniform.dtype is autojit.float32
    assert 0.0 <= uniform.numpy().min() and uniform.numpy().max() < 1.0
    normal = autojit.randn(4000, dtype=autojit.float64)
    assert normal.dtype is autojit.float64 and abs(normal.numpy().mean()) < 0.1
    assert 0.9 < normal.numpy().std() < 1.1
    assert autojit.rand((2, 3)).shape == (2, 3)
    assert autojit.randn(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        autojit.rand(2, dtype=autojit.int64)


def test_randint_signatures():
    autojit.manual_seed(0)
    high_only = autojit.randint(10, (3,))
    assert high_only.shape == (3,) and high_only.dtype is autojit.int64
    assert set(high_only.tolist()) <= set(range(10))
    both = autojit.randint(5, 8, (2, 4), dtype=autojit.int32)
    assert both.shape == (2, 4) and both.dtype is autojit.int32
    assert set(both.numpy().reshape(-1).tolist()) <= {5, 6, 7}
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        autojit.randint(5, 5, (2,))


def test_factories_reject_other_devices():
    if not autojit.cuda.is_available():  # tests/test_cuda.py may have enabled the simulator
        with pytest.raises(RuntimeError, match="device 'cuda.*' is not available"):
            autojit.zeros(2, device="cuda")
    assert autojit.zeros(2, device="cpu").device == autojit.device("cpu")
