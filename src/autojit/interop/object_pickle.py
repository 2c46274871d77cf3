"""Pickles of arbitrary objects in torch.save's format: what autojit.save writes when the object
is more than data (a whole nn.Module, a NumPy array, an object of the user's class), and what
autojit.load(weights_only=False) reads.

torch.save pickles any object with Python's pickle, its tensors written as calls of torch's
rebuild functions over storages (torch_format.py). `dumps` does the same with Python's own
pickler, whose objects reduce as they always do (a module by its class and __dict__, an array
by NumPy's reconstruct), with the tensors, dtypes, devices and sizes it meets written under
torch's names: `torch.load(f, weights_only=False)` rebuilds them as torch tensors, wherever the
classes around them can be imported. The names are written as globals without importing
torch (Python's pickler would look each one up to check it).

`FullUnpickler` reads such a pickle, and torch's, with Python's unpickler, which imports and
calls whatever the file names: only with weights_only=False, as torch.load. torch's names of
tensors, storages, dtypes and devices are read as autojit's (the rebuild functions of
torch_format.py); every other global is imported by name (a torch module object needs torch).
"""

from __future__ import annotations

import io
import pickle

from ..tensor import dtypes, torch_dispatch
from ..tensor.device import device
from ..tensor.meta import WrapperArray
from ..tensor.tensor import Size, Tensor
from .pickle_writer import Call, Global, PersistentId

__all__ = ["dumps", "FullUnpickler"]


class _Function(Global):
    """A global called on load: Python's pickler checks that a reduction's function is
    callable; this one names the function only."""

    def __call__(self, *args):
        raise TypeError(f"{self.module}.{self.name} is called when the file is read")


class _Pickler(pickle._Pickler):
    """Python's pickler (its pure-Python form, whose dispatch table can be extended), with
    autojit's tensors and torch's globals written as torch.save writes them."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol: int, tensors):
        super().__init__(file, protocol)
        self.tensors = tensors  # torch_format._TensorWriter: rebuild calls and storages

    def persistent_id(self, obj):
        return obj.value if obj.__class__ is PersistentId else None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor) and obj._payload.__class__ is WrapperArray:
            return self.wrapper_subclass(obj)
        if isinstance(obj, Tensor) and self.tensors.writes(obj):
            obj = self.tensors.tensor(obj, "the object")
        elif isinstance(obj, device):
            obj = Call(Global("torch", "device"), (str(obj),))
        elif isinstance(obj, Size):
            obj = Call(Global("torch", "Size"), (tuple(obj),))
        if obj.__class__ is Call:
            return _Function(obj.function.module, obj.function.name), obj.args
        return NotImplemented

    def wrapper_subclass(self, obj):
        """An instance of a __torch_dispatch__ wrapper subclass, in torch's words: its class,
        declared metadata and attributes (which hold its data), so that torch.load reads it."""
        _, (_, cls, args, state) = torch_dispatch._reduce_wrapper(obj)
        _, dtype, size, stride, offset, layout, place, requires_grad = args
        layout = Call(Global("torch.serialization", "_get_layout"),
                      (f"torch.{getattr(layout, 'name', 'strided')}",))
        return _Function("torch._tensor", "_rebuild_from_type_v2"), (
            Global("torch._utils", "_rebuild_wrapper_subclass"), cls,
            (cls, dtype, size, stride, offset, layout, place, requires_grad), state)

    def save_global_name(self, obj) -> None:
        """A global by its module and name (GLOBAL), looked up by the reader alone."""
        self.write(b"c" + f"{obj.module}\n{obj.name}\n".encode())

    def save_dtype(self, obj) -> None:
        self.save_global_name(Global("torch", obj.name))

    dispatch[Global] = dispatch[_Function] = save_global_name
    dispatch[dtypes.DType] = save_dtype


def dumps(obj, protocol: int, tensors) -> bytes:
    """The pickle of any picklable obj, its tensors written through `tensors` (a
    torch_format._TensorWriter, which collects their storages)."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol, tensors).dump(obj)
    return buffer.getvalue()


