"""Native worker threads: the parts of one kernel or product on all cores, handed off by spinning.

A split kernel (parallel.py), a split product and a pair of products (gemm/blas.py,
codegen/schedule/matmul_steps.py) run one part per core. Handing parts to a Python thread pool costs
a thread wake-up each way: 80-90 us for an empty round trip on the 2-core VM these benchmarks run
on, as much as a 256x512 kernel takes. Here each worker is a Python thread that calls, once, a
native loop (compiled from the LLVM IR below into the engine of jit.py; ctypes releases the GIL for
the call) and stays in it: it spins on the job word in shared memory (a generation, a part count and
the next unclaimed part), claims parts of each new job by compare-and-swap, runs them and counts
them finished. After about half a millisecond without work it sleeps in the futex on the generation,
and the next job wakes it. The calling thread publishes a job, runs its part 0 (so consecutive split
steps keep their rows on the same cores), claims further parts too, and then spins until every part
is finished: a hand-off of about a microsecond while the workers spin. A worker that does not come
(asleep, or kept off its core by another process) leaves its part to the caller, so a loaded machine
costs a split job no more than one core's time.

A job is a native function `i32 part(ptr argument, i64 index)`; its nonzero results are or-ed
into the job's status. Two such functions are built here: `kernel_part` calls a compiled kernel
on its part's row of a pointer table, and `gemm_part` calls CBLAS ?gemm (64-bit integers) from
its part's record (GEMM_RECORD): the function, 0 for float32 or 1 for float64 (2 for float32
through the library, whose long inner extents, over FLOAT32_LONG_INNER, it cuts into blocks of
FLOAT32_INNER_BLOCK),
then the call's arguments in order, the two scalars as float64 bits (blas.gemm_records).
Linux on x86-64 only (the futex and `pause`); elsewhere `shared()` is None and callers keep
the Python pool of gemm/blas.py.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import platform
import struct
import sys
import threading

import numpy as np

from ... import config

# Cycles of the time-stamp counter a worker spins without work before it sleeps: about half a
# millisecond at 2-3 GHz, longer than the serial stretches between the parallel steps of a
# training step, so a step's parts find their workers awake.
SPIN_CYCLES = 1 << 20
_SYSCALL_FUTEX = 202  # x86-64 Linux
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129
# Byte offsets of the words of the shared state (`%NAME_slot` in the IR), each group on its
# own cache line: the job word (bits 0-15 the next unclaimed part, 16-31 the job's part count,
# 32-63 its generation, the futex word, at byte 4), the count of parts finished, the job's
# function and argument, the sleeper count, the stop flag, the job's or-ed status, and the
# spin limit in counter cycles.
SLOTS = {"job": 0, "finished": 64, "function": 128, "argument": 136, "sleeping": 192,
         "stop": 256, "status": 320, "spin": 384}
MAX_PARTS = 0xFFFF
# A gemm record's words in order (the CBLAS ?gemm arguments after the function and its kind, 0
# for float32 and 1 for float64): each word's name in the IR and the type it is read as (i32
# arguments are stored widened to a word; the scalars as float64 bits).
GEMM_RECORD = (("function", "ptr"), ("kind", "i64"), ("order", "i32"), ("transpose_a", "i32"),
               ("transpose_b", "i32"), ("rows", "i64"), ("columns", "i64"), ("inner", "i64"),
               ("alpha", "double"), ("a", "ptr"), ("lead_a", "i64"), ("b", "ptr"),
               ("lead_b", "i64"), ("beta", "double"), ("c", "ptr"), ("lead_c", "i64"))
GEMM_RECORD_WORDS = len(GEMM_RECORD)
# A float32 product through the library (record kind 2) sums at most this many k's in one
# float32 chain: gemm_part runs a longer inner extent as one call per block into a scratch
# matrix of fresh sums, accumulated in float64 and rounded once into c
# (docs/notes/accurate-numerics.md).
FLOAT32_INNER_BLOCK = 64
# ... where the inner extent is longer than this: a product of at most this many k's is one
# library call, summed as an eager np.matmul of it sums (the same library), as the generated
# gemm sums it in float32 and as torch's CPU sgemm sums it. The blocks cost the products of a
# transformer's layers (k = 256 or 1024) 1.8x the time of one call on an AVX2 host, where
# every product goes through the library; the long k's the product pass makes by folding a
# batch into k (4096 in a small ResNet's weight gradient) are still blocked.
FLOAT32_LONG_INNER = 1024
# ... in at most this many blocks: a longer extent gets blocks of a multiple of
# FLOAT32_INNER_BLOCK k's (`inner_block`). GPT-2's output layer's input gradient (50,257
# vocabulary entries in k) took 785 library calls of 64 k's, each packing its blocks again:
# 0.84 s on both cores of an AVX2 host, where one call takes 0.45 s. A chain of 832 k's
# summed in float64 over 61 blocks is still far nearer exact than eager's one library call
# over all 50,257; the products the product pass folds a batch into (4096 k's in a small
# ResNet's weight gradient) keep their blocks of 64 up to 64 blocks' worth.
FLOAT32_MAX_BLOCKS = 64


def inner_block(inner: int) -> int:
    """The k's of each block of a blocked float32 library product of `inner` k's (the last
    block takes what is left)."""
    needed = -(-inner // FLOAT32_MAX_BLOCKS)
    return max(FLOAT32_INNER_BLOCK,
               -(-needed // FLOAT32_INNER_BLOCK) * FLOAT32_INNER_BLOCK)
_CBLAS_TRANSPOSE = 112

_IR = """
declare i64 @syscall(i64, ...)
declare i32 @sched_yield()
declare void @llvm.x86.sse2.pause()
declare i64 @llvm.readcyclecounter()
declare ptr @malloc(i64)
declare void @free(ptr)

