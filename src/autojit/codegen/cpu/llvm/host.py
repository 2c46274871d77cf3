"""The LLVM host: the target machine, pass pipeline and engine of this process (`backend`), and
what a disk cache key says of the host (`cache_target`) without starting LLVM.

jit.py compiles kernels with the `Backend` made once per process (compile_threads.py makes each
compile thread's own target machines from its settings); helper_modules.py and gemm/kernel.py
reach it through jit.py, which re-exports these names. The object layout (where CPython and
NumPy put a list's items and an array's data pointer) is found here too, by looking at fresh
objects: the kernels' list entry reads arrays through it. See docs/notes/compile-latency.md.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading

import numpy as np

from .... import config
from .. import disk_cache, native_loader
from ..compile_threads import LIGHT


def _find_pointer(owner, wanted, first_word=1, last_word=8):
    """The byte offset inside the object `owner` of a machine word equal to `wanted`."""
    words = (ctypes.c_void_p * last_word).from_address(id(owner))
    for word in range(first_word, last_word):
        if words[word] == wanted:
            return word * ctypes.sizeof(ctypes.c_void_p)
    return None


# AVX-512 CPUs whose cores slow their clock for 512-bit instructions: LLVM's preference for
# 256-bit vectors stays on them.
_DOWNCLOCKING_AVX512 = ("skylake-avx512", "cascadelake", "cooperlake", "knl", "knm")


def _with_wide_vectors(cpu: str, features: str) -> str:
    """The host's features, letting the vectorizers use 512-bit vectors where the CPU has
    them at full clock (LLVM tunes Ice Lake and later for 256 bits by default). float32 math
    gets 16 lanes instead of 8: a 1024x1024 tanh kernel took 346-357 us against 420-428 us,
    the fused elementwise step's kernel 570-746 us against 781 us."""
    if "+avx512f" in features.split(",") and cpu not in _DOWNCLOCKING_AVX512:
        return features + ",-prefer-256-bit"
    return features


def object_layout():
    """(offset of a list's item vector, offset of an ndarray's data pointer), or None.

    Both are fixed by the CPython and NumPy ABIs (PyListObject.ob_item, PyArrayObject.data);
    they are found by looking, and checked on fresh objects, rather than assumed.
    """
    arrays = [np.empty(3), np.empty((2, 2), np.float32)[:, 1]]
    data_offset = _find_pointer(arrays[0], arrays[0].ctypes.data)
    if data_offset is None or any(_find_pointer(a, a.ctypes.data) != data_offset
                                  for a in arrays):
        return None
    # PyListObject is {PyObject_VAR_HEAD; PyObject **ob_item; ...}: ob_item follows ob_size.
    # Only the found word is dereferenced, so a different layout is refused, never read.
    probe = [arrays[0]] * 1001
    size_offset = _find_pointer(probe, 1001)
    if size_offset is None:
        return None
    item_offset = size_offset + ctypes.sizeof(ctypes.c_void_p)
    items = ctypes.c_void_p.from_address(id(probe) + item_offset).value
    if (ctypes.c_void_p * 1001).from_address(items)[1000] == id(arrays[0]):
        return item_offset, data_offset
    return None


_LAYOUT: list = []


def layout():
    """object_layout(), found once per process (without starting LLVM)."""
    if not _LAYOUT:
        _LAYOUT.append(object_layout())
    return _LAYOUT[0]


