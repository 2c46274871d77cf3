"""What the user's source does with a value: the static reading a trace relies on where Python
gives it no hook.

A trace sees the tensor ops and the Python values a function hands back, but not what plain
Python does with a string or a list. Two questions are answered here from the function's
source (its AST, found through linecache; without source, the first is read from bytecode
by ir/bytecode_uses.py, and the second is a "no"):

- `formatted_reaches_sinks(frame)`: a symbolic value is being formatted (an f-string,
  `str()`, `%`) at the frame's current instruction. Does the text only reach places that
  take each run's text: `print`, a logging call, `warnings.warn`, a `return`, a store into
  Python state (`history.append(msg)`, `self.last = msg`), or a local variable read only by
  those? Then ir/trace.py gives a token filled in with each run's value (ir/printing.py).
  Otherwise (`if msg.startswith("-")`, `len(msg)`, padding `f"{str(v):>8}"`) Python decides
  on the text, and the trace specializes on it.
- `append_only(names, codes)`: is a list that a traced call appended to only ever appended
  to (`losses.append(...)` as a statement) in the user's code that the function can reach?
  Then its length and items are nothing the trace read, and compiler/writebacks.py appends
  each run's values instead of guarding its length (which every call changes).

Both answers are conservative: any use not recognized is a "no".
"""

from __future__ import annotations

import ast
import functools
import linecache
import logging
import warnings

from .bytecode_uses import LOG_METHODS, PERCENT_WITH_WIDTH, formatted_verdict
from .deferred_calls import METHOD_NAMES, takes_each_runs_text

# Methods whose text a compiled run gives again, where the receiver is right (checked in the
# frame): logging's, and progress bars' (ir/deferred_calls.py).
_TEXT_METHODS = LOG_METHODS | METHOD_NAMES


@functools.lru_cache(maxsize=256)
def _parsed(filename: str, text: str):
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return None
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return tree, parents


def _module_of(code):
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return None
    return _parsed(code.co_filename, "".join(lines))


def _function_node(tree, parents, code):
    """The AST node of the function whose code object `code` is (None for module code)."""
    first = code.co_firstlineno
    name = code.co_name
    if name.startswith("<") and name not in ("<lambda>", "<module>"):
        # A comprehension's own code (<genexpr>, <listcomp>): read within the function
        # around it, the innermost one holding its line.
        around = [node for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and
                  node.lineno <= first <= (node.end_lineno or node.lineno)]
        return max(around, key=lambda node: node.lineno) if around else tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            lines = [node.lineno] + [decorator.lineno for decorator in node.decorator_list]
            if first in lines:
                return node
        elif isinstance(node, ast.Lambda) and name == "<lambda>" and node.lineno == first:
            return node
    return None


# ---- formatted values --------------------------------------------------------------------------

_FORMATTED_CACHE: dict = {}


def formatted_reaches_sinks(frame) -> bool:
    """Whether the value formatted at the frame's current instruction reaches only places
    that take each run's text (see the module docstring)."""
    code, offset = frame.f_code, frame.f_lasti
    key = (code, offset)
    found = _FORMATTED_CACHE.get(key)
    if found is None:
        # Without source (`python - < script.py`, exec of a string) the bytecode answers.
        found = _FORMATTED_CACHE[key] = _formatted_safe(frame, code, offset) \
            if _module_of(code) is not None else formatted_verdict(code, offset)
    if found == "logger":  # the receiver of a log call must be a logger (read each time)
        return _logger_receiver(frame, code, offset)
    if isinstance(found, tuple):
        return all(_receiver_takes_text(frame, chain, method) for chain, method in found[1])
    return found


def _formatted_node(code, offset):
    """(node formatted, parents, function node) at the instruction `offset` of `code`."""
    module = _module_of(code)
    if module is None:
        return None
    tree, parents = module
    positions = list(code.co_positions())
    if offset // 2 >= len(positions):
        return None
    line, end_line, column, end_column = positions[offset // 2]
    if line is None or column is None:
        return None
    function = _function_node(tree, parents, code) if code.co_name != "<module>" else tree
    if function is None:
        return None
    for node in ast.walk(function):
        if isinstance(node, (ast.JoinedStr, ast.Call, ast.BinOp)) and \
                (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset) == \
                (line, end_line, column, end_column):
            return node, parents, function
    return None


def _formatted_safe(frame, code, offset):
    found = _formatted_node(code, offset)
    if found is None:
        return False
    node, parents, function = found
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, ast.Add) and not (
                isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and
                isinstance(node.left.value, str) and
                not PERCENT_WITH_WIDTH.search(node.left.value)):
            return False
    elif isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in ("str", "repr", "format") or
                isinstance(func, ast.Name) and func.id == "print"):
            return False
        if isinstance(func, ast.Name) and func.id == "print":
            return True  # print formats its arguments itself
    return _sink(node, parents, function, set())


