"""autojit.fx.codegen: a Graph as the Python source of its `forward`, as torch.fx writes it
(torch.fx.graph's CodeGen, PythonCode and _Namespace; graph.py re-exports them).

Each node is one line: `add = relu + mul;  relu = mul = None` (operators as operators, methods
as calls on their first argument, submodules and attributes through `self`, values dropped after
their last use). Functions are written by the name torch gives them where that name reaches
them from the `torch` global (autojit itself: `torch.relu`, `torch.nn.functional.gelu`, see
_names.py); any other object is bound to a global whose name comes from its qualified name
(`__main___helper`, `math_sqrt`), and the functions registered with wrap() are re-registered by
`wrap("...")` lines before the def, so that tracing the generated code keeps them leaves.
"""

from __future__ import annotations

import builtins
import enum
import keyword
import math
import re
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any

from . import _names
from .node import Node

__all__ = ["CodeGen", "PythonCode", "inplace_methods", "magic_methods",
           "reflectable_magic_methods"]

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **reflectable_magic_methods,
}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}",
    "itruediv": "{} /= {}", "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}

# The typing forms of the builtin containers, for annotations written with typing.List etc.
_ORIGIN_TYPES = {list: typing.List, dict: typing.Dict, set: typing.Set,  # noqa: UP006
                 frozenset: typing.FrozenSet, tuple: typing.Tuple}  # noqa: UP006

# Names generated code may not take for something else: keywords and builtins.
_illegal_names: dict[str, Any] = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_case(s: str) -> str:
    """`mod.pascalCase` -> `mod.pascal_case`, as torch names nodes after their targets."""
    return _snake_case_sub.sub(r"_\1", s).lower()


def _is_magic(x: str) -> bool:
    return x.startswith("__") and x.endswith("__")


def _format_target(base: str, target: str) -> str:
    """`base.a.b`, through getattr where a part is not an identifier (`getattr(self.seq, "0")`)."""
    text = base
    for part in target.split("."):
        text = f'{text}.{part}' if part.isidentifier() else f'getattr({text}, "{part}")'
    return text


class _Namespace:
    """Unique names for objects: each object one name, each name one object, and no builtin
    shadowed by anything but that builtin (torch's naming: `add`, `add_1`, `sum_1`)."""

    def __init__(self) -> None:
        self._obj_to_name: dict[Any, str] = {}
        self._used_names: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str, obj: Any) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise AssertionError("obj is already associated")

    def _rename_object(self, obj: Any, name: str) -> None:
        if obj not in self._obj_to_name:
            raise AssertionError(f"Object {obj} is not in _obj_to_name")
        self._obj_to_name[obj] = name
        self._used_names.add(name)


@dataclass
class PythonCode:
    """The source of a graph's function and the globals it needs to run."""

    src: str
    globals: dict[str, Any]
    _lineno_map: dict[int, int | None] | None = None


# torch's short dtype names, for the verbose annotations ("f32[2, 8]").
_DTYPE_ABBRS = {
    "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "float16": "f16", "float32": "f32", "float64": "f64", "complex32": "c32",
    "complex64": "c64", "complex128": "c128", "bool": "b8", "bfloat16": "bf16",
    "uint16": "u16", "uint32": "u32", "uint64": "u64",
}


def _meta_annotation(node: Node, include_stride: bool, include_device: bool) -> str | None:
    """The verbose annotation of a node whose meta holds a tensor ("val") or a ShapeProp
    TensorMetadata ("tensor_meta"), as torch prints it: `: "f32[2, 8]"`."""
    value = node.meta.get("val", node.meta.get("tensor_meta", node.meta.get("example_value")))
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is None or shape is None:
        return None
    text = _DTYPE_ABBRS.get(str(dtype).rsplit(".", 1)[-1], str(dtype)) + _shape_text(shape)
    if isinstance(value, sys.modules["autojit"].Tensor):
        text += _shape_text(value.stride()) if include_stride else ""
        text += str(value.device) if include_device else ""
    return f': "{text}"'


def _shape_text(shape) -> str:
    return f"[{', '.join(str(x) for x in shape)}]"


def _custom_builtins() -> dict[str, Any]:
    # What every generated function may name without an import, as torch registers them.
    autojit = sys.modules["autojit"]
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": autojit,
            "device": autojit.device}


