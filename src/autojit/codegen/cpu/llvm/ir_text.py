"""A small writer of LLVM IR text for the native routines whose drivers are loops over tables
(convolution/ir.py): fresh value names, basic blocks, counted loops with their phis, and
loads of int64 words.

Kernels (render.py) and the gemm (gemm/kernel.py) write their IR as f-strings; the
convolution's drivers nest a dozen loops over records read at run time, where tracking each
loop's blocks and phis by hand is where mistakes hide. Values carried across iterations other
than a loop's index live in allocas (the module is optimized, so SROA makes them registers).
"""

from __future__ import annotations

from contextlib import contextmanager


class Function:
    """The body of one function being written: `op` appends an instruction and returns its
    value's name, `loop` opens a counted loop, `block` starts a basic block."""

    def __init__(self, header: str):
        self.lines = [header, "entry:"]
        self.allocas: list = []  # the stack slots, all in the entry block
        self.current = "%entry"  # the block instructions are appended to
        self._count = 0

    def name(self, hint: str = "t") -> str:
        self._count += 1
        return f"%{hint}{self._count}"

    def label(self, hint: str) -> str:
        self._count += 1
        return f"%{hint}_{self._count}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def op(self, text: str, hint: str = "t") -> str:
        value = self.name(hint)
        self.emit(f"{value} = {text}")
        return value

    def block(self, label: str) -> None:
        self.lines.append(f"{label[1:]}:")
        self.current = label

    def branch(self, label: str) -> None:
        self.emit(f"br label {label}")

    def word(self, base: str, index, hint: str = "w") -> str:
        """The int64 at `base[index]` (index: an int or an i64 value)."""
        address = self.op(f"getelementptr i64, ptr {base}, i64 {index}")
        return self.op(f"load i64, ptr {address}", hint)

    def pointer(self, base: str, index, hint: str = "p") -> str:
        """The pointer stored at `base[index]` (a word)."""
        address = self.op(f"getelementptr i64, ptr {base}, i64 {index}")
        return self.op(f"load ptr, ptr {address}", hint)

    def element(self, scalar: str, base: str, index: str, hint: str = "e") -> str:
        return self.op(f"getelementptr {scalar}, ptr {base}, i64 {index}", hint)

    def binary(self, operation: str, left, right, hint: str = "t") -> str:
        return self.op(f"{operation} i64 {left}, {right}", hint)

    def less(self, left, right) -> str:
        return self.op(f"icmp slt i64 {left}, {right}", "lt")

    def minimum(self, left, right) -> str:
        smaller = self.less(left, right)
        return self.op(f"select i1 {smaller}, i64 {left}, i64 {right}", "min")

    def variable(self, initial, kind: str = "i64") -> str:
        """A stack slot holding `initial` (an SSA value carried across loop iterations)."""
        slot = self.name("slot")
        self.allocas.append(f"  {slot} = alloca {kind}")
        self.emit(f"store {kind} {initial}, ptr {slot}")
        return slot

    @contextmanager
    def loop(self, start, stop, step=1, hint: str = "i"):
        """`for index in range(start, stop, step)` (step > 0); yields the index."""
        before = self.current
        head, body, latch, done = (self.label(f"{hint}_{part}")
                                   for part in ("head", "body", "latch", "done"))
        self.branch(head)
        self.block(head)
        index = self.name(hint)
        following = self.name(hint + "_next")
        self.emit(f"{index} = phi i64 [{start}, {before}], [{following}, {latch}]")
        more = self.less(index, stop)
        self.emit(f"br i1 {more}, label {body}, label {done}")
        self.block(body)
        yield index
        self.branch(latch)
        self.block(latch)
        self.emit(f"{following} = add i64 {index}, {step}")
        self.branch(head)
        self.block(done)

    @contextmanager
    def when(self, condition: str):
        """The instructions written inside run where the i1 `condition` holds."""
        then, done = self.label("then"), self.label("fi")
        self.emit(f"br i1 {condition}, label {then}, label {done}")
        self.block(then)
        yield
        self.branch(done)
        self.block(done)

    def stack(self, kind: str, align: int = 16) -> str:
        """A stack buffer of `kind` (an array type), in the entry block."""
        slot = self.name("stack")
        self.allocas.append(f"  {slot} = alloca {kind}, align {align}")
        return slot

    def text(self) -> str:
        return "\n".join([*self.lines[:2], *self.allocas, *self.lines[2:], "}"])