define void @{prefix}_loop(ptr %state) {{
entry:
{slots}
  %spin_limit = load i64, ptr %spin_slot
  %generation_slot = getelementptr i8, ptr %state, i64 4
  br label %wait

wait:
  %start = call i64 @llvm.readcyclecounter()
  br label %spin

spin:
  %stop = load atomic i32, ptr %stop_slot acquire, align 4
  %stopping = icmp ne i32 %stop, 0
  br i1 %stopping, label %exit, label %check

check:
  %part = call i64 @{prefix}_claim(ptr %job_slot)
  %claimed = icmp sge i64 %part, 0
  br i1 %claimed, label %run, label %relax

run:
  %function = load ptr, ptr %function_slot
  %argument = load ptr, ptr %argument_slot
  %result = call i32 %function(ptr %argument, i64 %part)
  %failed = icmp ne i32 %result, 0
  br i1 %failed, label %record, label %finished

record:
  %ignored_or = atomicrmw or ptr %status_slot, i32 %result seq_cst
  br label %finished

finished:
  %ignored_done = atomicrmw add ptr %finished_slot, i64 1 release
  br label %wait

relax:
  call void @llvm.x86.sse2.pause()
  %now = call i64 @llvm.readcyclecounter()
  %elapsed = sub i64 %now, %start
  %spinning = icmp ult i64 %elapsed, %spin_limit
  br i1 %spinning, label %spin, label %sleep

sleep:
  ; Announce the sleep, then look again: the caller publishes a job before it reads the
  ; sleeper count (both sequentially consistent), so one of the two sees the other.
  %ignored_add = atomicrmw add ptr %sleeping_slot, i32 1 seq_cst
  %again = load atomic i64, ptr %job_slot seq_cst, align 8
  %stop_again = load atomic i32, ptr %stop_slot seq_cst, align 4
  %work = call i1 @{prefix}_unclaimed(i64 %again)
  %running = icmp eq i32 %stop_again, 0
  %idle = xor i1 %work, true
  %quiet = and i1 %idle, %running
  br i1 %quiet, label %futex, label %awake

futex:
  %generation = lshr i64 %again, 32
  %ignored_wait = call i64 (i64, ...) @syscall(i64 {futex}, ptr %generation_slot, i64 {wait},
                                                i64 %generation, ptr null)
  br label %awake

awake:
  %ignored_sub = atomicrmw sub ptr %sleeping_slot, i32 1 seq_cst
  br label %wait

exit:
  ret void
}}

