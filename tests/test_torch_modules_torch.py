"""torch's smaller modules that libraries import with themselves, against torch: the backends'
availability answers and flags, torch.__config__, torch.utils.dlpack, torch.nn.modules.utils,
torch.nn.parallel.scatter_gather's CPU errors, torch.ops.load_library's error."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def test_backends_answer_for_autojits_kernels():
    backends = autojit.backends
    assert not backends.mkldnn.is_available() and not backends.mkl.is_available()
    assert not backends.openmp.is_available() and not backends.mkldnn.is_acl_available()
    assert backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert backends.opt_einsum.is_available() == torch.backends.opt_einsum.is_available()
    assert (backends.mkldnn.enabled, backends.opt_einsum.enabled, backends.opt_einsum.strategy) \
        == (torch.backends.mkldnn.enabled, torch.backends.opt_einsum.enabled,
            torch.backends.opt_einsum.strategy)
    with backends.mkldnn.flags(enabled=False), backends.mkldnn.verbose(1), \
            backends.mkl.verbose(backends.mkl.VERBOSE_ON):
        assert backends.mkldnn.enabled is False
    assert backends.mkldnn.enabled is True
    for top in (autojit, torch):
        with pytest.raises(RuntimeError, match="set_enabled_mkldnn expects a bool"):
            top.backends.mkldnn.enabled = 1


def test_no_quantized_engine_is_reported():
    """autojit has no quantized kernels: programs that look for an engine skip their quantized
    paths, and choosing one is refused."""
    quantized = autojit.backends.quantized
    assert (quantized.engine, quantized.supported_engines) == ("none", ["none"])
    quantized.engine = "none"
    with pytest.raises(RuntimeError, match="quantized engine FBGEMM is not supported"):
        quantized.engine = "fbgemm"


def test_config_describes_the_build():
    shown = autojit.__config__.show()
    assert "NumPy" in shown and "llvmlite" in shown and "CPU capability usage" in shown
    assert f"autojit.get_num_threads() : {autojit.get_num_threads()}" in \
        autojit.__config__.parallel_info()


def test_dlpack_module_names():
    assert [(name, int(value)) for name, value in
            autojit.utils.dlpack.DLDeviceType.__members__.items()] == [
        (name, int(value)) for name, value in torch.utils.dlpack.DLDeviceType.__members__.items()]
    mine = autojit.arange(6.0).reshape(2, 3)
    theirs = torch.utils.dlpack.from_dlpack(autojit.utils.dlpack.to_dlpack(mine))
    back = autojit.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(theirs * 2))
    np.testing.assert_array_equal(back.numpy(), mine.numpy() * 2)


def test_module_utils_as_torchs():
    from torch.nn.modules import utils as theirs

    from autojit.nn.modules import utils as mine
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4, 5, 6]):
            assert getattr(mine, name)(value) == getattr(theirs, name)(value)
    assert mine._ntuple(5)(2) == theirs._ntuple(5)(2)
    assert mine._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert mine._list_with_default([None, 4], [7, 8, 9]) == \
        theirs._list_with_default([None, 4], [7, 8, 9])
    for helper in (mine, theirs):
        with pytest.raises(ValueError, match="Input dimension should be at least 3"):
            helper._list_with_default([None, 4], [7, 8])
    states = []
    for helper in (mine, theirs):
        state = collections.OrderedDict([("module.w", 1), ("b", 2), ("module.c", 3)])
        state._metadata = {"": 0, "module": 1, "module.c": 2}
        helper.consume_prefix_in_state_dict_if_present(state, "module.")
        states.append((list(state.items()), dict(state._metadata)))
    assert states[0] == states[1]


def test_scatter_gather_refuse_cpu_tensors():
    from autojit.nn.parallel.scatter_gather import gather, scatter
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
        gather([autojit.ones(2, 2), autojit.zeros(1, 2)], -1)
    with pytest.raises(RuntimeError, match="at least one CUDA device"):
        scatter((autojit.ones(4, 2),), [])


def test_load_library_raises_oserror_for_a_missing_or_foreign_library(tmp_path):
    with pytest.raises(OSError):
        autojit.ops.load_library(tmp_path / "missing.so")
    not_a_library = tmp_path / "text.so"
    not_a_library.write_text("not a shared library")
    with pytest.raises(OSError):
        autojit.ops.load_library(not_a_library)
    assert not autojit.ops.loaded_libraries


def _aten_outcomes(top) -> list:
    aten = top.ops.aten
    x = top.tensor(np.arange(12.0).reshape(3, 4))
    i = top.tensor([2, 0])
    y = x.clone()

    def plain(value):
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        return (str(value.dtype).split(".")[-1], value.tolist())

    calls = [
        lambda: aten.clone.default(x), lambda: aten._to_copy.default(x, dtype=top.float32),
        lambda: aten.index_select.default(x, 1, i), lambda: aten.select.int(x, 0, 1),
        lambda: aten.sub.Tensor(x, x, alpha=2), lambda: aten.sub.Scalar(x, 1.5),
        lambda: aten.add.Tensor(x, x), lambda: aten.add.Scalar(x, 2),
        lambda: aten.squeeze.default(x[None]), lambda: aten.squeeze.dim(x[None], 0),
        lambda: aten.squeeze.dims(x[None, :, None], [0, 2]),
        lambda: aten.sort.default(x, 1, True), lambda: aten.sort.stable(x, stable=True, dim=0),
        lambda: aten.flip.default(x, [0]), lambda: aten.cat.default([x, x], 1),
        lambda: aten.alias.default(x), lambda: aten.unsqueeze.default(x, 1),
        lambda: aten.unbind.int(x, 1), lambda: aten.detach.default(x),
        lambda: aten.mm.default(x, x.t()), lambda: aten.index.Tensor(x, [None, i]),
        lambda: aten.index.Tensor(x, [i]), lambda: aten.add_.Tensor(y, x),
        lambda: aten.sub_.Scalar(y, 1.0), lambda: aten.clone(x), lambda: aten.sub(x, 1.0)]
    return [plain(call()) for call in calls] + [str(aten.clone.default),
                                                aten.clone.default.name()]


def test_aten_tensor_operators_as_torchs():
    assert _aten_outcomes(autojit) == _aten_outcomes(torch)


def test_tensor_str_helpers_as_torchs():
    for top in (autojit, torch):
        x = top.arange(6.0).reshape(2, 3)
        assert top._tensor_str._tensor_str(x, 7) == "[[0., 1., 2.],\n        [3., 4., 5.]]"
        assert top._tensor_str._add_suffixes("tensor([1])", ["a=1"], 7, True) == \
            "tensor([1]),\n       a=1)"
        assert top._tensor_str._str_intern(top.arange(3, dtype=top.int32),
                                           tensor_contents="Q") == \
            f"tensor(Q, dtype={top.__name__}.int32)"


def test_absent_cuda_and_rpc_answer_as_torch_without_them():
    from autojit._subclasses.fake_tensor import is_fake
    absent = () if autojit.cuda.is_available() else (  # the simulator, after a CUDA test
        (autojit.cuda.Stream, RuntimeError, "requires CUDA support"),
        (autojit.cuda.Event, RuntimeError, "dummy base class Event"),
        (autojit.cuda.current_stream, AssertionError, "not compiled"))
    for make, kind, text in absent:
        with pytest.raises(kind, match=text):
            make()
    from autojit.distributed import rpc

    assert rpc.is_available() is False
    assert not is_fake(autojit.ones(2)) and not is_fake(autojit.ones(2, device="meta"))
    traced = []

    @autojit.compile
    def step(x):
        traced.append(is_fake(x))
        return x * 2

    step(autojit.ones(2))
    assert traced == [True]


def test_data_loader_iterators_have_torchs_names():
    from autojit.utils.data import dataloader

    class Wrapped(autojit.utils.data.DataLoader):
        def _get_iterator(self):
            iterator = super()._get_iterator()
            assert isinstance(iterator, dataloader._BaseDataLoaderIter)
            return ([tensor * 10 for tensor in batch] for batch in iterator)

    dataset = autojit.utils.data.TensorDataset(autojit.arange(4.0))
    assert [batch[0].tolist() for batch in Wrapped(dataset, batch_size=2)] == \
        [[0.0, 10.0], [20.0, 30.0]]
    assert autojit.jit._overload(len) is len


def _storage_outcomes(top) -> list:
    import warnings

    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        base = top.arange(6.0).reshape(2, 3)
        column = base[:, 1]
        typed = column.storage()
        seen += [type(typed).__name__, len(typed), typed.size(), str(typed.dtype).split(".")[-1],
                 str(typed.device), typed.element_size(), typed.nbytes(), bool(typed),
                 typed.tolist(), typed[1]]
        untyped = column.untyped_storage()
        seen += [type(untyped).__name__, len(untyped), untyped.nbytes(),
                 untyped.data_ptr() == typed.data_ptr(),
                 column.data_ptr() - untyped.data_ptr(), base.data_ptr() == untyped.data_ptr(),
                 bool(top.tensor([], dtype=top.long).storage()),
                 top.ones(2, device="meta").data_ptr()]
        typed[0] = 9.0
        seen.append(base.tolist())
        seen.append(any("TypedStorage is deprecated" in str(w.message) for w in caught))
        sparse = top.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
        seen.append(top.dsmm(sparse, top.ones(2, 2)).tolist())
    return seen


def test_storage_and_data_ptr_as_torchs():
    assert _storage_outcomes(autojit) == _storage_outcomes(torch)


def test_older_names_libraries_still_import():
    import autojit.nn.modules.linear as linear

    for top in (autojit, torch):
        assert issubclass(top.optim.lr_scheduler._LRScheduler, top.optim.lr_scheduler.LRScheduler)
    attention = autojit.nn.MultiheadAttention(4, 2)
    assert type(attention.out_proj) is linear.NonDynamicallyQuantizableLinear

    class Halving(autojit.optim.lr_scheduler._LRScheduler):
        def get_lr(self):
            return [group["initial_lr"] * 0.5 for group in self.optimizer.param_groups]

    optimizer = autojit.optim.SGD([autojit.nn.Parameter(autojit.ones(1))], lr=0.1)
    Halving(optimizer).step()
    assert optimizer.param_groups[0]["lr"] == 0.05
