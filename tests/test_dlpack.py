"""DLPack capsules built and read by autojit (dlpack_capsule.py), checked against NumPy's and
torch's own producers and consumers.

CUDA tensors export through these capsules; on the CPU the same structures describe host
memory, so the layout, the version handling, the consume-once renaming and the deleter calls
are checked here without a GPU. test_cuda.py checks CUDA tensors themselves.
"""

import gc

import numpy as np
import pytest

import autojit
from autojit.interop import dlpack_capsule
from autojit.tensor import dtypes


class Exporter:
    """An object whose __dlpack__ hands out a capsule made elsewhere."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **options):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def export(array, device=(1, 0), versioned=False):
    return dlpack_capsule.export(array.ctypes.data, device, array.shape, array.dtype, array,
                                 versioned=versioned)


def exports_now() -> int:
    gc.collect()
    return len(dlpack_capsule._EXPORTS)


@pytest.mark.parametrize("versioned", [False, True])
def test_numpy_reads_an_exported_capsule_and_releases_it(versioned):
    before = exports_now()
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    capsule = export(source, versioned=versioned)
    assert dlpack_capsule.device_of(capsule) == (1, 0)
    shared = np.from_dlpack(Exporter(capsule))
    assert shared.shape == (2, 3) and shared.dtype == np.float32
    source[1, 2] = 42.0
    assert shared[1, 2] == 42.0  # the same memory
    del source
    assert exports_now() == before + 1  # the export keeps the memory's owner alive
    assert shared.sum() == 0 + 1 + 2 + 3 + 4 + 42
    del shared, capsule
    assert exports_now() == before  # numpy called the deleter


def test_torch_reads_an_exported_capsule_in_both_forms():
    torch = pytest.importorskip("torch")
    before = exports_now()
    source = np.arange(4, dtype=np.int64)
    shared = torch.from_dlpack(export(source))  # a bare capsule, as torch accepts
    shared[1] = -5
    assert source.tolist() == [0, -5, 2, 3] and shared.dtype == torch.int64
    versioned = torch.from_dlpack(Exporter(export(source, versioned=True)))
    versioned[2] = 7
    assert source.tolist() == [0, -5, 7, 3]
    del shared, versioned
    assert exports_now() == before


def test_an_unconsumed_capsule_releases_its_export():
    before = exports_now()
    capsule = export(np.ones(3), versioned=True)
    assert exports_now() == before + 1
    del capsule
    assert exports_now() == before


@pytest.mark.parametrize("versioned", [False, True])
def test_reads_numpy_capsules_and_consumes_them_once(versioned):
    array = np.arange(12, dtype=np.float64).reshape(3, 4)
    for source, strides in ((array, (4, 1)), (array.T, (1, 4))):
        options = {"max_version": (1, 0)} if versioned else {}
        capsule = source.__dlpack__(**options)
        taken = dlpack_capsule.take(capsule)
        assert taken.device == (1, 0) and taken.dtype == np.float64
        assert taken.shape == source.shape and taken.pointer == array.ctypes.data
        assert (taken.strides or (4, 1)) == strides
        assert taken.is_c_contiguous() == (source is array)
        with pytest.raises(BufferError, match="can be consumed only once"):
            dlpack_capsule.take(capsule)


def test_reads_torch_capsules():
    torch = pytest.importorskip("torch")
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)[:, 1:]
    for capsule in (torch.utils.dlpack.to_dlpack(source), source.__dlpack__(max_version=(1, 0))):
        taken = dlpack_capsule.take(capsule)
        assert taken.pointer == source.data_ptr() and taken.shape == (2, 2)
        assert taken.strides == (3, 1) and not taken.is_c_contiguous()
    complex_source = torch.tensor([1 + 2j, -3j], dtype=torch.complex128)
    shared = autojit.from_dlpack(complex_source)  # kDLComplex, both ways
    assert shared.dtype is autojit.complex128 and shared.tolist() == [1 + 2j, -3j]
    assert torch.from_dlpack(shared).tolist() == [1 + 2j, -3j]
    for framework in (autojit, torch):
        with pytest.raises(BufferError, match="^Can't export tensors with the conjugate bit set$"):
            framework.tensor([1j]).conj().__dlpack__()


def test_every_dtype_round_trips_through_the_structures():
    for dtype in dtypes.ALL:
        array = np.zeros((2, 1, 3), dtype.numpy)
        taken = dlpack_capsule.take(export(array, device=(2, 3), versioned=True))
        assert taken.dtype == dtype.numpy and taken.device == (2, 3)
        assert taken.shape == (2, 1, 3) and taken.strides is None and taken.is_c_contiguous()
        assert taken.pointer == array.ctypes.data
    for code, bits in ((2, 12), (6, 32), (4, 16)):  # odd widths, bfloat16
        with pytest.raises(BufferError, match=f"code {code}, {bits} bits, 1 lanes"):
            dlpack_capsule.numpy_dtype(dlpack_capsule.DLDataType(code, bits, 1))
    with pytest.raises(BufferError, match="code 5, 32 bits, 1 lanes"):
        dlpack_capsule.numpy_dtype(dlpack_capsule.DLDataType(5, 32, 1))  # complex32


def test_from_dlpack_takes_a_bare_capsule_writable_and_shared():
    before = exports_now()
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = autojit.from_dlpack(array.__dlpack__())  # a legacy capsule: NumPy's reader would
    x.add_(1.0)  # make this read-only
    assert array.tolist() == [[1, 2, 3], [4, 5, 6]]
    y = autojit.from_dlpack(array.T.__dlpack__(max_version=(1, 0)))
    assert y.shape == (3, 2) and y[2, 1].item() == 6.0
    kept = np.arange(3, dtype=np.int32)
    z = autojit.from_dlpack(export(kept))
    del kept
    assert exports_now() == before + 1 and z.tolist() == [0, 1, 2]
    del z
    assert exports_now() == before
    assert autojit.from_dlpack(np.zeros((0, 2)).__dlpack__()).shape == (0, 2)


def test_from_dlpack_refuses_other_devices_and_spent_capsules():
    array = np.zeros(2, np.float32)
    with pytest.raises(BufferError, match="DLPack device type 4 is not supported"):
        autojit.from_dlpack(export(array, device=(4, 0)))
    with pytest.raises(BufferError, match="DLPack device type 4 is not supported"):
        autojit.from_dlpack(Exporter(export(array, device=(4, 0)), device=(4, 0)))
    capsule = array.__dlpack__()
    autojit.from_dlpack(capsule)
    with pytest.raises(BufferError, match="can be consumed only once"):
        autojit.from_dlpack(capsule)


def test_dlpack_cpu_zero_copy_with_numpy():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = autojit.from_dlpack(array)
    array[0, 0] = 42.0
    assert x[0, 0].item() == 42.0 and x.dtype is autojit.float32
    back = np.from_dlpack(x)
    back[1, 1] = -1.0
    assert x[1, 1].item() == -1.0 and x.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        np.from_dlpack(autojit.ones(2, requires_grad=True))
    wide = np.array([1, 2 ** 64 - 1], np.uint64)  # the wider unsigned dtypes are shared too
    shared = autojit.from_dlpack(wide)
    wide[0] = 7
    assert shared.dtype is autojit.uint64 and shared.tolist() == [7, 2 ** 64 - 1]


def test_dlpack_cpu_zero_copy_with_torch():
    torch = pytest.importorskip("torch")
    x = autojit.zeros(3)
    shared = torch.from_dlpack(x)
    shared[1] = 7.0
    assert x.tolist() == [0.0, 7.0, 0.0]
    source = torch.arange(4)
    y = autojit.from_dlpack(source)
    source[0] = 9
    assert y.dtype is autojit.int64 and y.tolist() == [9, 1, 2, 3]


def test_the_byte_offset_moves_the_data_pointer():
    array = np.arange(4, dtype=np.float32)
    capsule = export(array[:2])
    address = dlpack_capsule._capsule_pointer(capsule, dlpack_capsule.NAME)
    dlpack_capsule._EXPORTS[address][0].dl_tensor.byte_offset = 8  # skip two floats
    x = autojit.from_dlpack(capsule)
    assert x.tolist() == [2.0, 3.0]