define internal i1 @{prefix}_unclaimed(i64 %job) alwaysinline {{
  %next = and i64 %job, 65535
  %shifted = lshr i64 %job, 16
  %parts = and i64 %shifted, 65535
  %open = icmp ult i64 %next, %parts
  ret i1 %open
}}

define internal i64 @{prefix}_claim(ptr %job_slot) alwaysinline {{
entry:
  br label %look

look:
  %job = load atomic i64, ptr %job_slot acquire, align 8
  %open = call i1 @{prefix}_unclaimed(i64 %job)
  br i1 %open, label %take, label %none

take:
  ; The claim names the generation: it fails if the job was replaced meanwhile, and while a
  ; claimed part runs its job cannot finish, so the function and argument stay its own.
  %next_job = add i64 %job, 1
  %exchange = cmpxchg ptr %job_slot, i64 %job, i64 %next_job acq_rel acquire
  %claimed = extractvalue {{ i64, i1 }} %exchange, 1
  br i1 %claimed, label %got, label %look

got:
  %part = and i64 %job, 65535
  ret i64 %part

none:
  ret i64 -1
}}

define i32 @{prefix}_run(ptr %state, ptr %function, ptr %argument, i64 %parts) {{
entry:
{slots}
  %spin_limit = load i64, ptr %spin_slot
  %generation_slot = getelementptr i8, ptr %state, i64 4
  store ptr %function, ptr %function_slot
  store ptr %argument, ptr %argument_slot
  store atomic i64 0, ptr %finished_slot monotonic, align 8
  store atomic i32 0, ptr %status_slot monotonic, align 4
  %old = load atomic i64, ptr %job_slot monotonic, align 8
  %old_generation = lshr i64 %old, 32
  %generation = add i64 %old_generation, 1
  %high = shl i64 %generation, 32
  %count = shl i64 %parts, 16
  %any = icmp ne i64 %parts, 0
  ; Part 0 is the caller's, published as already claimed: the same rows of consecutive
  ; split steps then run on the same core, which finds them in its own cache.
  %reserved = zext i1 %any to i64
  %with_count = or i64 %high, %count
  %job = or i64 %with_count, %reserved
  store atomic i64 %job, ptr %job_slot seq_cst, align 8
  %sleepers = load atomic i32, ptr %sleeping_slot seq_cst, align 4
  %asleep = icmp ne i32 %sleepers, 0
  ; A one-part job is the caller's: a worker woken for it would spin on a core it may need.
  %shared_job = icmp ne i64 %parts, 1
  %wanted = and i1 %asleep, %shared_job
  br i1 %wanted, label %wake, label %first

wake:
  %ignored_wake = call i64 (i64, ...) @syscall(i64 {futex}, ptr %generation_slot, i64 {wake},
                                                i64 2147483647)
  br label %first

first:
  br i1 %any, label %own_part, label %claim

own_part:
  %first_result = call i32 %function(ptr %argument, i64 0)
  %ignored_first = atomicrmw add ptr %finished_slot, i64 1 release
  br label %claim

claim:
  ; The caller takes parts as the workers do: a worker that is slow to wake, or kept off
  ; its core by other load, leaves its part to the caller instead of holding up the job.
  %own = phi i32 [ 0, %first ], [ %first_result, %own_part ], [ %own_after, %run ]
  %part = call i64 @{prefix}_claim(ptr %job_slot)
  %claimed = icmp sge i64 %part, 0
  br i1 %claimed, label %run, label %waiting

run:
  %result = call i32 %function(ptr %argument, i64 %part)
  %own_after = or i32 %own, %result
  %ignored_done = atomicrmw add ptr %finished_slot, i64 1 release
  br label %claim

waiting:
  %start = call i64 @llvm.readcyclecounter()
  br label %poll

poll:
  %done = load atomic i64, ptr %finished_slot acquire, align 8
  %complete = icmp sge i64 %done, %parts
  br i1 %complete, label %exit, label %relax

relax:
  call void @llvm.x86.sse2.pause()
  %now = call i64 @llvm.readcyclecounter()
  %elapsed = sub i64 %now, %start
  ; A worker taken off its core in the middle of a part: stop burning this one meanwhile.
  %patient = icmp ult i64 %elapsed, %spin_limit
  br i1 %patient, label %poll, label %yield

yield:
  %ignored_yield = call i32 @sched_yield()
  br label %poll

exit:
  %others = load atomic i32, ptr %status_slot acquire, align 4
  %all = or i32 %own, %others
  ret i32 %all
}}

