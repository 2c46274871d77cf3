"""Tensor: concrete data (a NumPy array) or a symbolic IR value, plus autograd metadata.

Eager tensors hold `_payload`; while a function is traced (ir/trace.py) tensors hold `_value`, an
ir.Value with shape and dtype only. Every op on a Tensor goes through ops.registry.bind, which
runs the op's NumPy impl (eager) or appends an IR node (traced) and records the autograd Node.
The arithmetic and op methods are attached in ops/tensor_methods.py; this file keeps the state,
the properties and the autograd entry points.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes
from .device import CPU, cuda_device
from .meta import META, MetaArray, WrapperArray, read_error
from .size import Size
from .state import SPECIAL, state

# autograd/vjp_chain.py sets this while it records a VJP: a tensor's values read in Python
# (item(), bool(), numpy(), ...) would be constants of the recorded chain, so it is not kept.
VALUE_READ = None


class VersionCounter:
    """Counts in-place writes; shared by a tensor, its views and its detached aliases."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class Tensor:
    """A multi-dimensional array that records the operations applied to it."""

    # The fields every op result needs are slots; the rarely used ones are class-level defaults
    # that an instance overrides in its __dict__ only when set (hooks, views, inference). A
    # dict, so that the public slot has a docstring (inspect.getdoc and help() read it there).
    __slots__ = {"_payload": None, "_dtype": None, "_requires_grad": None, "_grad": None,
                 "grad_fn": "The autograd Node that made this tensor (None for leaves); its "
                            "next_functions lead to the inputs' nodes.",
                 "_output_nr": None, "_counter": None, "__weakref__": None,
                 "__dict__": None}
    _value = None  # the ir.Value of a symbolic tensor while tracing
    _base = None  # the tensor this one is a view of
    _view_source = None  # (input, op, attrs) that made this view, for refresh_view
    _view_version = 0  # the version counter's value when grad_fn was last valid for the view
    # How a view was made when torch forbids writing it in place with autograd on (torch's
    # CreationMeta): None (allowed), "no_grad", "inference", "multi_output" (unbind, split)
    # or "custom_function" (ops/view_creation.py)
    _creation_meta = None
    _refresh_view = None  # autograd.graph.refresh_view (a layer above), for requires_grad
    # autograd.transform_checks.refuse_in_transform: requires_grad_ inside a torch.func transform
    _refuse_in_transform = None
    _traced_view = None  # while tracing: how a symbolic view was made (ir/trace.py)
    _grad_accumulator = None  # weakref to the leaf's AccumulateGrad node
    # The tensor whose memory this one lies in without being its view (set_ put it there, or it
    # is a detached alias of a view): its storage, for ops/storage.py
    _storage_base = None
    _retains_grad = False
    _post_accumulate_hooks = None
    _is_inference = False
    # torch's conjugate bit: set on the result of conj() (ops/complex_numbers.py), which holds
    # the conjugated values, and kept by the views of such a tensor.
    _is_conj = False
    # torch's negative bit: set on the result of _neg_view() and the imaginary part of a
    # conjugated tensor (ops/complex_numbers.py), which hold the negated values, and kept by
    # their views.
    _is_neg = False
    _tangents = None  # forward AD: {dual level id: tangent} (autograd/forward_ad.py)
    # The torch.func grad level that made this tensor, and the levels it is an input of
    # (autograd/transform_levels.py): only their tensors may be written in place there
    _func_level = None
    _func_roots = ()
    # autograd.transform_levels.wrapped_repr: how a tensor prints inside a torch.func transform
    _transform_repr = None
    _batched = False  # a vmap BatchedTensor (ops/batching.py)
    # Installed at import by the layers above this one, which the tensor layer does not import:
    # legacy_new(dtype, args, kwargs) -> Tensor by ops/legacy_constructors.py (an alias needs an
    # op), and _backward (Tensor.backward's work) by autograd/api.py.
    _legacy_new = None
    _backward = None
    # torch_function.arm, installed by torch_function.py (imported with autojit.tensor): called
    # where an instance of a subclass is made, it may switch the __torch_function__ protocol on.
    _arm_subclass = None

    # Keep NumPy from treating Tensor as a sequence in mixed expressions (ndarray + Tensor).
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        """torch's legacy constructor: Tensor(*sizes), Tensor(data) or Tensor(other), in the
        default dtype (ops/legacy_constructors.py); autojit.tensor is the factory for data."""
        made = Tensor._legacy_new(None, args, kwargs)
        if cls is Tensor:
            return made
        # A subclass: its own object over the same storage (no autograd history).
        Tensor._arm_subclass(cls)
        self = object.__new__(cls)
        self._init(made._payload, made._dtype, version_counter=made._version_counter)
        return self

    def __init__(self, *args, **kwargs):
        pass  # __new__ built the tensor

    def _init(self, data, dtype, value=None, version_counter=None):
        self._payload = data
        if value is not None:
            self._value = value
        self._dtype = dtype
        self._requires_grad = False
        self._grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._counter = version_counter
        if state.inference:
            self._is_inference = True
        if state.grad_levels:  # made by a grad transform's function (as in _make)
            self._func_level = state.grad_levels[-1]

    @classmethod
    def _make(cls, data: np.ndarray, dtype: dtypes.DType, version_counter=None) -> Tensor:
        """Wrap an ndarray without copying (the fast path every op result takes)."""
        self = _new(cls)
        self._payload = data
        self._dtype = dtype
        self._requires_grad = False
        self._grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._counter = version_counter
        if state.dispatch == SPECIAL:
            if state.inference:
                self._is_inference = True
            if state.tracer is not None:  # a tensor the traced function made (compiler/api.py)
                state.tracer.made.add(id(self))
            if state.grad_levels:  # made by a grad transform's function: writable there
                self._func_level = state.grad_levels[-1]
        return self

    @classmethod
    def _symbolic(cls, value) -> Tensor:
        self = object.__new__(cls)
        self._init(None, value.dtype, value)
        return self

    # ---- shape and type -------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        """The extents of the dims, an `autojit.Size` (a tuple)."""
        data = self._payload
        return Size(data.shape if data is not None else self._value.shape)

    def size(self, dim: int | None = None):
        """The shape, or with `dim` the extent of that dim."""
        shape = self.shape
        if dim is None:
            return shape
        return shape[normalize_dim(dim, len(shape))]

    @property
    def ndim(self) -> int:
        """The number of dims."""
        data = self._payload  # (no Size made: every op's checks ask)
        return len(data.shape if data is not None else self._value.shape)

    def dim(self) -> int:
        """The number of dims, as `ndim`."""
        data = self._payload
        return len(data.shape if data is not None else self._value.shape)

    def numel(self) -> int:
        """The number of elements."""
        return self.shape.numel()

    nelement = numel

    @property
    def dtype(self) -> dtypes.DType:
        """The element type (`autojit.float32`, `autojit.int64`, ...)."""
        return self._dtype

    @property
    def device(self):
        """The device the data lives on: `cpu`, or `cuda:N` for a tensor on a GPU."""
        # The device follows from the data: an ndarray on the CPU, a CudaArray on a GPU
        # (autojit/cuda/array.py); a symbolic tensor's is eager's (ir/trace_devices.py).
        data = self._payload
        if data is None and self._traced_on_device():
            return state.tracer.placement.device
        if data is None or data.__class__ is np.ndarray:
            return CPU
        if data.__class__ is MetaArray:
            return META
        if data.__class__ is WrapperArray:
            return data.device
        return cuda_device(data.device_index)

    def _traced_on_device(self) -> bool:
        """Whether this symbolic tensor is, in eager, on the GPU a traced call runs on."""
        tracer = state.tracer
        return tracer is not None and tracer.placement is not None and \
            self._value is not None and not tracer.placement.is_host(self)

    @property
    def is_cuda(self) -> bool:
        """Whether the data lives on a GPU."""
        data = self._payload
        if data is None:
            return self._traced_on_device()
        if data.__class__ is WrapperArray:
            return data.device.type == "cuda"
        return data.__class__ is not np.ndarray and data.__class__ is not MetaArray

    @property
    def is_cpu(self) -> bool:
        """Whether the data lives in host memory (a symbolic tensor: whether eager's does)."""
        data = self._payload
        if data is None:
            return not self._traced_on_device()
        if data.__class__ is WrapperArray:
            return data.device.type == "cpu"
        return data.__class__ is np.ndarray

    @property
    def is_meta(self) -> bool:
        """Whether the tensor is on the meta device: a shape and a dtype, no data
        (tensor/meta.py)."""
        return self._payload.__class__ is MetaArray

    def get_device(self) -> int:
        """The index of the GPU holding the data, or -1 on the CPU."""
        return self._payload.device_index if self.is_cuda else -1

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating type (float16, float32, float64)."""
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the dtype is complex (complex64 or complex128)."""
        return self._dtype.category == dtypes.COMPLEX

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values (all but bool and uint8)."""
        return self._dtype.is_signed

    def element_size(self) -> int:
        """The bytes of one element in torch's layout (two for bfloat16, stored as float32)."""
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        """The bytes of one element, as element_size()."""
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of the elements, in torch's layout: numel() * element_size()."""
        return self.numel() * self._dtype.itemsize

    @property
    def is_symbolic(self) -> bool:
        """True while tracing: the tensor has a shape and dtype but no data."""
        return self._payload is None

    # ---- autograd metadata ------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor; settable on leaves."""
        if self._view_source is not None and self._counter is not None and \
                self._view_version != self._counter.value and Tensor._refresh_view is not None:
            # a view whose base was written since: it requires grad if the written value
            # does (autograd/graph.py's refresh_view, set here by the autograd layer)
            Tensor._refresh_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        # torch's errors for the attribute differ from requires_grad_()'s: a non-bool is a
        # RuntimeError, and `= True` on a non-leaf raises instead of doing nothing.
        if flag.__class__ is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None and flag:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if flag and self._dtype.category < dtypes.FLOATING:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(flag)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")  # torch's message for the deletion

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` on this leaf (floating dtypes only) and return it."""
        if requires_grad.__class__ is not bool:
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
        if state.func_transforms and Tensor._refuse_in_transform is not None:
            Tensor._refuse_in_transform("requires_grad_")
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self._dtype.category < dtypes.FLOATING:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._is_inference and not state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """Whether no op made this tensor (its `grad_fn` is None); leaves accumulate `.grad`."""
        return self.grad_fn is None

    @property
    def grad(self):
        """The gradient accumulated by backward (None until then); settable and deletable."""
        if state.tracer is not None:
            state.tracer.note_grad_access(self)  # a compiled function's guards check .grad
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.dtype is not self._dtype:
                raise RuntimeError(f"assigned grad has data of a different type: expected "
                                   f"{self._dtype}, got {value.dtype}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: expected "
                                   f"{self.shape}, got {value.shape}")
        if state.tracer is not None:
            state.tracer.note_grad_access(self, assigning=True)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        if state.tracer is not None:
            state.tracer.note_grad_access(self, assigning=True)
        self._grad = None

    @property
    def _version_counter(self) -> VersionCounter:
        """The counter of in-place writes this tensor shares with its views and detached
        aliases; made when first asked for, since most op results never need one."""
        counter = self._counter
        if counter is None:
            counter = self._counter = _new(VersionCounter)
            counter.value = 0
        return counter

    @_version_counter.setter
    def _version_counter(self, counter: VersionCounter) -> None:
        self._counter = counter

    @property
    def _version(self) -> int:
        counter = self._counter
        return 0 if counter is None else counter.value

    def _bump_version(self) -> None:
        self._version_counter.value += 1

    @property
    def retains_grad(self) -> bool:
        """Whether `retain_grad()` was called on this non-leaf tensor."""
        return self._retains_grad

    def is_inference(self) -> bool:
        """Whether the tensor was made under `inference_mode` (it never records autograd)."""
        return self._is_inference

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's .grad (torch.Tensor.backward).

        A scalar needs no `gradient`; any other tensor needs one of its own shape (the vector
        of the vector-Jacobian product). Gradients add up across calls until `.grad` is reset.

        >>> import autojit
        >>> x = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> (x ** 2).sum().backward()
        >>> x.grad
        tensor([2., 4., 6.])
        >>> x.grad = None
        >>> (x * 2).backward(autojit.tensor([1.0, 0.0, 1.0]))
        >>> x.grad
        tensor([2., 0., 2.])
        """
        Tensor._backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- data access ----------------------------------------------------------------------

    def _concrete(self, what: str) -> np.ndarray:
        """The data, or a graph break when the tensor is symbolic (tracing)."""
        if VALUE_READ is not None:
            VALUE_READ()
        if self._payload is None:
            from .graph_break import graph_break

            graph_break(what)
        tracer = state.tracer
        if tracer is not None and (id(self) not in tracer.made or tracer.was_written(self)):
            # A real tensor's values read in Python while tracing decide the trace: the
            # guards compare them on every call (compiler/guard_stage.py); one the function made
            # and wrote in place holds old values (a graph break).
            tracer.note_data_read(self, what)
        return self._payload

    def _host(self, what: str) -> np.ndarray:
        """The data as an ndarray: a CUDA tensor's is copied to the host (a synchronization)."""
        data = self._concrete(what)
        if data.__class__ is np.ndarray:
            return data
        if data.__class__ is MetaArray:
            raise read_error(what)
        return data.to_host()

    # numpy(), item(), tolist(), np.asarray(x), bool(x), float(x), int(x) and x as an index
    # are attached in tensor/values.py.

    def __len__(self) -> int:
        """`len(x)`: the extent of the first dim."""
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        """`for row in x`: the slices along the first dim."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = object.__hash__  # identity, as a C slot (ops/tensor_methods.py keeps it so)

    def __repr__(self) -> str:
        """`repr(x)` and `str(x)`: torch's printed form, `tensor([1., 2.])`."""
        tracer = state.tracer
        if tracer is not None:  # while tracing: printed with each call's values
            token = tracer.format_tensor(self, None)
            if token is not None:
                return token
        if state.func_transforms and Tensor._transform_repr is not None:
            text = Tensor._transform_repr(self)  # as torch prints a transform's wrappers
            if text is not None:
                return text
        from .printing import tensor_repr

        return tensor_repr(self)

    # No __str__: str(x) is object's, which calls type(x).__repr__, so that a subclass's own
    # __repr__ prints it (torch_geometric's EdgeIndex), as in torch.

    def __format__(self, spec: str) -> str:
        """`f"{x:.3f}"`: a 0-d tensor formats as its number (not a subclass's, as in torch)."""
        if self.ndim == 0 and self.__class__ is Tensor:
            tracer = state.tracer
            if tracer is not None:
                token = tracer.format_tensor(self, spec)
                if token is not None:
                    return token
            if self._payload is not None:
                return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        """`pickle`: the data (copied to the host), dtype and `requires_grad`."""
        return (_rebuild, (self._host("pickle"), self._dtype.name, self._requires_grad))

    def __deepcopy__(self, memo):
        """`copy.deepcopy(x)` of a leaf: new storage, the same `requires_grad` and a copied grad."""
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        copied = Tensor._make(self._concrete("deepcopy").copy(), self._dtype)
        copied._requires_grad = self._requires_grad
        if self._grad is not None:
            copied._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = copied
        return copied

    # ---- aliasing ---------------------------------------------------------------------------

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history and with its own version counter."""
        alias = Tensor._make(self._payload, self._dtype)
        alias._value = self._value
        if self._is_conj:
            alias._is_conj = True
        if self._is_neg:
            alias._is_neg = True
        self._share_storage(alias)
        if self._payload is None and state.tracer is not None:
            state.tracer.alias(self, alias)
        return alias

    @data.setter
    def data(self, new: Tensor) -> None:
        """Swap in another tensor's storage, of any shape and dtype, as torch does
        (`p.data = p.data.half()`, a layer resized in place): the tensor keeps its identity,
        autograd flags and .grad."""
        if not isinstance(new, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
        if new.layout != self.layout:
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and "
                               " `tensor` have incompatible tensor type.")
        if self._requires_grad and new._dtype.category < dtypes.FLOATING:
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        if state.tracer is not None and state.tracer.assign_data(self, new):
            return
        self._payload = new._payload
        self._dtype = new._dtype
        self._value = new._value
        if self._is_conj is not new._is_conj:  # the conjugate and negative bits come along
            self._is_conj = new._is_conj
        if self._is_neg is not new._is_neg:
            self._is_neg = new._is_neg

    # torch refuses to delete its tensors' autograd and storage attributes. Each refusal is
    # a deleter of its own: a __delattr__ would make every attribute write on every tensor (a
    # few per op) take CPython's slow path through object.__setattr__, 7 to 16% of the
    # instructions of an eager step of small ops (docs/performance.md).
    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    @property
    def _grad_fn(self):
        """grad_fn, under torch's other name for it."""
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")

    @property
    def _backward_hooks(self):
        """The tensor's hooks (autograd/hooks.py), kept in its __dict__ when it has any."""
        return self.__dict__.get("_backward_hooks")

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        self.__dict__["_backward_hooks"] = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its `_base`)."""
        return self._base is not None

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, with no history."""
        alias = Tensor._make(self._payload, self._dtype, self._version_counter)
        alias._value = self._value
        if self._is_conj:
            alias._is_conj = True
        if self._is_neg:
            alias._is_neg = True
        self._share_storage(alias)
        if self._payload is None and state.tracer is not None:
            state.tracer.alias(self, alias)
        return alias

    def _share_storage(self, alias: Tensor) -> None:
        """An alias of a view (or of a tensor set_ on other memory) lies in the same storage
        as torch's does: its storage, storage offset and as_strided are the base's
        (ops/storage.py's storage_owner), though it is no view. It holds a tensor over the
        base's memory, not the base, whose history it must not keep alive."""
        base = self._base
        if base is not None:
            if base._payload is not None:
                alias._storage_base = Tensor._make(base._payload, base._dtype)
        elif self._storage_base is not None:
            alias._storage_base = self._storage_base

    def detach_(self) -> Tensor:
        """Make this tensor a leaf without history, in place, and return it (not a view,
        whose history is its base's, as torch refuses)."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        if self._tangents is not None:  # forward AD's tangents go too, as torch's detach_
            self._tangents = None
        return self

    @property
    def volatile(self) -> bool:
        """Removed, as in torch: always False, with torch's warning."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value) -> None:
        warnings.warn("volatile was removed and now has no effect. Use `with "
                      "autojit.no_grad():` instead.", UserWarning, stacklevel=2)

    def reinforce(self, reward):
        """Removed, as in torch: raises, saying what replaces it."""
        raise RuntimeError(
            "reinforce() was removed.\nDifferentiate a score-function loss instead: with "
            "`log_prob` the log-probability of the sampled action,\n"
            "loss = -log_prob * reward\nloss.backward()")


_new = object.__new__


def plain_tensor(data: np.ndarray, dtype: dtypes.DType) -> Tensor:
    """`Tensor._make(data, dtype)` for a caller that has read `state.dispatch` and found it not
    SPECIAL: no tracer to tell and no inference mode to mark (ops/registry.py: bind)."""
    self = _new(Tensor)
    self._payload = data
    self._dtype = dtype
    self._requires_grad = False
    self._grad = None
    self.grad_fn = None
    self._output_nr = 0
    self._counter = None
    return self


def _rebuild(data, dtype_name, requires_grad):
    result = Tensor._make(np.array(data), dtypes.from_name(dtype_name))
    result._requires_grad = requires_grad
    return result


def normalize_dim(dim: int, ndim: int, wrap_scalar: bool = True) -> int:
    """Wrap a possibly negative dim, with torch's error when it is out of range. A 0-d tensor
    has dim 0 and -1 unless `wrap_scalar` is False: the ops that take a dim of a real axis
    (unbind, the FFTs) refuse any, as torch's maybe_wrap_dim(wrap_scalar=false) does."""
    if ndim == 0 and not wrap_scalar:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    low, high = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], "
                         f"but got {dim})")
    return dim % ndim if ndim > 0 else 0