class Backend:
    """The target machine, the pass pipeline options and the engine, made once per process."""

    def __init__(self):
        import llvmlite.binding as llvm

        self.llvm = llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        self.cpu = llvm.get_host_cpu_name()
        detected = llvm.get_host_cpu_features().flatten()
        self.features = _with_wide_vectors(self.cpu, detected)
        self.target_machine = target.create_target_machine(
            cpu=self.cpu, features=self.features, opt=3, jit=True)
        # What cache_target remembers per processor: what LLVM detected.
        self.host = (self.target_machine.triple, self.cpu, detected,
                     ".".join(map(str, llvm.llvm_version_info)))
        self.object_layout = layout()
        self._engine = None
        self._quick_machine = None
        # MCJIT hands each module's object file to this callback as it generates it: the disk
        # cache stores it, with no second code generation.
        self.objects: dict = {}
        self.target = (self.target_machine.triple, self.cpu, self.features, self.object_layout,
                       self.host[3])

    @property
    def engine(self):
        """The MCJIT engine, made on first use: code native_loader.py refuses goes there."""
        if self._engine is None:
            holder = self.llvm.parse_assembly("")
            holder.triple = self.target_machine.triple
            self._engine = self.llvm.create_mcjit_compiler(holder, self.target_machine)
            self._engine.set_object_cache(self._object_compiled, None)
        return self._engine

    @property
    def quick_machine(self):
        """The target machine that generates code quickly (LLVM's CodeGenOpt::None: FastISel,
        the fast register allocator), for kernels with little work (quick_codegen)."""
        if self._quick_machine is None:
            target = self.llvm.Target.from_default_triple()
            self._quick_machine = target.create_target_machine(
                cpu=self.cpu, features=self.features, opt=0, jit=True)
        return self._quick_machine

    def _object_compiled(self, module, buffer) -> None:
        self.objects[id(module)] = buffer

    def parse(self, text: str):
        module = self.llvm.parse_assembly(text)
        module.triple = self.target_machine.triple
        module.data_layout = str(self.target_machine.target_data)
        return module

    def pass_builder(self, machine=None):
        """The O3 pipeline's pass builder for `machine` (default: the full target machine)."""
        llvm = self.llvm
        options = llvm.create_pipeline_tuning_options(speed_level=3)
        options.loop_vectorization = True
        options.slp_vectorization = True
        options.loop_unrolling = False
        options.loop_interleaving = True
        return llvm.create_pass_builder(machine or self.target_machine, options)

    @staticmethod
    def add_cleanup_passes(manager) -> None:
        """The passes run after the O3 pipeline. Functions the loop vectorizer calls as vector
        variants (sin and cos beyond their inline range, mathlib/trig.py) are marked
        alwaysinline: inlined now that the calls exist, they leave a test and a branch in the
        loop instead of a call per vector."""
        manager.add_always_inliner_pass()
        manager.add_simplify_cfg_pass()

    @staticmethod
    def add_light_passes(manager) -> None:
        """The light pipeline (compile_threads.LIGHT), for routines whose inner loops are
        written as the registers should hold them and whose drivers keep loop-carried values in
        stack slots (ir_text.py): those slots made registers (SROA), instructions combined, the
        control flow simplified and redundant values numbered away. The channel convolutions'
        modules compile in 0.06 s this way against 0.19 s through O3, their drivers within 8%
        of O3's (docs/notes/convolution.md)."""
        manager.add_sroa_pass()
        manager.add_instruction_combine_pass()
        manager.add_simplify_cfg_pass()
        manager.add_new_gvn_pass()

    def optimize(self, module, level=True):
        """`module` through the O3 pipeline and its cleanup, or the light pipeline where
        `level` is compile_threads.LIGHT."""
        if level == LIGHT:
            light = self.llvm.create_new_module_pass_manager()
            self.add_light_passes(light)
            light.run(module, self.pass_builder())
            return
        builder = self.pass_builder()
        builder.getModulePassManager().run(module, builder)
        cleanup = self.llvm.create_new_module_pass_manager()
        self.add_cleanup_passes(cleanup)
        cleanup.run(module, builder)


_BACKEND: Backend | None = None


_BACKEND_LOCK = threading.Lock()


def backend() -> Backend:
    global _BACKEND
    if _BACKEND is not None:
        return _BACKEND
    with _BACKEND_LOCK:  # a compile thread may ask for it first
        if _BACKEND is None:
            _BACKEND = _make_backend()
    return _BACKEND


def _make_backend() -> Backend:
    made = Backend()
    remembered = _TARGET.get("target")
    if remembered is not None and remembered != made.target:
        config.log("kernels", f"the remembered host target {remembered} is not what LLVM "
                              f"detects ({made.target}): written again")
        _TARGET["memo"] = _memo_key()
    if _TARGET.get("memo") is not None:
        disk_cache.store_record(_TARGET["memo"], dict(zip(_HOST_FIELDS, made.host)))
    return made


_HOST_FIELDS = ("triple", "cpu", "features", "llvm")
_TARGET: dict = {}


def _llvm_identity() -> tuple | None:
    """llvmlite's version and the size and time of its LLVM library (a rebuilt library is
    another LLVM), found without importing llvmlite's bindings; None where it is not found."""
    import llvmlite

    library = os.path.join(os.path.dirname(llvmlite.__file__), "binding", "libllvmlite.so")
    try:
        info = os.stat(library)
    except OSError:
        return None
    return llvmlite.__version__, library, info.st_size, info.st_mtime_ns


def _memo_key() -> str | None:
    """The disk cache key under which what LLVM detects about this host is remembered: the
    processor's identification (native_loader.host_signature) and the LLVM library."""
    if not native_loader.available() or disk_cache.directory() is None:
        return None
    identity = _llvm_identity()
    if identity is None:
        return None
    try:
        signature = native_loader.host_signature()
    except native_loader.Unsupported:
        return None
    described = repr(("host target", disk_cache.MAGIC, signature, identity))
    return hashlib.sha256(described.encode()).hexdigest()


def cache_target() -> tuple:
    """(triple, cpu, features, object layout, LLVM version): the target part of every disk
    cache key. LLVM detects the first three; a process that has not started LLVM reads them
    from a record keyed by the processor's cpuid values and the LLVM library (`_memo_key`),
    which the first process to start LLVM on such a processor writes. LLVM's host detection
    reads nothing but those values, so the record says what it would say here."""
    if _BACKEND is not None:
        return _BACKEND.target
    found = _TARGET.get("target")
    if found is None:
        memo = _memo_key()
        record = disk_cache.load_record(memo) if memo is not None else None
        if record is not None and all(isinstance(record.get(field), str)
                                      for field in _HOST_FIELDS):
            cpu = record["cpu"]
            found = (record["triple"], cpu, _with_wide_vectors(cpu, record["features"]),
                     layout(), record["llvm"])
            _TARGET["target"] = found
        else:
            _TARGET["memo"] = memo
            return backend().target
    return found


def has_avx512() -> bool:
    """Whether the host has AVX-512 (gemm/kernel.py's tiles hold 32 vector registers)."""
    return "+avx512f" in cache_target()[2].split(",")