def _sink(node, parents, function, seen: set):
    """Whether the string `node` evaluates to reaches only each-run sinks: True, False, or
    "logger" (a log method call whose receiver must be checked when it runs)."""
    parent = parents.get(node)
    if parent is None:
        return False
    if isinstance(parent, ast.FormattedValue):
        if parent.format_spec is not None or parent.conversion != -1:
            return False  # padding or a repr of the text: computed on the token
        return _sink(parents.get(parent), parents, function, seen) if parents.get(parent) \
            is not None else False
    if isinstance(parent, ast.JoinedStr) or (isinstance(parent, ast.BinOp) and
                                             isinstance(parent.op, ast.Add)):
        return _sink(parent, parents, function, seen)
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) or (
            isinstance(parent, ast.Dict) and node in parent.values) or (
            isinstance(parent, (ast.GeneratorExp, ast.ListComp)) and parent.elt is node):
        return _sink(parent, parents, function, seen)
    if isinstance(parent, ast.Call) and node in parent.args and \
            isinstance(parent.func, ast.Attribute) and parent.func.attr == "join" and \
            isinstance(parent.func.value, ast.Constant):
        return _sink(parent, parents, function, seen)  # `", ".join(texts)`: text again
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        if parent.arg == "file":
            return False
        return _call_sink(call) if isinstance(call, ast.Call) else False
    if isinstance(parent, ast.Call) and node in parent.args:
        return _call_sink(parent)
    if isinstance(parent, (ast.Return, ast.Expr)):
        return True
    if isinstance(parent, ast.Assign) and parent.value is node:
        verdict = True
        for target in parent.targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                if not _stored_in_state(target, function):
                    return False
                continue  # stored in Python state: written back with each run's text
            if not isinstance(target, ast.Name):
                return False
            verdict = _merge(verdict, _local_sink(target.id, function, parents, seen))
        return verdict
    return False


def _stored_in_state(target, function) -> bool:
    """Whether `obj.name = text` or `obj[key] = text` stores into state from outside the
    function (its object is a parameter, a global or a closure variable, not a local the
    function made) that the function does not read back (no other use of `.name` or of
    `[key]` in it)."""
    root = target.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == root.id and \
                not isinstance(node.ctx, ast.Load):
            return False  # a local the function binds
        if node is target or not isinstance(node, type(target)):
            continue
        if isinstance(target, ast.Attribute) and node.attr == target.attr:
            return False
        if isinstance(target, ast.Subscript) and ast.dump(node.slice) == \
                ast.dump(target.slice):
            return False
    return True


def _merge(first, second):
    if first is False or second is False:
        return False
    return "logger" if "logger" in (first, second) else True


def _call_sink(call: ast.Call):
    func = call.func
    if isinstance(func, ast.Name) and func.id == "print":
        return True
    if isinstance(func, ast.Name) and func.id == "warn":
        return "logger"  # `from warnings import warn`: checked when it runs, as a receiver is
    if isinstance(func, ast.Attribute):
        if func.attr in _TEXT_METHODS:
            return "logger"
        if func.attr == "append":
            return True  # stored in a list: written back with each run's text
    return False


def _local_sink(name: str, function, parents, seen: set):
    """Whether every read of the local `name` in `function` is a sink."""
    if name in seen:
        return True
    seen.add(name)
    verdict = True
    reads = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            reads += 1
            verdict = _merge(verdict, _sink(node, parents, function, seen))
            if verdict is False:
                return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    return verdict if reads or verdict else verdict


def _logger_receiver(frame, code, offset) -> bool:
    """Whether each log call the formatted text reaches is made on a logger (or the logging
    module), and each `warn` is `warnings.warn`: its receiver, a name or attribute chain, read
    in the frame."""
    found = _formatted_node(code, offset)
    if found is None:
        return False
    formatted, _, function = found
    carriers = None
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "warn":
            called = _read_chain(node.func, frame)
            if called is not _MISSING and called not in (warnings.warn, _WARN):
                return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _TEXT_METHODS:
            if node.func.attr not in LOG_METHODS:
                # A progress bar's method names are common (`stats.update(...)`,
                # `file.write(...)`): only a call the text can reach is looked at.
                if carriers is None:
                    carriers = _carriers(function, formatted)
                if not any(_mentions(argument, formatted, carriers) for argument in (
                        *node.args, *(keyword.value for keyword in node.keywords))):
                    continue
            receiver = _read_chain(node.func.value, frame)
            if receiver is not _MISSING and not _takes_each_runs_text(receiver, node.func.attr):
                return False
    return True


