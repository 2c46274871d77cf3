"""The op registry holds every fact about a primitive, and nothing else recognises one by name.

Codegen, the CUDA runtime and the passes read the lowering descriptors' fields (reduction
combine and identity, layout folding, extern routine and operand roles, elementwise
exactness); these tests check that the fields are there and validated, that the consumers read
them, and that no module outside `ops/` tests an op's name string.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit.ops import registry
from autojit.ops.registry import (
    REGISTRY,
    Decomposition,
    Elementwise,
    Extern,
    Layout,
    Reduction,
    check_registry,
    define_op,
    host_index_operand,
    rule_first,
)

SOURCE = Path(autojit.__file__).parent


def test_every_primitive_has_a_complete_lowering():
    check_registry()
    for op in REGISTRY.values():
        lowering = op.lowering
        if isinstance(lowering, Reduction):
            assert lowering.combine in (None, "sum", "prod", "max", "min"), op
            if lowering.combine is not None:
                assert lowering.identity in (0, 1, -math.inf, math.inf)
        elif isinstance(lowering, Extern):
            assert len(lowering.operands) == op.arity, op
        elif isinstance(lowering, Layout):
            assert lowering.fold is None or callable(lowering.fold), op
        elif isinstance(lowering, Decomposition):
            assert callable(lowering.function), op
        else:
            assert isinstance(lowering, Elementwise) and isinstance(lowering.exact, bool), op


@pytest.mark.parametrize("lowering, message", [
    (Reduction("sum", "add"), "Reduction.combine 'add'"),
    (Reduction("any", "sum", logical=True), "logical Reduction"),
    (Extern("indexed_gather", ("data",)), "1 operand roles for 2 inputs"),
    (Extern("indexed_gather", ("data", "pointer")), "roles ['pointer']"),
    (Layout("reshape", fold="strides"), "Layout.fold"),
    (Decomposition("not a function"), "Decomposition.function"),
])
def test_an_incomplete_lowering_fails_the_registry_check(lowering, message):
    arity = 2 if isinstance(lowering, Extern) else 1
    op = define_op(name="incomplete_test_op", arity=arity, shape=lambda *shapes, **_: shapes[0],
                   dtype=rule_first, impl=np.copy, vjp=None, saves=(), lowering=lowering)
    try:
        with pytest.raises(TypeError, match=re.escape(message)):
            check_registry()
    finally:
        del REGISTRY[op.name]
    check_registry()


def test_host_index_roles():
    from autojit.ops.indexing import GATHER, INDEX, INDEX_PUT

    assert host_index_operand(INDEX) == 1
    assert host_index_operand(INDEX_PUT) == 2
    assert host_index_operand(GATHER) is None  # gather's index is on the data's device


def test_layout_folds_give_the_strides_numpy_views_have():
    """A foldable layout's rule gives, over a contiguous source, the element strides of the
    NumPy view its impl makes (zero where a broadcast repeats an element)."""
    source = np.arange(24.0).reshape(2, 3, 4)
    strides = tuple(s // source.itemsize for s in source.strides)
    cases = [("permute", {"dims": (2, 0, 1)}), ("reshape", {"shape": (6, 4)}),
             ("expand", {"shape": (5, 2, 3, 4)})]
    for name, attrs in cases:
        op = REGISTRY[name]
        view = op.impl(source, **attrs)
        folded = op.lowering.fold(source.shape, strides, view.shape, attrs)
        assert folded == tuple(s // view.itemsize for s in view.strides), name
    # A reshape of a permuted view is read through strides where NumPy's reshape makes a view
    # of it (the last two dims still lie one after the other), and not where it copies.
    permuted = REGISTRY["permute"].lowering.fold(source.shape, strides, (4, 2, 3),
                                                 {"dims": (2, 0, 1)})
    view = source.transpose(2, 0, 1).reshape(4, 6)
    assert np.shares_memory(view, source)
    assert REGISTRY["reshape"].lowering.fold((4, 2, 3), permuted, (4, 6), {"shape": (4, 6)}) \
        == tuple(s // view.itemsize for s in view.strides)
    assert REGISTRY["reshape"].lowering.fold((4, 2, 3), permuted, (8, 3), {"shape": (8, 3)}) \
        is None
    # A slice: its strides, and the element it starts at.
    slices = {"slices": ((1, 2, 1), (0, 3, 2), (1, 4, 1))}
    view = REGISTRY["slice"].impl(source, **slices)
    layout = REGISTRY["slice"].lowering
    assert layout.fold(source.shape, strides, view.shape, slices) == \
        tuple(s // view.itemsize for s in view.strides)
    assert layout.start(source.shape, strides, slices) == int(view.reshape(-1)[0])


def test_exact_elementwise_ops_are_marked():
    exact = {op.name for op in REGISTRY.values()
             if isinstance(op.lowering, Elementwise) and op.lowering.exact}
    assert {"add", "mul", "div", "sqrt", "where", "cast", "clone"} <= exact
    assert not exact & {"exp", "log", "sin", "cos", "tanh", "sigmoid", "erf", "pow"}


# Patterns that recognise a primitive by its name string.
_BY_NAME = re.compile(r"op\.name\s*(==|!=|\bin\b|\bnot in\b)|\.op\.name\]|REGISTRY\[\s*[\"']")


def test_no_module_outside_ops_recognises_a_primitive_by_name():
    offenders = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path.relative_to(SOURCE).parts[0] == "ops":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _BY_NAME.search(line):
                offenders.append(f"{path.relative_to(SOURCE)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_a_new_reduction_is_fused_by_its_descriptor_alone():
    """A reduction defined only by its registry entry (no codegen edit) fuses into a kernel
    through its combine field: a maximum of absolute values joins the kernel that computes
    them, and the compiled result equals eager's."""
    from autojit.ops.reduction import _shape_rule

    op = define_op(name="absmax_test_op", arity=1,
                   shape=lambda shape, dim, keepdim: _shape_rule(shape, dim, keepdim),
                   dtype=rule_first, impl=lambda x, dim, keepdim: np.amax(
                       np.abs(x), axis=dim, keepdims=keepdim),
                   vjp=None, saves=(), lowering=Reduction("max", "max"))
    try:
        def f(x):
            return registry.bind(op, ((x * 2).abs(),), {"dim": (1,), "keepdim": False})

        x = autojit.tensor(np.arange(-6.0, 6.0).reshape(3, 4))
        compiled = autojit.compile(f)
        np.testing.assert_array_equal(compiled(x).numpy(), f(x).numpy())
        assert compiled.executables[-1].plan.kernel_count == 1
    finally:
        del REGISTRY[op.name]
