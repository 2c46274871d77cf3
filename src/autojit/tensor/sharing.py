"""Shared memory: Tensor.share_memory_ and Tensor.is_shared, and tensors that cross processes
through multiprocessing's queues, pipes and a "spawn" child's arguments by their memory.

A CPU tensor's data is a NumPy array in the process's private memory. share_memory_ moves it,
in place, as torch moves a storage, into a shared mapping of an anonymous file
(`os.memfd_create`, torch's "file_descriptor" strategy): processes forked afterwards
(multiprocessing's "fork" start method) read and write the same memory, which the Hogwild
pattern of `model.share_memory()` and then `mp.Process` needs.

multiprocessing pickles what it sends with its ForkingPickler, for which `reduce_tensor` is
registered (here for Tensor, in nn/parameter.py for Parameter), as torch.multiprocessing
registers its reductions: a CPU tensor is moved into shared memory (if it is not there yet) and
sent as the file's descriptor (multiprocessing.reduction.DupFd) with its dtype, shape, strides
and offset, so the receiving process maps the same memory: its writes are seen by the sender,
and `is_shared()` is True on both sides. A non-leaf tensor that requires grad is refused with
torch's error; CUDA tensors, tensors of subclasses and plain `pickle` (torch.save included)
still travel by value. Where os.memfd_create is missing (not Linux), share_memory_ uses an
anonymous mapping that only forked children see, and tensors cross by value.

A view moves with its base (the base's memory is moved and the view made again over it); other
views made before the call keep the memory they had. CUDA tensors are left as they are (a
no-op, as in torch), and is_shared() is False for them: autojit cannot pass device memory to
another process.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import pickle
import weakref
from multiprocessing import reduction

import numpy as np

from . import dtypes
from .host_memory import libc
from .tensor import Tensor

_MEMFD = hasattr(os, "memfd_create")

NON_LEAF_MESSAGE = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
    "not support crossing process boundaries.  If you just want to transfer the data, call "
    "detach() on the tensor before serializing (e.g., putting it on the queue).")


_MAP_FAILED = ctypes.c_void_p(-1).value


def _unmap(address: int, nbytes: int, fd: int) -> None:
    libc().munmap(address, nbytes)
    if fd >= 0:
        os.close(fd)


def _map(fd: int, nbytes: int, keep: bool):
    """The file's first `nbytes` mapped shared through libc (Python's mmap keeps a duplicate
    of the descriptor open as long as the mapping lives, until Python 3.13's trackfd, so that
    every tensor received from a DataLoader worker would hold one, and a program keeping a
    thousand batches would run out; torch's receivers hold none), as a ctypes buffer marked
    `shared_fd`: the descriptor, kept open (until the buffer is collected) where `keep`, to
    send the memory on (the sender's side), else closed now (-1: the receiver's side)."""
    address = libc().mmap(None, nbytes, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED,
                          fd, 0)
    if address is None or address == _MAP_FAILED:
        error = ctypes.get_errno()
        os.close(fd)
        raise OSError(error, f"mmap of {nbytes} shared bytes: {os.strerror(error)}")
    if not keep:
        os.close(fd)
        fd = -1
    buffer = (ctypes.c_char * nbytes).from_address(address)
    buffer.shared_fd = fd
    weakref.finalize(buffer, _unmap, address, nbytes, fd)
    return buffer


def _root(data: np.ndarray):
    """The object that owns data's memory: an mmap or a _map buffer for shared memory."""
    while isinstance(data, np.ndarray) and data.base is not None:
        data = data.base
    if isinstance(data, memoryview):
        data = data.obj
    return data


def is_shared(x) -> bool:
    """Whether x's data lives in shared memory (share_memory_, or a mapped file)."""
    data = x._payload
    if data is None or data.__class__ is not np.ndarray:
        return False
    root = _root(data)
    return isinstance(root, mmap.mmap) or hasattr(root, "shared_fd")


def shared_empty(nbytes: int) -> np.ndarray:
    """`nbytes` zero bytes in shared memory (a storage's `_new_shared`)."""
    size = max(int(nbytes), 1)
    if _MEMFD:
        fd = os.memfd_create("autojit-shared", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
        except BaseException:
            os.close(fd)
            raise
        buffer = _map(fd, size, keep=True)
    else:
        buffer = mmap.mmap(-1, size)
    return np.frombuffer(buffer, np.uint8, int(nbytes))


def _shared_copy(data: np.ndarray) -> np.ndarray:
    shared = shared_empty(data.nbytes).view(data.dtype).reshape(data.shape)
    shared[...] = data
    return shared


def share_memory_(x):
    """Move x's data to shared memory, in place (no-op when it is there already, or on a
    GPU); returns x."""
    data = x._concrete("Tensor.share_memory_()")
    if data.__class__ is not np.ndarray or is_shared(x):
        return x
    base = x._base
    if base is not None and base._payload.__class__ is np.ndarray and \
            base._payload.flags.c_contiguous:
        # The base's memory moves, and the view is made again over it at the same offset.
        old = base._payload
        offset = data.__array_interface__["data"][0] - old.__array_interface__["data"][0]
        if not is_shared(base):
            base._payload = _shared_copy(old)
        x._payload = np.ndarray(data.shape, data.dtype, buffer=base._payload, offset=offset,
                                strides=data.strides)
        return x
    x._payload = _shared_copy(data)
    return x


def reduce_tensor(x):
    """multiprocessing's pickling of a tensor or Parameter: by its shared memory's descriptor
    (moved there first, as torch does), or by value where it cannot be (module docstring)."""
    if x._requires_grad and x.grad_fn is not None:
        raise RuntimeError(NON_LEAF_MESSAGE)
    if _MEMFD and x._payload.__class__ is np.ndarray and x._payload.size:
        share_memory_(x)
        data = x._payload
        root = _root(data)
        fd = getattr(root, "shared_fd", -1)
        if fd >= 0:
            offset = data.__array_interface__["data"][0] - ctypes.addressof(root)
            kind = None if type(x) is Tensor else type(x)
            return (rebuild_shared, (reduction.DupFd(fd), len(root), data.dtype,
                                     x._dtype.name, data.shape, data.strides, offset,
                                     x._requires_grad, kind))
    return x.__reduce_ex__(pickle.HIGHEST_PROTOCOL)


def rebuild_shared(dup, nbytes, numpy_dtype, dtype_name, shape, strides, offset, requires_grad,
                   kind):
    """The receiving side of reduce_tensor: a tensor over the sender's shared memory."""
    data = np.ndarray(shape, numpy_dtype, buffer=_map(dup.detach(), nbytes, keep=False),
                      offset=offset,
                      strides=strides)
    tensor = Tensor._make(data, dtypes.from_name(dtype_name))
    if kind is not None:  # a Parameter
        return kind(tensor, requires_grad)
    tensor._requires_grad = requires_grad
    return tensor


def register(cls) -> None:
    """Pickle `cls` (exactly: ForkingPickler's table is by type) with reduce_tensor when
    multiprocessing sends it."""
    reduction.ForkingPickler.register(cls, reduce_tensor)


register(Tensor)