def _mentions(tree, formatted, names: set) -> bool:
    """Whether `tree` holds the formatted node or reads one of the local `names`."""
    return any(node is formatted or isinstance(node, ast.Name) and node.id in names
               for node in ast.walk(tree))


def _carriers(function, formatted) -> set:
    """The local names the formatted text may be stored in, through assignments of values
    that hold it or another such name (to a fixpoint)."""
    names: set = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and \
                    node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if not _mentions(value, formatted, names):
                continue
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in names:
                        names.add(name.id)
                        changed = True
    return names


_MISSING = object()
# warnings.warn itself: the attribute is replaced while tracing (ir/printing.py), and a name
# bound before (`from warnings import warn`) keeps the function, which the read recorder
# stops before it warns (compiler/recorder.py).
_WARN = warnings.warn


def _receiver_takes_text(frame, chain: tuple, method: str | None) -> bool:
    """A receiver named by bytecode (ir/bytecode_uses.py), read in the frame: the object
    `chain` names takes each run's text through `method`, or is `warnings.warn` itself."""
    found = _read_chain(ast.Name(chain[0]), frame)
    for name in chain[1:]:
        found = getattr(found, name, None) if found is not _MISSING else _MISSING
    if found is _MISSING:
        return True  # as in _logger_receiver: a name not bound yet is not refused
    return found in (warnings.warn, _WARN) if method is None else \
        _takes_each_runs_text(found, method)


def _takes_each_runs_text(receiver, method: str) -> bool:
    """Whether `receiver.method(text)` is a log call, `warnings.warn` or a progress bar's
    deferred method, whose text a compiled run gives again with its own values
    (ir/printing.py's LogEffect, WarningEffect, CallEffect)."""
    if method == "warn" and receiver is warnings:
        return True
    if method in METHOD_NAMES and takes_each_runs_text(receiver, method):
        return True
    return method in LOG_METHODS and (
        isinstance(receiver, (logging.Logger, logging.LoggerAdapter)) or receiver is logging)


def _read_chain(node, frame):
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in scope:
                return scope[node.id]
        return _MISSING
    if isinstance(node, ast.Attribute):
        owner = _read_chain(node.value, frame)
        if owner is _MISSING:
            return _MISSING
        try:
            return getattr(owner, node.attr)
        except Exception:  # noqa: BLE001 - an attribute that raises: not a logger
            return None
    return None


# ---- lists the function appends to ------------------------------------------------------------

def append_only(name: str, codes) -> bool:
    """Whether every use of `name` (a variable, an attribute, or a dict key) in the source of
    the code objects `codes` is `<it>.append(...)` as a statement, and there is one."""
    appends = 0
    for code in codes:
        module = _module_of(code)
        if module is None:
            return False
        tree, parents = module
        function = _function_node(tree, parents, code)
        if function is None:
            return False
        for node in ast.walk(function):
            if not _names(node, name):
                continue
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                return False
            attribute = parents.get(node)
            call = parents.get(attribute)
            if not (isinstance(attribute, ast.Attribute) and attribute.attr == "append" and
                    isinstance(call, ast.Call) and call.func is attribute and
                    isinstance(parents.get(call), ast.Expr)):
                return False
            appends += 1
    return appends > 0


def _names(node, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, ast.Attribute):
        return node.attr == name
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and key.value == name
    return False


# ---- places the function only writes --------------------------------------------------------

def write_only(name: str, codes) -> bool:
    """Whether every use of `name` (a variable, an attribute, or a dict key) in the source of
    the code objects `codes` is the target of a plain assignment (`self.message = text`,
    `global LAST; LAST = x`), and there is one: what it held before is nothing the function
    read."""
    stores = 0
    for code in codes:
        module = _module_of(code)
        if module is None:
            return False
        tree, parents = module
        function = _function_node(tree, parents, code)
        if function is None:
            return False
        for node in ast.walk(function):
            if not _names(node, name):
                continue
            parent = parents.get(node)
            if not isinstance(getattr(node, "ctx", None), ast.Store) or not isinstance(
                    parent, ast.Assign):
                return False  # read, deleted, or read and written (`+=`)
            stores += 1
    return stores > 0