class CodeGen:
    """Writes a graph's nodes as the body of `def forward(self, ...)` (torch.fx.graph.CodeGen);
    subclasses change the signature (gen_fn_def), the return (generate_output) or how inputs
    and outputs are processed."""

    def __init__(self) -> None:
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args, *, repr_fn=repr) -> str:
        return f"return {repr_fn(output_args)}"

    def process_inputs(self, *args):
        return args

    def process_outputs(self, outputs):
        return outputs

    def additional_globals(self) -> list[tuple[str, Any]]:
        return []

    def _gen_python_code(self, nodes, root_module: str, namespace: _Namespace, *,
                         verbose: bool = False, include_stride: bool = False,
                         include_device: bool = False) -> PythonCode:
        free_vars: list[str] = []
        body: list[str] = []
        globals_: dict[str, Any] = {}
        wrapped_fns: dict[str, None] = {}
        return_annotation = [""]

        builtin_objects = _custom_builtins()

        def add_global(name_hint: str, obj: Any) -> str:
            # A function autojit holds under torch's name is written as that name (torch.relu);
            # the registered builtins (device) keep their bare global, as in torch.
            if callable(obj) and not any(obj is v for v in builtin_objects.values()):
                path = _names.torch_code_path(obj)
                if path is not None:
                    return path
            global_name = namespace.create_name(name_hint, obj)
            if global_name in globals_:
                if globals_[global_name] is not obj:
                    raise AssertionError(f"Global name {global_name} already assigned to "
                                         "different object")
                return global_name
            globals_[global_name] = obj
            return global_name

        for name, obj in builtin_objects.items():
            _illegal_names[name] = obj
            add_global(name, obj)

        def type_repr(o) -> str:
            if o == ():
                return "()"
            typename = _names.type_repr(o)
            if isinstance(o, types.UnionType) and "|" in typename:  # 3.10's `A | B`
                return "|".join(type_repr(a) for a in typing.get_args(o))
            origin = getattr(o, "__origin__", None)
            if origin is not None:
                if isinstance(o, typing._GenericAlias):
                    # pre-PEP 585 forms (typing.List[int]) keep their typing origin
                    origin = _ORIGIN_TYPES.get(origin, origin)
                origin_name = add_global(_names.type_repr(origin), origin)
                arguments = typing.get_args(o)
                if arguments:
                    return f"{origin_name}[{','.join(type_repr(a) for a in arguments)}]"
                return origin_name
            return add_global(typename, o)

        def get_repr(arg) -> str:
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                kind = add_global(_names.qualified_name(type(arg)), type(arg))
                return f"{kind}{repr(tuple(arg))}"
            if isinstance(arg, enum.Enum):
                return f"{add_global(type(arg).__name__, type(arg))}.{arg.name}"
            if isinstance(arg, sys.modules["autojit"].Tensor):
                dtype = str(arg.dtype).rsplit(".", 1)[-1]
                return f"torch.Tensor(size={list(arg.size())}, dtype={dtype})"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({get_repr(arg[0])},)"
                return "(" + ", ".join(get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(get_repr(a) for a in arg) + "]"
            if isinstance(arg, slice):
                return (f"slice({get_repr(arg.start)}, {get_repr(arg.stop)}, "
                        f"{get_repr(arg.step)})")
            text = _names.constant_text(arg)
            return text if text is not None else repr(arg)

        def format_args(args, kwargs) -> str:
            parts = [get_repr(a) for a in args]
            parts.extend(f"{k} = {get_repr(v)}" for k, v in kwargs.items())
            return ", ".join(parts)

        # The last user of each value, found walking backwards, frees it after that line.
        node_to_last_use: dict[Node, Node] = {}
        user_to_last_uses: dict[Node, list[Node]] = {}
        for node in reversed(nodes):
            for input_node in node._input_nodes:
                if input_node not in node_to_last_use:
                    node_to_last_use[input_node] = node
                    user_to_last_uses.setdefault(node, []).append(input_node)

        def delete_unused_values(user: Node) -> None:
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            to_delete = list(user_to_last_uses.get(user, []))
            if not user.users:
                to_delete.append(user)
            if to_delete:
                body.append(";  " + " = ".join([repr(n) for n in to_delete] + ["None"]) + "\n")
            else:
                body.append("\n")

        previous_summary = [None]

        def append_summary(node: Node) -> None:
            if node.op in ("placeholder", "output"):
                return
            trace = node.stack_trace
            summary = ("No stacktrace found for following nodes" if not trace
                       else "File: " + trace.strip().splitlines()[-1].strip())
            text = f"\n# {summary}\n"
            if text != previous_summary[0]:
                previous_summary[0] = text
                body.append(text)

        def emit_node(node: Node) -> None:
            annotation = "" if node.type is None else f" : {type_repr(node.type)}"
            if verbose:
                annotation = _meta_annotation(node, include_stride, include_device) or annotation
            if node.op == "placeholder":
                default = "" if not node.args else f" = {get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{annotation}{default}")
                raw_name = node.target.replace("*", "")
                if raw_name != repr(node):
                    body.append(f"{repr(node)} = {raw_name}\n")
                return
            if node.op == "call_method":
                body.append(f"{repr(node)}{annotation} = "
                            f"{_format_target(get_repr(node.args[0]), node.target)}"
                            f"({format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                target = node.target
                name = getattr(target, "__name__", "")
                if getattr(target, "__module__", "") == "_operator" and name in magic_methods:
                    body.append(f"{repr(node)}{annotation} = "
                                + magic_methods[name].format(*(get_repr(a) for a in node.args)))
                    return
                if getattr(target, "__module__", "") == "_operator" and name in inplace_methods:
                    body.append(inplace_methods[name].format(*(get_repr(a) for a in node.args))
                                + f";  {repr(node)}{annotation} = {get_repr(node.args[0])}")
                    return
                global_name = add_global(_names.qualified_name(target), target)
                if (global_name == "getattr" and len(node.args) == 2
                        and isinstance(node.args[1], str) and node.args[1].isidentifier()):
                    body.append(f"{repr(node)}{annotation} = "
                                f"{_format_target(get_repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{repr(node)}{annotation} = "
                            f"{global_name}({format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(global_name)
                return
            if node.op == "call_module":
                body.append(f"{repr(node)}{annotation} = {_format_target(root_module, node.target)}"
                            f"({format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{repr(node)}{annotation} = "
                            f"{_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    return_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(node.args[0], repr_fn=get_repr))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        for node in nodes:
            if verbose:
                append_summary(node)
            emit_node(node)
            delete_unused_values(node)
        if not body:
            body.append("pass\n")
        wrap_stmts = ""
        if wrapped_fns:
            from ._symbolic_trace import wrap  # here: it imports this module (graph.py)

            wrap_name = add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        if self._body_transformer is not None:
            body = self._body_transformer(body)
        for name, value in self.additional_globals():
            add_global(name, value)
        prologue = self.gen_fn_def(free_vars, return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)
