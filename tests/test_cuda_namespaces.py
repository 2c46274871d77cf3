"""The default device, the accelerator and the CUDA devices' generators with a GPU (Numba's CUDA
simulator in CI): factories follow `set_default_device("cuda")` and `with device("cuda")`, and
autojit.cuda's seeding gives random tensors made on the device a stream of their own."""

from __future__ import annotations

import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit

pytestmark = MARKS


def same(a, b) -> bool:
    return bool((a.cpu() == b.cpu()).all())


def test_factories_follow_the_default_device():
    with autojit.device("cuda"):
        made = [autojit.zeros(2), autojit.tensor([1.0, 2.0]), autojit.arange(3),
                autojit.rand(2), autojit.randperm(3), autojit.normal(0.0, 1.0, (2,))]
        assert all(x.is_cuda for x in made)
        assert autojit.get_default_device() == autojit.device("cuda", 0)
        assert not autojit.zeros(2, device="cpu").is_cuda
    assert not autojit.zeros(2).is_cuda
    autojit.set_default_device("cuda")
    try:
        assert autojit.ones(2).is_cuda and autojit.get_default_device().type == "cuda"
    finally:
        autojit.set_default_device(None)


def test_the_accelerator_is_the_gpu():
    assert autojit.accelerator.is_available()
    assert autojit.accelerator.current_accelerator() == autojit.device("cuda")
    assert autojit.accelerator.device_count() == autojit.cuda.device_count() >= 1
    assert autojit.accelerator.current_device_index() == 0


def test_cuda_seeding_gives_the_devices_random_tensors_their_own_stream():
    autojit.cuda.manual_seed(5)
    first = autojit.randn(4, device="cuda")
    autojit.cuda.manual_seed_all(5)
    assert same(autojit.randn(4, device="cuda"), first)
    assert autojit.cuda.initial_seed() == 5
    state = autojit.cuda.get_rng_state()
    ahead = autojit.rand(3, device="cuda")
    autojit.cuda.set_rng_state(state)
    assert same(autojit.rand(3, device="cuda"), ahead)
    # The CPU's stream is not the device's: seeding one leaves the other.
    autojit.manual_seed(5)
    cpu_draw = autojit.randn(4)
    autojit.cuda.manual_seed(6)
    autojit.manual_seed(5)
    assert same(autojit.randn(4), cpu_draw)
    # autojit.manual_seed seeds both, as torch.manual_seed does.
    autojit.manual_seed(5)
    assert same(autojit.randn(4, device="cuda"), first)


def test_a_generator_must_be_of_the_tensors_device():
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but "
                                           "found 'cpu'"):
        autojit.rand(2, device="cuda", generator=autojit.Generator())
    generator = autojit.Generator(device="cuda").manual_seed(1)
    assert generator.device.type == "cuda"
    assert autojit.rand(2, device="cuda", generator=generator).is_cuda
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but "
                                           "found 'cuda'"):
        autojit.rand(2, generator=generator)


def test_cuda_typed_constructors_make_and_recognise_gpu_tensors():
    x = autojit.cuda.FloatTensor(2, 3)
    assert x.device.type == "cuda" and x.dtype is autojit.float32 and x.shape == (2, 3)
    y = autojit.cuda.LongTensor([1, 2])
    assert y.device.type == "cuda" and y.dtype is autojit.int64 and y.cpu().tolist() == [1, 2]
    assert isinstance(x, autojit.cuda.FloatTensor) and not isinstance(x, autojit.FloatTensor)
    assert not isinstance(x.cpu(), autojit.cuda.FloatTensor)
    assert not isinstance(x, autojit.cuda.DoubleTensor)
    assert repr(autojit.cuda.FloatTensor) == "<class 'autojit.cuda.FloatTensor'>"
    assert x.type() == "autojit.cuda.FloatTensor"
    alias = autojit.cuda.FloatTensor(x)
    alias[0, 0] = 5.0
    assert x[0, 0].item() == 5.0
    with pytest.raises(TypeError, match=r"expected TensorOptions\(dtype=float, device=cuda\)"):
        autojit.cuda.FloatTensor(autojit.zeros(2))