define i32 @{prefix}_nothing(ptr %argument, i64 %part) {{
  ret i32 0
}}

define i32 @{prefix}_kernel_part(ptr %argument, i64 %part) {{
entry:
  %function = load ptr, ptr %argument
  %table_slot = getelementptr i8, ptr %argument, i64 8
  %table = load ptr, ptr %table_slot
  %arity_slot = getelementptr i8, ptr %argument, i64 16
  %arity = load i64, ptr %arity_slot
  %offset = mul i64 %part, %arity
  %pointers = getelementptr ptr, ptr %table, i64 %offset
  %result = call i32 %function(ptr %pointers)
  ret i32 %result
}}

define i32 @{prefix}_gemm_part(ptr %argument, i64 %part) {{
entry:
  %record = getelementptr [{record} x i64], ptr %argument, i64 %part
{record_loads}
  %double = icmp eq i64 %kind, 1
  br i1 %double, label %float64, label %float32

float32:
  %alpha32 = fptrunc double %alpha to float
  %beta32 = fptrunc double %beta to float
  %blocked = icmp eq i64 %kind, 2
  %long = icmp sgt i64 %inner, {long_inner}
  %split = and i1 %blocked, %long
  br i1 %split, label %blocks, label %whole

whole:
  call void %function(i32 %order, i32 %transpose_a, i32 %transpose_b, i64 %rows, i64 %columns,
                i64 %inner, float %alpha32, ptr %a, i64 %lead_a, ptr %b, i64 %lead_b,
                float %beta32, ptr %c, i64 %lead_c)
  ret i32 0

blocks:
  ; Each block of k's is one call into a scratch matrix of fresh sums (row-major, lead
  ; columns), added into a float64 total; c gets the total (plus beta * c) rounded once.
  ; Row-major: a's k-th column is 1 element on (lead_a where a is transposed), b's k-th row
  ; lead_b elements on (1 where b is transposed).
  %a_transposed = icmp eq i32 %transpose_a, {transpose}
  %a_step = select i1 %a_transposed, i64 %lead_a, i64 1
  %b_transposed = icmp eq i32 %transpose_b, {transpose}
  %b_step = select i1 %b_transposed, i64 1, i64 %lead_b
  %cells = mul i64 %rows, %columns
  %scratch_bytes = mul i64 %cells, 4
  %scratch = call ptr @malloc(i64 %scratch_bytes)
  %total_bytes = mul i64 %cells, 8
  %total = call ptr @malloc(i64 %total_bytes)
  ; inner_block(inner): at most {max_blocks} blocks, each a multiple of {inner_block} k's
  %ceil_part = add i64 %inner, {max_blocks_less}
  %needed = udiv i64 %ceil_part, {max_blocks}
  %ceil_units = add i64 %needed, {inner_block_less}
  %units = udiv i64 %ceil_units, {inner_block}
  %scaled = mul i64 %units, {inner_block}
  %wider = icmp sgt i64 %scaled, {inner_block}
  %block_k = select i1 %wider, i64 %scaled, i64 {inner_block}
  br label %block

block:
  %k = phi i64 [ 0, %blocks ], [ %next_k, %added ]
  %first = icmp eq i64 %k, 0
  %left = sub i64 %inner, %k
  %last = icmp slt i64 %left, %block_k
  %depth = select i1 %last, i64 %left, i64 %block_k
  %a_offset = mul i64 %k, %a_step
  %a_k = getelementptr float, ptr %a, i64 %a_offset
  %b_offset = mul i64 %k, %b_step
  %b_k = getelementptr float, ptr %b, i64 %b_offset
  call void %function(i32 %order, i32 %transpose_a, i32 %transpose_b, i64 %rows, i64 %columns,
                i64 %depth, float %alpha32, ptr %a_k, i64 %lead_a, ptr %b_k, i64 %lead_b,
                float 0.0, ptr %scratch, i64 %columns)
  br label %add

add:
  %cell = phi i64 [ 0, %block ], [ %next_cell, %add ]
  %s_cell = getelementptr float, ptr %scratch, i64 %cell
  %s_value = load float, ptr %s_cell
  %s_wide = fpext float %s_value to double
  %t_cell = getelementptr double, ptr %total, i64 %cell
  %t_loaded = load double, ptr %t_cell
  %t_value = select i1 %first, double 0.0, double %t_loaded
  %t_sum = fadd double %t_value, %s_wide
  store double %t_sum, ptr %t_cell
  %next_cell = add i64 %cell, 1
  %more_cells = icmp slt i64 %next_cell, %cells
  br i1 %more_cells, label %add, label %added

added:
  %next_k = add i64 %k, %block_k
  %more = icmp slt i64 %next_k, %inner
  br i1 %more, label %block, label %store

store:
  %keep = fcmp une double %beta, 0.0
  br label %row

row:
  %i = phi i64 [ 0, %store ], [ %next_i, %row_end ]
  %c_row_offset = mul i64 %i, %lead_c
  %c_row = getelementptr float, ptr %c, i64 %c_row_offset
  %t_row_offset = mul i64 %i, %columns
  %t_row = getelementptr double, ptr %total, i64 %t_row_offset
  br label %column

column:
  %j = phi i64 [ 0, %row ], [ %next_j, %column ]
  %c_out = getelementptr float, ptr %c_row, i64 %j
  %t_out = getelementptr double, ptr %t_row, i64 %j
  %sum = load double, ptr %t_out
  ; c is not read where beta is 0 (it may hold anything, as BLAS allows).
  %c_old = load float, ptr %c_out
  %c_wide = fpext float %c_old to double
  %c_scaled = fmul double %beta, %c_wide
  %c_part = select i1 %keep, double %c_scaled, double 0.0
  %result = fadd double %sum, %c_part
  %rounded = fptrunc double %result to float
  store float %rounded, ptr %c_out
  %next_j = add i64 %j, 1
  %more_j = icmp slt i64 %next_j, %columns
  br i1 %more_j, label %column, label %row_end

row_end:
  %next_i = add i64 %i, 1
  %more_i = icmp slt i64 %next_i, %rows
  br i1 %more_i, label %row, label %done

done:
  call void @free(ptr %scratch)
  call void @free(ptr %total)
  ret i32 0

float64:
  call void %function(i32 %order, i32 %transpose_a, i32 %transpose_b, i64 %rows, i64 %columns,
                i64 %inner, double %alpha, ptr %a, i64 %lead_a, ptr %b, i64 %lead_b,
                double %beta, ptr %c, i64 %lead_c)
  ret i32 0
}}
"""



def _record_loads() -> str:
    """The IR that reads each word of the record at %record into a value of its name."""
    lines = []
    for index, (name, kind) in enumerate(GEMM_RECORD):
        lines.append(f"  %{name}_word = getelementptr i64, ptr %record, i64 {index}")
        if kind == "i32":
            lines.append(f"  %{name}_wide = load i64, ptr %{name}_word")
            lines.append(f"  %{name} = trunc i64 %{name}_wide to i32")
        else:
            lines.append(f"  %{name} = load {kind}, ptr %{name}_word")
    return "\n".join(lines)


_RUN_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_int64)
_LOOP_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_state: dict = {}
_FLOAT_BITS: dict = {}
_lock = threading.Lock()


def float_bits(value: float) -> int:
    """A Python float's float64 bits as an integer (how a job's record holds a scalar)."""
    bits = _FLOAT_BITS.get(value)
    if bits is None:
        bits = struct.unpack("<q", struct.pack("<d", value))[0]
        if len(_FLOAT_BITS) < 64:
            _FLOAT_BITS[value] = bits
    return bits


def data_address(array: np.ndarray) -> int:
    """An ndarray's data pointer, read from the object where jit.py found NumPy's layout (a
    tenth of the time `array.ctypes.data` takes)."""
    if _DATA_OFFSET and array.__class__ is np.ndarray:
        return _read_pointer(id(array) + _DATA_OFFSET).value or 0
    if _DATA_OFFSET is None:
        _find_data_offset()
        return data_address(array)
    return array.ctypes.data


_read_pointer = ctypes.c_void_p.from_address
_DATA_OFFSET: int | None = None  # where an ndarray holds its data pointer; 0: not found


def _find_data_offset() -> None:
    global _DATA_OFFSET
    from . import jit as cpu

    layout = cpu.layout()
    _DATA_OFFSET = layout[1] if layout is not None else 0


class Workers:
    """`count` native worker threads and the functions that hand them jobs, which are cut into
    count + 1 parts; `resize` changes the number of threads, not the parts (autojit's
    set_num_threads), so that plans keep their split and fewer threads run its parts."""

    def __init__(self, count: int, threads: int | None = None):
        from .helper_modules import add_module

        prefix = "autojit_workers"  # one text: compiled once, kept in the disk cache
        slots = "\n".join(f"  %{name}_slot = getelementptr i8, ptr %state, i64 {offset}"
                          for name, offset in SLOTS.items())
        text = _IR.format(
            prefix=prefix, slots=slots, futex=_SYSCALL_FUTEX, wait=_FUTEX_WAIT_PRIVATE,
            wake=_FUTEX_WAKE_PRIVATE, record=GEMM_RECORD_WORDS, record_loads=_record_loads(),
            inner_block=FLOAT32_INNER_BLOCK, long_inner=FLOAT32_LONG_INNER,
            inner_block_less=FLOAT32_INNER_BLOCK - 1, max_blocks=FLOAT32_MAX_BLOCKS,
            max_blocks_less=FLOAT32_MAX_BLOCKS - 1,
            transpose=_CBLAS_TRANSPOSE)
        names = [f"{prefix}_{name}" for name in ("run", "loop", "kernel_part", "gemm_part",
                                                  "nothing")]
        # The engine owns the code; the module is kept alive with this object.
        self._module, (run, loop, self.kernel_part, self.gemm_part, self._nothing) = \
            add_module(text, names)
        self._run, self._loop = _RUN_TYPE(run), _LOOP_TYPE(loop)
        self.run_address = run  # for native callers (program.py), which hold `lock` meanwhile
        self.parts = count + 1  # the parts a job is cut into: one per core
        self.count = count if threads is None else max(0, min(threads, count))
        # The shared state: 64-byte aligned words, zero but for the spin limit.
        self._memory = np.zeros(128, np.int64)
        offset = (-self._memory.ctypes.data % 64) // 8
        self._state = self._memory[offset:offset + 64]
        self._state[SLOTS['spin'] // 8] = SPIN_CYCLES
        self.state_address = self._state.ctypes.data
        self.lock = threading.Lock()
        self._threads: list = []
        self._start(self.count)

    def _start(self, count: int) -> None:
        self._threads = [threading.Thread(target=self._loop, args=(self.state_address,),
                                          name=f"autojit-worker-{index}", daemon=True)
                         for index in range(1, count + 1)]
        for thread in self._threads:
            thread.start()

    def resize(self, threads: int) -> None:
        """Run jobs on `threads` worker threads besides the caller (at most one per part);
        with none, the caller runs every part. Waits for the running workers to leave."""
        threads = max(0, min(threads, self.parts - 1))
        with self.lock:  # no job is running meanwhile
            if threads == len(self._threads):
                return
            words = self._state.view(np.int32)
            words[SLOTS['stop'] // 4] = 1
            self._run(self.state_address, self._nothing, 0, 0)  # wakes the sleepers
            for thread in self._threads:
                thread.join()
            words[SLOTS['stop'] // 4] = 0
            self.count = threads
            self._start(threads)

    def run(self, function: int, argument: int, parts: int) -> int:
        """Run `function(argument, index)` for index in range(parts), each part on whichever
        of this thread and the workers claims it first; returns the or of the results. The
        GIL is released meanwhile."""
        if not 0 <= parts <= MAX_PARTS:
            raise ValueError(f"workers: {parts} parts; a job has at most {MAX_PARTS}")
        with self.lock:
            return self._run(self.state_address, function, argument, parts)

    def stop(self) -> None:
        """Let the workers leave their loops (they are woken if asleep) and wait for them."""
        words = self._state.view(np.int32)
        words[SLOTS['stop'] // 4] = 1
        with self.lock:
            # A job of no parts: a new generation, which wakes sleepers; nothing to wait for.
            self._run(self.state_address, self._nothing, 0, 0)
        for thread in self._threads:
            thread.join(timeout=1.0)


def usable_cores() -> int:
    """The cores this process may use (config.usable_cores: its CPU affinity, capped by a
    cgroup CPU quota): a job is cut into one part per core."""
    return config.usable_cores()


def cores_in_use() -> int:
    """The cores compiled code runs on: the usable cores, or fewer when
    autojit.set_num_threads asks for fewer."""
    return max(1, min(config.usable_cores(), config.get_num_threads()))


_ROUTINE_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)


def compiled_routines(cache: dict, key, build, label: str) -> dict | None:
    """{name: address} of the native routines that `build()` -> (LLVM IR text, {name: symbol})
    describes, compiled (or loaded from the kernel disk cache under `label`) on the first ask
    of `key` and kept in `cache`; None where no native code can be made (no llvmlite). The
    eager routines of eager_gelu.py, eager_softmax.py, eager_norm.py and eager_update.py."""
    found = cache.get(key, False)
    if found is False:
        try:
            from .helper_modules import compile_module
        except ImportError:  # no llvmlite: NumPy runs instead
            found = None
        else:
            text, symbols = build()
            addresses = compile_module(text, list(symbols.values()), (label, text))
            found = dict(zip(symbols, addresses, strict=True))
        cache[key] = found
    return found


def run_routine(native, function: int, words: np.ndarray, parts: int, what: str) -> None:
    """Run a job function `i32 part(ptr words, i64 index)` in `parts` parts on the workers
    `native` (on the calling thread where parts is 1); a nonzero status raises, naming
    `what`. The eager routines call this on small arrays too, so its own cost is kept to a
    few hundred nanoseconds: a ctypes function per routine, made once, and the words' address
    read as data_address reads it."""
    if parts > 1:
        status = native.run(function, data_address(words), parts)
    else:
        call = _ROUTINE_CALLS.get(function)
        if call is None:
            call = _ROUTINE_CALLS[function] = _ROUTINE_TYPE(function)
        status = call(data_address(words), 0)
    if status:
        raise RuntimeError(f"native {what} failed with status {status}")


_ROUTINE_CALLS: dict = {}  # a routine's address -> its ctypes function


def shared() -> Workers | None:
    """The process's workers (one fewer than the cores), started on first use; None where the
    native loop is not built (not Linux on x86-64). On one core there are no worker threads:
    the caller runs every job's one part, so that the native gemm, convolutions and programs
    serve a one-core process too (OpenBLAS through ctypes and a step-by-step plan made a
    compiled GPT step 1.7 times slower there)."""
    workers = _state.get("workers", False)
    if workers is not False:
        return workers
    with _lock:
        workers = _state.get("workers", False)
        if workers is False:
            workers = None
            count = usable_cores() - 1
            if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64"):
                workers = Workers(count, cores_in_use() - 1)
                atexit.register(workers.stop)
            _state["workers"] = workers
    return workers


def threads_changed(count: int) -> None:
    """autojit.set_num_threads(count): the shared workers, if started, keep count - 1 threads
    (codegen/cpu/__init__.py calls this through config.THREAD_LISTENERS)."""
    workers = _state.get("workers")
    if workers:
        workers.resize(min(count, usable_cores()) - 1)


def _forget_after_fork() -> None:
    # A forked child has none of the parent's threads: it starts its own workers when needed.
    _state.pop("workers", None)


os.register_at_fork(after_in_child=_forget_after_fork)
