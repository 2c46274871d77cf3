"""Where formatted text goes, read from bytecode: source_uses.py's question for code that has no
source (a script piped to `python -`, `exec` of a string).

`formatted_verdict(code, offset)` answers what source_uses.formatted_reaches_sinks answers
from the AST: does the text formatted at instruction `offset` (an f-string's FORMAT_VALUE, a
`str()`/`repr()`/`format()` call, a `%` or `+`) reach only places that take each run's text?
It follows the text's slot on the value stack through the straight-line instructions after
it, and finds what a call calls by walking back to the instruction that pushed the callable.
Anything it does not know (a jump, an instruction outside its table, an unknown callable) is
a "no", as in source_uses.py. The verdict is True, False, or ("logger", receivers): calls
whose receivers must be loggers (or `warnings`) when they run, each receiver a (chain of
names, method) pair: (("log",), "info"), or (("warn",), None) for a function called by name.
"""

from __future__ import annotations

import dis
import functools
import re
import sys

from .deferred_calls import METHOD_NAMES

_VERSION = sys.version_info[:2]
# The logging methods (and `warnings.warn`) whose text a compiled run gives again.
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical",
                          "exception", "log"})
# A %-format with a width or precision applied to a string (`"%8s" % v`): the padding would
# be computed on the token's text.
PERCENT_WITH_WIDTH = re.compile(r"%[-#0 +]*(\*|\d+)|%[-#0 +]*\.")
_NB_ADD, _NB_REMAINDER = 0, 6
_LOADS = frozenset({"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE",
                    "LOAD_NAME", "PUSH_NULL", "LOAD_SMALL_INT"})
_NO_EFFECT = frozenset({"NOP", "RESUME", "PRECALL", "KW_NAMES", "EXTENDED_ARG", "CACHE",
                        "NOT_TAKEN"})
