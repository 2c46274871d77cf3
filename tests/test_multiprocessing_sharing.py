"""Tensors that cross processes by their memory, as torch.multiprocessing's do: multiprocessing's
ForkingPickler (queues, pipes, a "spawn" child's arguments) sends a CPU tensor or Parameter as
its shared memory's descriptor, moving it there first; writes on either side are seen by the
other. DataLoader workers send their batches so (is_shared() on the batches, as in torch), and
a storage's `_new_shared` is shared memory to collate into. Compared with torch where the
behaviour shows in one process (the sender's tensor moved, the refusal of a non-leaf)."""

from __future__ import annotations

import multiprocessing
import os
import sys

import numpy as np
import pytest
from torch_compare import torch

import autojit
from autojit.utils.data import DataLoader, TensorDataset

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="os.memfd_create")
ForkingPickler = multiprocessing.reduction.ForkingPickler


def test_a_round_trip_maps_the_same_memory_and_moves_the_sender_as_torchs():
    for framework in (torch, autojit):
        base = framework.arange(8.0)
        view = base[1::2]
        received = ForkingPickler.loads(ForkingPickler.dumps(view))
        assert base.is_shared() and view.is_shared() and received.is_shared()
        assert received.tolist() == [1.0, 3.0, 5.0, 7.0]
        received[0] = 100.0
        base[7] = -1.0
        assert base[1].item() == 100.0 and received[3].item() == -1.0


def test_a_parameter_crosses_as_a_parameter():
    weight = autojit.nn.Parameter(autojit.ones(2, 3))
    received = ForkingPickler.loads(ForkingPickler.dumps(weight))
    assert type(received) is autojit.nn.Parameter and received.requires_grad
    with autojit.no_grad():
        received.mul_(3.0)
    assert weight.sum().item() == 18.0


def test_a_non_leaf_that_requires_grad_is_refused_with_torchs_error():
    messages = []
    for framework in (torch, autojit):
        leaf = framework.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            ForkingPickler.dumps(leaf * 2)
        messages.append(str(error.value))
        assert ForkingPickler.loads(ForkingPickler.dumps((leaf * 2).detach())).tolist() == \
            [2.0, 2.0]
    assert messages[0] == messages[1]


def test_plain_pickle_still_copies():
    import pickle

    x = autojit.zeros(3)
    copied = pickle.loads(pickle.dumps(x))
    copied += 1
    assert not x.is_shared() and x.tolist() == [0.0, 0.0, 0.0]


def _write(tensor, weight, queue, done):
    with autojit.no_grad():
        tensor += 1
        weight.mul_(2)
    queue.put(autojit.arange(4.0))
    done.wait()  # the receiver takes the descriptor from this process: it must still run


def test_a_spawned_child_writes_its_arguments_and_sends_shared_tensors():
    context = multiprocessing.get_context("spawn")
    tensor, weight = autojit.zeros(3), autojit.nn.Parameter(autojit.ones(2))
    queue, done = context.Queue(), context.Event()
    child = context.Process(target=_write, args=(tensor, weight, queue, done))
    child.start()
    try:
        received = queue.get(timeout=120)
    finally:
        done.set()
        child.join(120)
    assert child.exitcode == 0
    assert tensor.tolist() == [1.0, 1.0, 1.0] and weight.tolist() == [2.0, 2.0]
    assert received.is_shared() and received.tolist() == [0.0, 1.0, 2.0, 3.0]


def _collate_into_shared(batch):
    """torch_geometric's collate: into a storage from `_new_shared` inside a worker."""
    first = batch[0][0]
    storage = first.untyped_storage()._new_shared(
        len(batch) * first.numel() * first.element_size())
    out = first.new(storage).view(len(batch), *first.shape)
    return autojit.stack([row for row, _ in batch], 0, out=out), \
        autojit.stack([label for _, label in batch])


@pytest.mark.parametrize("collate", [None, _collate_into_shared])
def test_worker_batches_arrive_in_shared_memory_as_torchs(collate):
    values = np.arange(64.0, dtype=np.float32).reshape(16, 4)
    data = TensorDataset(autojit.tensor(values), autojit.arange(16))
    loader = DataLoader(data, batch_size=4, num_workers=2, collate_fn=collate)
    batches = list(loader)
    assert all(x.is_shared() and y.is_shared() for x, y in batches)
    np.testing.assert_array_equal(np.concatenate([x.numpy() for x, _ in batches]), values)
    assert [y.tolist() for _, y in batches][1] == [4, 5, 6, 7]


def test_received_batches_hold_no_file_descriptors():
    # torch's receivers close the descriptor once mapped: keeping many batches is fine
    data = TensorDataset(autojit.randn(1200, 3), autojit.arange(1200))
    before = len(os.listdir("/proc/self/fd"))
    kept = list(DataLoader(data, batch_size=2, num_workers=2))
    assert len(kept) == 600 and kept[300][0].is_shared()
    assert len(os.listdir("/proc/self/fd")) - before < 50
