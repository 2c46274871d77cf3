"""The torch names transformers and torchvision reach at import and in training, against
torch: pytree key paths, _grouped_mm, TransformGetItemToIndex, FakeTensor, torch.xpu,
writes through an expand that repeats nothing, and DTensor with its placements and functional
collectives in a world of one process (distributed/tensor/, docs/drop-in.md)."""

import collections

import numpy as np
import pytest

import autojit as aj

torch = pytest.importorskip("torch")


def test_pytree_key_paths_are_torchs():
    import torch.utils._pytree as theirs

    from autojit.utils import _pytree as ours

    point = collections.namedtuple("Point", "a b")
    tree = {"x": [1, (2, 3)], "y": point(4, {"z": 5})}

    def paths(module):
        pairs, _ = module.tree_flatten_with_path(tree)
        keystr = module.keystr
        return ([(keystr(path), leaf) for path, leaf in pairs],
                module.tree_map_with_path(lambda p, x, y: (keystr(p), x + y), tree, tree))

    assert paths(ours) == paths(theirs)
    assert ours._dict_flatten_with_keys({"a": 1})[0] == [(ours.MappingKey("a"), 1)]


@pytest.mark.parametrize("shapes", [((7, 8), (3, 8, 8), [2, 5, 7]), ((3, 6, 8), (3, 8, 8), None),
                                    ((8, 8), (8, 8), [3, 8]), ((3, 8, 8), (8, 8), [2, 5, 8])])
def test_grouped_mm_is_torchs(shapes):
    a_shape, b_shape, offsets = shapes
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(a_shape, np.float32), rng.standard_normal(b_shape, np.float32)

    def run(lib):
        offs = None if offsets is None else lib.tensor(offsets, dtype=lib.int32)
        return lib._grouped_mm(lib.from_numpy(a), lib.from_numpy(b), offs=offs).numpy()

    np.testing.assert_allclose(run(aj), run(torch), rtol=1e-5, atol=1e-5)


def test_grouped_mm_errors_are_torchs():
    for lib in (aj, torch):
        a, w = lib.ones(7, 8), lib.ones(3, 8, 8)
        with pytest.raises(RuntimeError, match="Offsets have to be int32"):
            lib._grouped_mm(a, w, offs=lib.tensor([2, 5, 7]))
        with pytest.raises(RuntimeError, match="Have to provide offsets"):
            lib._grouped_mm(a, w)
        with pytest.raises(RuntimeError, match="got Double"):
            lib._grouped_mm(a.double(), w.double(), offs=lib.tensor([2, 5, 7], dtype=lib.int32))


def test_getitem_to_index_mode_indexes_with_tensors():
    from autojit._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    table = aj.arange(12.0).view(3, 4)
    with TransformGetItemToIndex():
        got = table[aj.tensor(2), 1]
    assert got.tolist() == 9.0 and got.dim() == 0


def test_fake_tensor_xpu_pin_memory_and_expand_writes_are_torchs():
    from autojit._subclasses import FakeTensor

    assert not isinstance(aj.ones(2), FakeTensor)
    compiled = aj.compile(lambda x: x * 2 if isinstance(x, FakeTensor) else x * 3)
    assert compiled(aj.ones(2)).tolist() == [2.0, 2.0]  # traced: a fake tensor, as torch's
    assert aj.xpu.is_available() is torch.xpu.is_available() is False
    assert aj.xpu.device_count() == torch.xpu.device_count() == 0
    for lib in (aj, torch):
        if lib.cuda.is_available():  # (autojit's, where the tests run CUDA on the simulator)
            assert lib.ones(2).pin_memory().tolist() == [1.0, 1.0]
        else:
            with pytest.raises(RuntimeError, match="Cannot access accelerator"):
                lib.ones(2).pin_memory()
        # An expand that adds only a dim of one repeats no element: writes go through.
        ids = lib.arange(4).expand((1, -1))
        ids.copy_(lib.arange(4).flip(0).expand((1, -1)))
        assert ids.tolist() == [[3, 2, 1, 0]]
        with pytest.raises(RuntimeError, match="single memory location"):
            lib.zeros(3).expand(2, 3).add_(1)