_BUILDS = frozenset({"BUILD_STRING", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"})


def _effect(ins) -> tuple | None:
    """(items popped, items pushed) of an instruction, or None where not known here."""
    name, arg = ins.opname, ins.arg or 0
    if name in _NO_EFFECT:
        return 0, 0
    if name in _LOADS:
        return 0, 1
    if name == "LOAD_GLOBAL":
        return 0, 1 + (arg & 1)
    if name == "LOAD_ATTR":
        return 1, 1 + (arg & 1 if _VERSION >= (3, 12) else 0)
    if name == "LOAD_METHOD":
        return 1, 2
    if name == "FORMAT_VALUE":
        return 1 + bool(arg & 4), 1
    if name in ("FORMAT_SIMPLE", "CONVERT_VALUE", "CALL_INTRINSIC_1") or \
            name.startswith("UNARY_"):
        return 1, 1
    if name in ("FORMAT_WITH_SPEC", "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP"):
        return 2, 1
    if name in _BUILDS:
        return arg, 1
    if name == "CALL":
        return arg + 2, 1
    if name == "CALL_KW":
        return arg + 3, 1
    if name in ("POP_TOP", "RETURN_VALUE", "STORE_FAST", "STORE_NAME", "STORE_GLOBAL",
                "STORE_DEREF"):
        return 1, 0
    if name == "STORE_ATTR":
        return 2, 0
    if name == "STORE_SUBSCR":
        return 3, 0
    if name == "RETURN_CONST":
        return 0, 0
    return None


@functools.lru_cache(maxsize=256)
def _instructions(code) -> tuple:
    return tuple(dis.get_instructions(code))


def _index(instructions, offset: int) -> int | None:
    for index, ins in enumerate(instructions):
        if ins.offset == offset:
            return index
    return None


def _producer(instructions, index: int, depth: int):
    """The instruction that pushed the item `depth` below the top of the stack as it stands
    before instruction `index`, over straight-line code only; None where unsure."""
    found = _pushed(instructions, index, depth)
    return found[0] if found is not None else None


def _pushed(instructions, index: int, depth: int):
    """(instruction, which of its pushed items counted from the top) for `_producer`."""
    for k in range(index - 1, -1, -1):
        ins = instructions[k]
        if instructions[k + 1].is_jump_target or "JUMP" in ins.opname or \
                ins.opname.startswith(("POP_JUMP", "FOR_ITER", "SEND")):
            return None
        effect = _effect(ins)
        if effect is None:
            return None
        pops, pushes = effect
        if depth < pushes:
            return k, depth
        depth += pops - pushes
    return None


def _is_null(instructions, k: int, item: int) -> bool:
    """Whether item `item` (from the top) that instruction `k` pushed is a call's NULL."""
    ins = instructions[k]
    if ins.opname == "PUSH_NULL":
        return True
    # LOAD_GLOBAL with its low bit pushes NULL below the global until 3.13, above it since
    return ins.opname == "LOAD_GLOBAL" and bool(ins.arg & 1) and \
        item == (1 if _VERSION < (3, 13) else 0)


def _chain(instructions, index: int | None) -> tuple | None:
    """The names of a receiver pushed by instruction `index`: `log` -> ("log",), `self.log`
    -> ("self", "log"); None for anything else."""
    if index is None:
        return None
    ins = instructions[index]
    if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_FAST_CHECK",
                      "LOAD_DEREF"):
        return (ins.argval,)
    if ins.opname == "LOAD_ATTR" and not (_VERSION >= (3, 12) and ins.arg & 1):
        owner = _chain(instructions, _producer(instructions, index, 0))
        return owner + (ins.argval,) if owner is not None else None
    return None


def _callee(instructions, index: int, below: int):
    """What the call at `index` calls, its callable `below` items under the stack's top:
    ("name", n), ("method", name, receiver index), or None."""
    pair = [_pushed(instructions, index, below), _pushed(instructions, index, below + 1)]
    if None in pair:
        return None
    if pair[0][0] != pair[1][0]:  # the callable and a NULL (or self) from two instructions
        pair = [(k, item) for k, item in pair if not _is_null(instructions, k, item)]
        if len(pair) != 1:
            return None
    k = pair[0][0]
    ins = instructions[k]
    if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
        return "name", ins.argval
    if ins.opname in ("LOAD_METHOD", "LOAD_ATTR"):  # `owner.name(...)`, a method or not
        return "method", ins.argval, _producer(instructions, k, 0)
    return None


def _merge(first, second):
    if first is False or second is False:
        return False
    receivers = (first[1] if isinstance(first, tuple) else ()) + \
        (second[1] if isinstance(second, tuple) else ())
    return ("logger", receivers) if receivers else True


def formatted_verdict(code, offset: int):
    """True, False or ("logger", receivers) for the text formatted at `offset` of `code`."""
    instructions = _instructions(code)
    index = _index(instructions, offset)
    if index is None:
        return False
    ins = instructions[index]
    if ins.opname in ("CALL", "CALL_KW"):
        callee = _callee(instructions, index, ins.arg + (ins.opname == "CALL_KW"))
        if callee == ("name", "print"):
            return True  # print formats its arguments itself
        if callee not in (("name", "str"), ("name", "repr"), ("name", "format")):
            return False
    elif ins.opname == "BINARY_OP":
        if ins.arg == _NB_REMAINDER and not _constant_format(instructions, index):
            return False
        if ins.arg not in (_NB_ADD, _NB_REMAINDER):
            return False
    elif ins.opname not in ("FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"):
        return False
    return _follow(code, instructions, index, frozenset())


def _constant_format(instructions, index: int) -> bool:
    left = _producer(instructions, index, 1)
    value = instructions[left].argval if left is not None and \
        instructions[left].opname == "LOAD_CONST" else None
    return isinstance(value, str) and not PERCENT_WITH_WIDTH.search(value)


def _follow(code, instructions, index: int, seen: frozenset):
    """Where the value instruction `index` pushed goes (see the module docstring)."""
    depth, names = 0, ()
    for j in range(index + 1, len(instructions)):
        ins = instructions[j]
        if ins.is_jump_target:
            return False
        if ins.opname == "KW_NAMES":
            names = code.co_consts[ins.arg]
            continue
        effect = _effect(ins)
        if effect is None:
            return False
        pops, pushes = effect
        if depth >= pops:
            depth += pushes - pops
            if ins.opname in ("CALL", "CALL_KW"):
                names = ()
            continue
        name = ins.opname
        if name in _BUILDS or name == "FORMAT_SIMPLE" or (
                name == "FORMAT_VALUE" and not ins.arg & 7) or (
                name == "BINARY_OP" and ins.arg == _NB_ADD):
            depth = 0  # the text again, as part of a longer text or a container
            continue
        if name in ("CALL", "CALL_KW"):
            verdict = _call(code, instructions, j, depth, names)
            if verdict == "text":
                depth, names = 0, ()
                continue
            return verdict
        if name in ("POP_TOP", "RETURN_VALUE"):
            return True
        if name == "STORE_FAST":
            return _local(code, instructions, ins.argval, seen)
        if name == "STORE_ATTR" and depth == 1:
            return _stored_in_state(code, instructions, j, ins.argval)
        return False
    return False


def _call(code, instructions, j: int, depth: int, names: tuple):
    """The verdict for the text as argument `depth` (from the top) of the call at `j`."""
    ins = instructions[j]
    count = ins.arg
    if ins.opname == "CALL_KW":
        if depth == 0:
            return False  # the keyword names themselves
        depth -= 1
        kw = _producer(instructions, j, 0)
        names = instructions[kw].argval if kw is not None else None
        if not isinstance(names, tuple):
            return False
    if depth >= count:
        return False  # the callable or its receiver
    position = count - 1 - depth
    keyword = names[position - (count - len(names))] if position >= count - len(names) \
        else None
    if keyword == "file":
        return False
    callee = _callee(instructions, j, count + (ins.opname == "CALL_KW"))
    if callee is None:
        return False
    if callee[0] == "name":
        return True if callee[1] == "print" else (
            ("logger", (((callee[1],), None),)) if callee[1] == "warn" else False)
    _, method, receiver = callee
    if method in LOG_METHODS or method in METHOD_NAMES:  # the receiver checked in the frame
        chain = _chain(instructions, receiver)
        return ("logger", ((chain, method),)) if chain is not None else False
    if method == "append":
        return True  # stored in a list: written back with each run's text
    if method == "join" and receiver is not None and \
            instructions[receiver].opname == "LOAD_CONST":
        return "text"
    return False


def _local(code, instructions, name: str, seen: frozenset):
    """Whether every read of the local `name` is a sink."""
    if name in seen:
        return True
    seen = seen | {name}
    verdict, reads = True, 0
    for k, ins in enumerate(instructions):
        if ins.opname in ("LOAD_FAST", "LOAD_FAST_CHECK") and ins.argval == name:
            reads += 1
            verdict = _merge(verdict, _follow(code, instructions, k, seen))
            if verdict is False:
                return False
        elif ins.opname in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST",
                            "STORE_FAST_STORE_FAST", "DELETE_FAST", "LOAD_FAST_AND_CLEAR") and \
                name in (ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)):
            return False  # read or rebound in a way not followed here
    return verdict


def _stored_in_state(code, instructions, j: int, attribute: str) -> bool:
    """`owner.attribute = text` where the owner is a global, a closure variable or a
    parameter the function never rebinds, and no other instruction names the attribute."""
    owner = _producer(instructions, j, 0)
    if owner is None:
        return False
    ins = instructions[owner]
    if ins.opname in ("LOAD_FAST", "LOAD_FAST_CHECK"):
        parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if ins.argval not in parameters or any(
                other.opname == "STORE_FAST" and other.argval == ins.argval
                for other in instructions):
            return False
    elif ins.opname == "LOAD_DEREF":
        if ins.argval not in code.co_freevars:
            return False
    elif ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
        return False
    return not any(other.argval == attribute and other.opname in (
        "LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR") for k, other in
        enumerate(instructions) if k != j)
