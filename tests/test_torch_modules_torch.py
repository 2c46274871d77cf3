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
