"""The direct paths of a data pipeline's per-sample ops (randint, rand_like, randn_like, flip,
zero padding) against torch and against the general path: the same random numbers as the
general path draws, torch's values, layouts and errors, gradients to second order where
the input requires grad, and the same results inside a compiled function.
docs/notes/eager-dispatch.md ("An augmenting Dataset's ops") says why they exist."""

import numpy as np
import pytest
import torch

import autojit

F = autojit.nn.functional


def _general(draw):
    """The numbers of `draw(generator)` through the general path (a generator= given) and the
    direct one (none given), both from the default generator seeded alike."""
    autojit.manual_seed(7)
    general = draw(autojit.default_generator)
    autojit.manual_seed(7)
    direct = draw(None)
    return general, direct


@pytest.mark.parametrize("draw", [
    lambda g: autojit.randint(0, 3, (2,), generator=g),
    lambda g: autojit.randint(-5, 2 ** 32 - 5, (3, 2), generator=g),
    lambda g: autojit.randint(4, 9, (), generator=g),
    lambda g: autojit.randint(1, 2, (0, 3), generator=g),
    lambda g: autojit.randn_like(autojit.zeros(1, 8, 8), generator=g),
    lambda g: autojit.rand_like(autojit.zeros(4, 3, dtype=autojit.float64), generator=g),
    lambda g: autojit.randn_like(autojit.zeros(2, 6)[:, ::2], generator=g),
    lambda g: autojit.rand_like(autojit.zeros((), dtype=autojit.float16), generator=g),
    lambda g: autojit.rand((), generator=g),
    lambda g: autojit.rand(3, 0, generator=g),
    lambda g: autojit.rand([2, 5], generator=g),
    lambda g: autojit.randn(4, 3, generator=g),
    lambda g: autojit.randn((7,), generator=g),
])
def test_direct_draws_continue_the_general_stream(draw):
    general, direct = _general(draw)
    assert direct.dtype is general.dtype and direct.shape == general.shape
    np.testing.assert_array_equal(direct.numpy(), general.numpy())
    assert direct.stride() == general.stride()
    # and the generator is left where the general path leaves it
    autojit.manual_seed(7)
    draw(None)
    after_direct = autojit.rand(4)
    autojit.manual_seed(7)
    draw(autojit.default_generator)
    np.testing.assert_array_equal(after_direct.numpy(), autojit.rand(4).numpy())


def test_rand_and_randn_take_the_default_dtype_and_refuse_as_torch():
    autojit.set_default_dtype(autojit.float64)
    try:
        assert autojit.rand(()).dtype is autojit.float64
        general, direct = _general(lambda g: autojit.randn(2, 3, generator=g))
        np.testing.assert_array_equal(direct.numpy(), general.numpy())
    finally:
        autojit.set_default_dtype(autojit.float32)
    for call in (lambda m: m.rand(-1), lambda m: m.randn(2, -3), lambda m: m.rand(2.5),
                 lambda m: m.randn((2, "a"))):
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(type(expected.value)):
            call(autojit)
    with autojit.device("meta"):
        assert autojit.rand(2).device.type == "meta" and autojit.randn(()).device.type == "meta"
    compiled = autojit.compile(lambda x: x + autojit.rand(()) + autojit.randn(3))
    autojit.manual_seed(3)
    first = compiled(autojit.zeros(3)).numpy()
    autojit.manual_seed(3)
    np.testing.assert_array_equal(first, (autojit.rand(()) + autojit.randn(3)).numpy())


def test_randint_refuses_as_torch_where_the_direct_path_does_not_draw():
    for call in (lambda m: m.randint(3, 3, (2,)), lambda m: m.randint(5, 3, (2,)),
                 lambda m: m.randint(0, 3, (2,), requires_grad=True)):
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(type(expected.value)):
            call(autojit)
    assert autojit.randint(0, 2 ** 40, (4,)).dtype is autojit.int64
    with autojit.device("meta"):
        assert autojit.randint(0, 3, (2,)).device.type == "meta"


def _pair(shape, requires_grad=False, dtype=np.float32):
    array = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    return (autojit.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


@pytest.mark.parametrize("shape,dims", [((1, 8, 8), (-1,)), ((2, 3, 4), (0, 2)),
                                        ((5,), (0,)), ((2, 3), ()), ((3, 0), (1,))])
def test_flip_matches_torch(shape, dims):
    ours, theirs = _pair(shape)
    for o, t in ((ours, theirs), (ours.transpose(0, -1), theirs.transpose(0, -1))):
        flipped = o.flip(dims)
        expected = t.flip(dims)
        np.testing.assert_array_equal(flipped.numpy(), expected.numpy())
        assert flipped.shape == expected.shape and flipped.dtype is autojit.float32
        flipped.add_(1)  # a copy, never a view of o
        np.testing.assert_array_equal(o.numpy(), t.numpy())


@pytest.mark.parametrize("pad", [(1, 1, 1, 1), (0, 2), (2, 0, 0, 1, 1, 0), (0, 0)])
def test_zero_pad_matches_torch(pad):
    ours, theirs = _pair((1, 3, 4), dtype=np.int64)
    for value in (None, 0, 0.0):
        padded = F.pad(ours, pad, value=value)
        expected = torch.nn.functional.pad(theirs, pad, value=value)
        np.testing.assert_array_equal(padded.numpy(), expected.numpy())
        assert padded.dtype is autojit.int64 and padded.stride() == expected.stride()


def test_flip_and_pad_errors_are_torchs():
    calls = [lambda m, x: x.flip(0, 0), lambda m, x: x.flip(3), lambda m, x: x.flip(-4),
             lambda m, x: m.nn.functional.pad(x, (1,)),
             lambda m, x: m.nn.functional.pad(x, (1, 1) * 4)]
    ours, theirs = _pair((1, 3, 4))
    for call in calls:
        with pytest.raises(Exception) as expected:
            call(torch, theirs)
        with pytest.raises(type(expected.value), match=str(expected.value)[:30].replace(
                "(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            call(autojit, ours)


def test_flip_and_pad_record_gradients_to_second_order():
    results = []
    for library, x in zip((autojit, torch), _pair((1, 3, 4), requires_grad=True), strict=True):
        y = library.nn.functional.pad(x, (1, 2, 0, 1)).flip(-1)[:, :, 1:] * x.sum()
        (grad,) = library.autograd.grad((y * y).sum(), x, create_graph=True)
        (second,) = library.autograd.grad(grad.pow(2).sum(), x)
        assert y.grad_fn is not None
        results.append((y.detach().numpy(), grad.detach().numpy(), second.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_compiled_augmentation_equals_eager():
    def augment(image):
        padded = F.pad(image, (1, 1, 1, 1))
        return padded.flip(-1) + 0.05 * autojit.randn_like(padded)

    image = autojit.rand(1, 8, 8)
    compiled = autojit.compile(augment)
    autojit.manual_seed(3)
    eager = [augment(image) for _ in range(3)]
    autojit.manual_seed(3)
    traced = [compiled(image) for _ in range(3)]
    for e, c in zip(eager, traced, strict=True):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-6, atol=1e-7)