@pytest.fixture
def world():
    import autojit.distributed as dist

    dist.init_process_group()
    yield dist
    dist.destroy_process_group()


def test_dtensor_in_a_world_of_one(world):
    from autojit.distributed import _functional_collectives as funcol
    from autojit.distributed.tensor import (
        DTensor,
        Partial,
        Replicate,
        Shard,
        distribute_tensor,
        init_device_mesh,
    )
    from autojit.distributed.tensor._utils import compute_local_shape_and_global_offset

    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))
    assert mesh["tp"].shape == (1,) and mesh.get_local_rank("tp") == 0
    x = aj.arange(12.0).view(4, 3).requires_grad_()
    d = distribute_tensor(x, mesh, [Shard(0)])
    assert isinstance(d, DTensor) and d.is_leaf and d.requires_grad
    assert d.shape == (4, 3) and d.size(0) == 4 and d.placements == (Shard(0),)
    assert (d * 2).placements == (Shard(0),)  # elementwise on alike placements
    with pytest.raises(NotImplementedError, match="matmul on DTensors placed"):
        d @ d.T
    replicated = d.redistribute(placements=[Replicate()])
    assert (replicated @ replicated.T).placements == (Replicate(),)
    assert d.full_tensor().tolist() == x.tolist()
    partial = DTensor.from_local(aj.ones(2), mesh, [Partial()])
    assert partial.full_tensor().tolist() == [1.0, 1.0]
    (d * 3).to_local().sum().backward()
    assert isinstance(d.grad, DTensor) and d.grad.placements == (Shard(0),)
    aj.optim.SGD([d], lr=0.1).step()
    assert d.full_tensor()[0].tolist() == pytest.approx([-0.3, 0.7, 1.7])
    assert compute_local_shape_and_global_offset((5, 3), mesh, [Shard(0)]) == ((5, 3), (0, 0))
    assert not isinstance(x, DTensor)
    # Shard sizes are torch.chunk's.
    from torch.distributed.tensor.placement_types import Shard as TorchShard
    for size, chunks in ((10, 4), (3, 4), (8, 3)):
        assert [Shard.local_shard_size_and_offset(size, chunks, r) for r in range(chunks)] == \
            [TorchShard.local_shard_size_and_offset(size, chunks, r) for r in range(chunks)]
    y = aj.tensor([1.0, 2.0], requires_grad=True)
    total = funcol.wait_tensor(funcol.all_reduce(y * 2, "sum", world.group.WORLD))
    moved = funcol.all_to_all_single_autograd(total, None, None, list(range(1)))
    moved.sum().backward()
    assert total.tolist() == [2.0, 4.0] and y.grad.tolist() == [2.0, 2.0]


def test_fsdp_and_sharded_checkpoints_say_they_are_not_built():
    from autojit.distributed.checkpoint.hf_storage import HuggingFaceStorageReader
    from autojit.distributed.checkpoint.state_dict import get_model_state_dict
    from autojit.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    model = aj.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
        fully_shard(model)
    with pytest.raises(NotImplementedError, match="autojit.save"):
        HuggingFaceStorageReader("path")
    assert MixedPrecisionPolicy().param_dtype is None
    assert list(get_model_state_dict(model)) == ["weight", "bias"]


def test_grouped_mm_gradients_are_those_of_each_groups_product():
    rng = np.random.default_rng(2)
    a = aj.tensor(rng.standard_normal((7, 8)), dtype=aj.float32, requires_grad=True)
    w = aj.tensor(rng.standard_normal((3, 8, 5)), dtype=aj.float32, requires_grad=True)
    weights = aj.tensor(rng.standard_normal((7, 5)), dtype=aj.float32)
    (aj._grouped_mm(a, w, offs=aj.tensor([2, 5, 7], dtype=aj.int32)) * weights).sum().backward()
    got = (a.grad.numpy().copy(), w.grad.numpy().copy())
    a.grad = w.grad = None
    parts = [a[s:e] @ w[g] for g, (s, e) in enumerate(((0, 2), (2, 5), (5, 7)))]
    (aj.cat(parts) * weights).sum().backward()
    np.testing.assert_allclose(got[0], a.grad.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], w.grad.numpy(), rtol=1e-6, atol=1e-6)
