"""What transformers' own model tests needed of autojit, against torch where torch answers:
aten's assertion operators, torch.SymBool, torch._logging.set_logs routing recompiles to
torch's logger with torch's words, and the names transformers' exporter modules import when
its test harness loads them (torch.export, torch.utils._sympy, torch.onnx.ONNXProgram), whose
exports refuse."""

from __future__ import annotations

import io
import logging

import pytest

import autojit

torch = pytest.importorskip("torch")


def _outcome(call):
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error)


def _assertions(top) -> list:
    aten = top.ops.aten
    x = top.zeros(2, 3)
    calls = [lambda: aten._assert_scalar.default(True, "m"),
             lambda: aten._assert_scalar.default(0, "a bad thing"),
             lambda: aten._assert_tensor_metadata.default(x, size=[2, 3], stride=[3, 1],
                                                          dtype=top.float32),
             lambda: aten.sym_constrain_range_for_size.default(3, min=2, max=4),
             lambda: aten.sym_constrain_range_for_size.default(3, min=4, max=5),
             lambda: aten._assert_async.msg(top.tensor(0), "custom message"),
             lambda: aten._assert_async.default(top.tensor(2))]
    for keywords in (dict(size=[3, 2]), dict(dtype=top.int64), dict(stride=[1, 2]),
                     dict(device="meta"), dict(layout=top.sparse_coo)):
        calls.append(lambda keywords=keywords: aten._assert_tensor_metadata.default(
            x, **keywords))
    return [_outcome(call) for call in calls] + [aten._assert_async.overloads()]


def test_aten_assertion_operators_as_torch():
    assert _assertions(autojit) == _assertions(torch)


def test_symbool_is_a_type_nothing_is():
    assert not isinstance(True, autojit.SymBool)
    with pytest.raises(TypeError, match="makes no SymBool"):
        autojit.SymBool()


def _recompile_log(top) -> tuple:
    top._logging.set_logs(recompiles_verbose=True)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    guards = logging.getLogger("torch._dynamo.guards")
    guards.addHandler(handler)
    try:
        f = top.compile(lambda x: x * 2)
        f(top.ones(2))
        f(top.ones(3, 2))  # a recompile, logged
        top._logging.set_logs()
        f(top.ones(4, 2, 2))  # another, not logged
    finally:
        top._logging.set_logs()
        guards.removeHandler(handler)
    text = stream.getvalue()
    return "Recompiling" in text, text.count("Recompiling"), "guard failure" in text


def test_set_logs_routes_recompiles_to_torchs_logger():
    import autojit._logging  # noqa: F401 - torch._logging under the drop-in

    assert _recompile_log(autojit) == _recompile_log(torch) == (True, 1, True)


def test_export_names_exist_and_exports_refuse():
    from autojit import export
    from autojit.drop_in.onnx import ONNXProgram
    from autojit.utils._sympy.numbers import int_oo
    from autojit.utils._sympy.value_ranges import ValueRanges

    for call in (lambda: export.export(autojit.nn.Linear(2, 2), (autojit.ones(2),)),
                 lambda: export.save(None, "x.pt2"), lambda: export.load("x.pt2"),
                 lambda: export.ExportedProgram(), lambda: ONNXProgram()):
        with pytest.raises(NotImplementedError):
            call()
    batch = export.Dim("batch", min=1, max=8)
    assert (batch.__name__, batch.min, batch.max) == ("batch", 1, 8)
    assert export.Dim.AUTO is not export.Dim.STATIC
    with pytest.raises(ValueError, match="inconsistent"):
        export.Dim("bad", min=3, max=2)
    sizes = ValueRanges(0, int_oo)
    assert 10**9 in sizes and -1 not in sizes and sizes.is_int and -int_oo < 0 < int_oo
    assert (sizes & ValueRanges(2, 5)) == ValueRanges(2, 5)
    assert ValueRanges.unknown_bool().is_bool


def test_torchscript_ir_types_annotate_and_refuse_to_be_made():
    # transformers' SEW-D defines `symbolic(g: torch._C.Graph, input: torch._C.Value, ...)` in
    # a class body: the module did not import through the drop-in.
    from autojit.drop_in import _C

    def symbolic(g: _C.Graph, value: _C.Value) -> _C.Value:
        return value

    import typing

    assert typing.get_type_hints(symbolic, localns={"_C": _C})["g"] is _C.Graph
    for name in ("Graph", "Value", "Node"):
        assert isinstance(getattr(torch._C, name), type)  # torch has all three
        with pytest.raises(NotImplementedError, match="TorchScript"):
            getattr(_C, name)()