# The modules the house moves of issue 73 renamed (codegen/cpu, ops, nn and distributions grouped
# into subpackages): a pickle written before names its classes and functions by the old module.
MOVED_MODULES = {
    "autojit.codegen.cpu.convolution_channels": "autojit.codegen.cpu.convolution.channels",
    "autojit.codegen.cpu.convolution_channels_ir": "autojit.codegen.cpu.convolution.channels_ir",
    "autojit.codegen.cpu.convolution_ir": "autojit.codegen.cpu.convolution.ir",
    "autojit.codegen.cpu.gemm_kernel": "autojit.codegen.cpu.gemm.kernel",
    "autojit.codegen.cpu.prepacked_gemm": "autojit.codegen.cpu.gemm.prepacked",
    "autojit.codegen.cpu.blas": "autojit.codegen.cpu.gemm.blas",
    "autojit.codegen.cpu.mathlib_atan": "autojit.codegen.cpu.mathlib.atan",
    "autojit.codegen.cpu.mathlib_erfc": "autojit.codegen.cpu.mathlib.erfc",
    "autojit.codegen.cpu.mathlib_single": "autojit.codegen.cpu.mathlib.single",
    "autojit.codegen.cpu.mathlib_trig": "autojit.codegen.cpu.mathlib.trig",
    "autojit.codegen.cpu.llvm_complex": "autojit.codegen.cpu.llvm.complex",
    "autojit.codegen.cpu.llvm_expression": "autojit.codegen.cpu.llvm.expression",
    "autojit.codegen.cpu.llvm_host": "autojit.codegen.cpu.llvm.host",
    "autojit.codegen.cpu.ir_text": "autojit.codegen.cpu.llvm.ir_text",
    "autojit.ops.linalg_common": "autojit.ops.linalg.common",
    "autojit.ops.linalg_decompositions": "autojit.ops.linalg.decompositions",
    "autojit.ops.linalg_determinants": "autojit.ops.linalg.determinants",
    "autojit.ops.linalg_eig": "autojit.ops.linalg.eig",
    "autojit.ops.linalg_extras": "autojit.ops.linalg.extras",
    "autojit.ops.linalg_lapack": "autojit.ops.linalg.lapack",
    "autojit.ops.linalg_lowrank": "autojit.ops.linalg.lowrank",
    "autojit.ops.linalg_lu": "autojit.ops.linalg.lu",
    "autojit.ops.linalg_namespace": "autojit.ops.linalg.namespace",
    "autojit.ops.linalg_norms": "autojit.ops.linalg.norms",
    "autojit.ops.linalg_products": "autojit.ops.linalg.linalg_products",
    "autojit.ops.linalg_solvers": "autojit.ops.linalg.solvers",
    "autojit.ops.products": "autojit.ops.linalg.products",
    "autojit.ops.contractions": "autojit.ops.linalg.contractions",
    "autojit.ops.einsum": "autojit.ops.linalg.einsum",
    "autojit.ops.grouped_products": "autojit.ops.linalg.grouped_products",
    "autojit.ops.vector_norm": "autojit.ops.linalg.vector_norm",
    "autojit.ops.elementwise_extra": "autojit.ops.elementwise.extra",
    "autojit.ops.elementwise_math": "autojit.ops.elementwise.math_primitives",
    "autojit.ops.math_composites": "autojit.ops.elementwise.math_composites",
    "autojit.ops.native_math": "autojit.ops.elementwise.native_math",
    "autojit.ops.where_cast": "autojit.ops.elementwise.where_cast",
    "autojit.ops.bitwise": "autojit.ops.elementwise.bitwise",
    "autojit.ops.layout_composites": "autojit.ops.layout.composites",
    "autojit.ops.layout_folds": "autojit.ops.layout.folds",
    "autojit.ops.joining": "autojit.ops.layout.joining",
    "autojit.ops.splitting": "autojit.ops.layout.splitting",
    "autojit.ops.diagonal": "autojit.ops.layout.diagonal",
    "autojit.ops.triangular": "autojit.ops.layout.triangular",
    "autojit.ops.eager_views": "autojit.ops.layout.eager_views",
    "autojit.ops.dtype_views": "autojit.ops.layout.dtype_views",
    "autojit.ops.index_checks": "autojit.ops.indexing.checks",
    "autojit.ops.index_update": "autojit.ops.indexing.update",
    "autojit.ops.scatter": "autojit.ops.indexing.scatter",
    "autojit.ops.scatter_views": "autojit.ops.indexing.scatter_views",
    "autojit.ops.subscript": "autojit.ops.indexing.subscript",
    "autojit.ops.masked": "autojit.ops.indexing.masked",
    "autojit.ops.row_accumulation": "autojit.ops.indexing.row_accumulation",
    "autojit.ops.activations": "autojit.ops.nn.activations",
    "autojit.ops.batch_norm": "autojit.ops.nn.batch_norm",
    "autojit.ops.convolution": "autojit.ops.nn.convolution",
    "autojit.ops.linear": "autojit.ops.nn.linear",
    "autojit.ops.loss": "autojit.ops.nn.loss",
    "autojit.ops.nll_loss": "autojit.ops.nn.nll_loss",
    "autojit.ops.normalization": "autojit.ops.nn.normalization",
    "autojit.ops.pooling": "autojit.ops.nn.pooling",
    "autojit.ops.rnn_cells": "autojit.ops.nn.rnn_cells",
    "autojit.ops.softmax": "autojit.ops.nn.softmax",
    "autojit.ops.windows": "autojit.ops.nn.windows",
    "autojit.ops.special_functions": "autojit.ops.special.functions",
    "autojit.ops.special_numpy": "autojit.ops.special.numpy_impls",
    "autojit.ops.special_polynomials": "autojit.ops.special.polynomials",
    "autojit.ops.special_scipy": "autojit.ops.special.scipy_impls",
    "autojit.ops.number_functions": "autojit.ops.special.number_functions",
    "autojit.ops.sparse_coo": "autojit.ops.sparse.coo",
    "autojit.ops.sparse_gradients": "autojit.ops.sparse.gradients",
    "autojit.ops.sparse_namespace": "autojit.ops.sparse.namespace",
    "autojit.ops.random_gamma": "autojit.ops.random.gamma",
    "autojit.ops.fft": "autojit.ops.fft.transforms",
    "autojit.ops.spectral": "autojit.ops.fft.spectral",
    "autojit.nn.functional_activation": "autojit.nn.functional.activation",
    "autojit.nn.functional_attention": "autojit.nn.functional.attention",
    "autojit.nn.functional_common": "autojit.nn.functional.common",
    "autojit.nn.functional_conv": "autojit.nn.functional.conv",
    "autojit.nn.functional_conv_transpose": "autojit.nn.functional.conv_transpose",
    "autojit.nn.functional_ctc": "autojit.nn.functional.ctc",
    "autojit.nn.functional_distance": "autojit.nn.functional.distance",
    "autojit.nn.functional_dropout": "autojit.nn.functional.channel_dropout",
    "autojit.nn.functional_grid": "autojit.nn.functional.grid",
    "autojit.nn.functional_interpolate": "autojit.nn.functional.interpolation",
    "autojit.nn.functional_loss": "autojit.nn.functional.loss",
    "autojit.nn.functional_margin": "autojit.nn.functional.margin",
    "autojit.nn.functional_norm": "autojit.nn.functional.norm",
    "autojit.nn.functional_norm_extra": "autojit.nn.functional.norm_extra",
    "autojit.nn.functional_padding": "autojit.nn.functional.padding",
    "autojit.nn.functional_pooling": "autojit.nn.functional.pooling",
    "autojit.nn.functional_pooling_adaptive": "autojit.nn.functional.pooling_adaptive",
    "autojit.nn.functional_pooling_fractional": "autojit.nn.functional.pooling_fractional",
    "autojit.nn.functional_resampling": "autojit.nn.functional.resampling",
    "autojit.nn.pooling_adaptive": "autojit.nn.pooling.adaptive",
    "autojit.nn.pooling_fractional": "autojit.nn.pooling.fractional",
    "autojit.nn.loss_extra": "autojit.nn.loss.extra",
    "autojit.nn.activation_extra": "autojit.nn.activation.extra",
    # distributions/ grouped into subpackages: the modules at torch's paths are entered there
    # still (distributions/__init__.py), these two of autojit's own are not.
    "autojit.distributions.counted_trials": "autojit.distributions.discrete.counted_trials",
    "autojit.distributions.folded": "autojit.distributions.derived.folded",
}


class FullUnpickler(pickle.Unpickler):
    """Python's unpickler (it runs the code the file names), with torch's names of tensors,
    storages, dtypes and devices read as autojit's: `allowed` maps those names (the weights-only
    reader's allow-list), `persistent_load` reads storages."""

    def __init__(self, file, allowed: dict, persistent_load, **options):
        super().__init__(file, **options)
        self.allowed = allowed
        self.storage_loader = persistent_load

    def persistent_load(self, pid):
        return self.storage_loader(pid)

    def find_class(self, module: str, name: str):
        found = self.allowed.get(f"{module}.{name}")
        if found is not None and module.split(".")[0] == "torch":
            return found
        return super().find_class(MOVED_MODULES.get(module, module), name)
