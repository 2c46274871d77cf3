"""autojit.fx against torch.fx: the same model source traced by both (an MLP, a module looping
over submodules, nn.functional calls, Tensor methods, operators, parameters read, a wrap()ped
function, math autowrap, concrete_args, *args, a leaf submodule), compared by graph listing,
node opcodes and targets, generated code, outputs and gradients; Interpreter and Transformer,
graph editing, the tracer's errors, copies and pickles, the helper modules libraries import,
and `import torch.fx` under the drop-in (in a fresh process, as install() refuses to run beside
torch).

Where autojit names a target differently from torch it is because torch defines it in another
module than its public one: torch._C._nn.linear is autojit's torch.nn.functional.linear,
torch._C._linalg.linalg_norm its torch.linalg.norm, torch.functional.einsum its torch.einsum,
and torch._assert (which autojit's top level lacks) its torch.fx._symbolic_trace._assert;
`normalize` maps torch's names to these.
"""

from __future__ import annotations

import copy
import math
import operator
import pickle
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

import autojit
import autojit.fx
from autojit.fx.experimental import symbolic_shapes
from autojit.fx.passes.infra.pass_base import PassBase, PassResult

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402, F811 - the submodule, on the module importorskip gave


def scaled_sum(x, k):
    """A leaf of both traces (wrap() below): its body is not traced through."""
    return x.sum(dim=-1, keepdim=True) * k


torch.fx.wrap("scaled_sum")
autojit.fx.wrap("scaled_sum")


def halve(n):
    """A leaf of the traces that name it in Tracer(autowrap_functions=...)."""
    return n // 2


def models(t):
    """The model classes, written once over framework `t` (torch or autojit)."""
    nn, F = t.nn, t.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(t.linspace(0.5, 1.5, 4))
            self.register_buffer("shift", t.full((4,), 0.25))

        def forward(self, x):
            return t.relu(self.lin(x)) + self.scale * self.shift

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.head = nn.Sequential(nn.Linear(8, 3), nn.Tanh())
            self.proj = nn.Parameter(t.linspace(-1.0, 1.0, 16).reshape(4, 4))

        def forward(self, x, flag=True):
            for block in self.blocks:
                x = block(x)
            x = F.gelu(x) * F.softplus(x).mean(dim=-1, keepdim=True)
            x = F.linear(x, self.proj.t())
            x = x.view(-1, 4).transpose(0, 1).t().contiguous()
            n = x.shape[1]
            x = scaled_sum(x, 0.5) + x / math.sqrt(n) - x.size(0)
            x = t.cat([x, -x[:, :4]], dim=1)
            return self.head(x), t.sigmoid(x).sum()

    class Leafy(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Block()
            self.out = nn.Linear(4, 2)

        def forward(self, x, *rest):
            b, c = x.shape
            y = self.inner(x).reshape(b, c) ** 2
            return self.out(y + rest[0]), (y @ y.t()).abs().max(dim=1)[0]

    return SimpleNamespace(MLP=MLP, Net=Net, Leafy=Leafy, Block=Block)


TORCH_MODELS, AUTOJIT_MODELS = models(torch), models(autojit)


def pair(name: str):
    """The model `name` in torch and in autojit, with the same weights."""
    torch.manual_seed(0)
    theirs = getattr(TORCH_MODELS, name)()
    mine = getattr(AUTOJIT_MODELS, name)()
    mine.load_state_dict({k: autojit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return theirs, mine


def normalize(text: str) -> str:
    """torch's listing or code with its C builtins named as autojit names them."""
    return (text.replace("torch._C._nn.", "torch.nn.functional.")
            .replace("torch._C._linalg.linalg_", "torch.linalg.")
            .replace("torch.functional.", "torch.")
            .replace("torch._assert", "torch.fx._symbolic_trace._assert"))


def numpy(value):
    return value.detach().numpy()


def assert_close(mine, theirs, rtol=1e-5, atol=1e-6):
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs, strict=True):
            assert_close(a, b, rtol, atol)
        return
    np.testing.assert_allclose(numpy(mine), numpy(theirs), rtol=rtol, atol=atol)


X = np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)


def trace_both(name: str, **kwargs):
    theirs, mine = pair(name)
    return theirs, mine, torch.fx.symbolic_trace(theirs, **kwargs), \
        autojit.fx.symbolic_trace(mine, **kwargs)


def node_rows(gm) -> list:
    return [(n.op, n.name, normalize(n._pretty_print_target(n.target)), len(n.users))
            for n in gm.graph.nodes]


# ---- tracing: the same graphs and code ---------------------------------------------------------

def test_mlp_graph_code_and_values_match_torch():
    theirs, mine, tgm, agm = trace_both("MLP")
    assert str(agm.graph) == str(tgm.graph)
    assert agm.code == tgm.code
    assert type(agm).__name__ == "MLP" and isinstance(agm, autojit.fx.GraphModule)
    assert isinstance(agm, autojit.nn.Module)
    assert agm.print_readable(print_output=False) == tgm.print_readable(print_output=False)
    assert_close(agm(autojit.tensor(X)), tgm(torch.tensor(X)))


def test_loop_functional_methods_operators_wrap_and_concrete_args_match_torch():
    theirs, mine, tgm, agm = trace_both("Net", concrete_args={"flag": True})
    assert str(agm.graph) == normalize(str(tgm.graph))
    assert agm.code == normalize(tgm.code)
    assert node_rows(agm) == node_rows(tgm)
    targets = {n.target for n in agm.graph.nodes if n.op == "call_function"}
    assert {scaled_sum, math.sqrt, operator.add, autojit.relu} <= targets
    wrapped = [n for n in agm.graph.nodes if n.target is scaled_sum]
    assert wrapped[0].meta["is_wrapped"]
    global_name = f"{scaled_sum.__module__}.scaled_sum".replace(".", "_")
    assert agm.code.startswith(f'\ntorch.fx._symbolic_trace.wrap("{global_name}")\n')
    assert f"scaled_sum = {global_name}(contiguous, 0.5)" in agm.code
    assert [n.target for n in agm.graph.nodes if n.op == "call_module"] == [
        "blocks.0.lin", "blocks.1.lin", "head.0", "head.1"]
    assert {n.target for n in agm.graph.nodes if n.op == "get_attr"} == {
        "blocks.0.scale", "blocks.0.shift", "blocks.1.scale", "blocks.1.shift", "proj"}


def test_graph_module_outputs_and_gradients_equal_eager():
    theirs, mine, tgm, agm = trace_both("Net")
    x_t = torch.tensor(X, requires_grad=True)
    x_a = autojit.tensor(X, requires_grad=True)
    expected, eager, traced = theirs(x_t), mine(autojit.tensor(X)), agm(x_a)
    assert_close(traced, expected)
    assert_close(traced, eager)
    (expected[0].sum() * 2 + expected[1]).backward()
    (traced[0].sum() * 2 + traced[1]).backward()
    assert_close(x_a.grad, x_t.grad)
    grads = {n: p.grad for n, p in agm.named_parameters()}
    for name, parameter in theirs.named_parameters():
        assert_close(grads[name], parameter.grad)
    # the GraphModule holds the root's very parameters, at the same paths
    assert agm.get_parameter("blocks.0.scale") is mine.blocks[0].scale
    assert dict(agm.named_buffers()).keys() == dict(tgm.named_buffers()).keys()


def test_varargs_tuple_unpacking_and_a_leaf_submodule_by_tracer_override():
    theirs, mine = pair("Leafy")
    results = []
    for fx, model, x, r in ((torch.fx, theirs, torch.tensor(X), torch.ones(4)),
                            (autojit.fx, mine, autojit.tensor(X), autojit.ones(4))):
        block = type(model.inner)

        class Tracer(fx.Tracer):
            def is_leaf_module(self, m, qualname, block=block):
                return isinstance(m, block) or super().is_leaf_module(m, qualname)

        graph = Tracer().trace(model)
        gm = fx.GraphModule(model, graph)
        results.append((gm, gm(x, r), model(x, r)))
    (tgm, t_out, t_eager), (agm, a_out, a_eager) = results
    assert str(agm.graph) == str(tgm.graph)
    assert agm.code == tgm.code
    assert "inner = self.inner(x)" in agm.code and "*rest" in agm.code
    assert_close(a_out, t_out)
    assert_close(a_out, a_eager)


def test_functions_traced_with_tensor_methods_constants_and_python_level_functional():
    def program(t):
        F = t.nn.functional

        def f(x, y: t.Tensor = None):
            z = t.ones(4).add(x) + x.float().to(t.float32).relu_()
            w = t.linalg.norm(x) * x.permute(1, 0).T.reshape(2, 4).type_as(x)
            return F.relu(z), F.softmax(w, dim=-1), t.stack([z, w]).amax(0), x.ndim + x.dim()

        return f

    tgm = torch.fx.symbolic_trace(program(torch))
    agm = autojit.fx.symbolic_trace(program(autojit))
    # torch's Python-level nn.functional functions pass their defaults as keywords; the
    # opcodes, targets and names are the same.
    assert node_rows(agm) == node_rows(tgm)
    const = [n for n in agm.graph.nodes if n.op == "get_attr"]
    assert [n.target for n in const] == ["_tensor_constant0"]
    assert_close(agm(autojit.tensor(X))[:3], tgm(torch.tensor(X))[:3])
    assert agm(autojit.tensor(X))[3] == 4


def test_tracer_options_parameter_proxies_autowrap_functions_and_proxies_on_nodes():
    def program(t):
        class Shaped(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = t.nn.Parameter(t.ones(2, 4))

            def forward(self, x):
                if self.weight.shape[0] == 2:  # a constant with param_shapes_constant
                    x = x + self.weight.sum(0)
                return t.nn.functional.linear(x, self.weight).abs() + halve(x.dim())

        return Shaped

    rows = []
    for fx, t in ((torch.fx, torch), (autojit.fx, autojit)):
        model = program(t)()
        tracer = fx.Tracer(param_shapes_constant=True, autowrap_functions=(halve,))
        graph = tracer.trace(model)
        rows.append([(n.op, n.name, normalize(n._pretty_print_target(n.target)))
                     for n in graph.nodes])
        # a Proxy made around a node appends what it meets to that node's graph
        x, output = next(iter(graph.nodes)), next(iter(reversed(graph.nodes)))
        with graph.inserting_before(output):
            doubled = fx.Proxy(x) * 2
            relu = t.relu(doubled)
        assert relu.node.op == "call_function" and relu.node.target is t.relu
        assert doubled.node.target is operator.mul and relu.node.args == (doubled.node,)
        rows.append([n.name for n in graph.nodes])
        copied = fx.Graph()
        output = copied.graph_copy(graph, {})
        copied.output(output)
        rows.append(str(copied))
    assert rows[3:5] == rows[:2]
    assert rows[5] == normalize(rows[2]), (rows[5], rows[2])
    assert ("call_function", "halve", f"{__name__}.halve") in rows[3]


def test_factories_indexing_and_more_functional_calls_on_proxies_match_torch():
    def program(t):
        F = t.nn.functional

        def f(x, m):
            a = t.where(m > 0, x, t.zeros_like(x))
            b = t.arange(x.shape[0]).float() + t.full((x.size(0), 4), 0.5).sum(1)
            c = t.einsum("ij->ji", x).masked_fill(m.t() > 1, 0.0)
            d = F.pad(x, (1, 1)).unsqueeze(0).unsqueeze(0)
            e = F.interpolate(d, scale_factor=2.0, mode="nearest")
            q = x.unsqueeze(0)
            g = F.scaled_dot_product_attention(q, q, q)
            h = x.new_zeros((2, 2)) + t.flatten(e, 1).mean()
            return a, b, c, e, g, h, x[None, ..., 0], x.softmax(-1).argmax(dim=1)

        return f

    tgm = torch.fx.symbolic_trace(program(torch))
    agm = autojit.fx.symbolic_trace(program(autojit))
    assert node_rows(agm) == node_rows(tgm)
    mask = np.ones((2, 4), np.float32)
    assert_close(agm(autojit.tensor(X), autojit.tensor(mask)),
                 tgm(torch.tensor(X), torch.tensor(mask)))


def test_proxyable_classes_become_nodes():
    def program(fx, t):
        class Pair(metaclass=fx.ProxyableClassMeta):
            def __init__(self, left, right):
                self.left, self.right = left, right

        def f(x):
            return Pair(x, x.neg())

        return f

    for fx, t in ((torch.fx, torch), (autojit.fx, autojit)):
        graph = fx.symbolic_trace(program(fx, t)).graph
        pair = [n for n in graph.nodes if n.op == "call_function"][-1]
        assert pair.name == "pair" and pair.target.__name__ == "Pair"
        assert [n.op for n in graph.nodes] == ["placeholder", "call_method", "call_function",
                                               "output"]


def test_annotations_print_as_torch_prints_them():
    from typing import Dict, List, Optional, Tuple  # noqa: UP035 - the forms compared

    def program(t):
        def f(x, y=None, z=(1,), d=None, u=None):
            return x + 1, 2

        # set, not written: this module's annotations are strings (__future__)
        f.__annotations__ = {"x": t.Tensor, "y": Optional[t.Tensor], "z": List[int],  # noqa: UP006, UP045
                             "d": Dict[str, t.Tensor], "u": t.Tensor | None,  # noqa: UP006
                             "return": Tuple[t.Tensor, int]}  # noqa: UP006
        return f

    tgm = torch.fx.symbolic_trace(program(torch))
    agm = autojit.fx.symbolic_trace(program(autojit))
    assert str(agm.graph) == str(tgm.graph)
    assert agm.code == tgm.code
    assert "y : typing_Union[torch.Tensor,NoneType] = None" in agm.code


# ---- Interpreter and Transformer ---------------------------------------------------------------

def test_interpreter_runs_the_graph_node_by_node():
    theirs, mine, tgm, agm = trace_both("Net")
    assert_close(autojit.fx.Interpreter(agm).run(autojit.tensor(X)), agm(autojit.tensor(X)))
    seen = []

    class Counting(autojit.fx.Interpreter):
        def call_module(self, target, args, kwargs):
            seen.append(target)
            return super().call_module(target, args, kwargs)

    Counting(agm).run(autojit.tensor(X))
    assert seen == ["blocks.0.lin", "blocks.1.lin", "head.0", "head.1"]
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        autojit.fx.Interpreter(agm).run()


def test_transformer_swapping_relu_for_gelu_matches_torch():
    def swapper(fx, t):
        class ReluToGelu(fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is t.relu:
                    target = t.nn.functional.gelu
                return super().call_function(target, args, kwargs)

        return ReluToGelu

    theirs, mine, tgm, agm = trace_both("Net")
    new_t = swapper(torch.fx, torch)(tgm).transform()
    new_a = swapper(autojit.fx, autojit)(agm).transform()
    assert new_a.code == normalize(new_t.code)
    assert "torch.nn.functional.gelu(blocks_0_lin)" in new_a.code
    assert_close(new_a(autojit.tensor(X)), new_t(torch.tensor(X)))
    assert not any(n.target is autojit.relu for n in new_a.graph.nodes)


# ---- editing graphs ----------------------------------------------------------------------------

def edit(fx, t, gm):
    """The same edits in both: a node inserted, uses redirected, a node erased, dead code."""
    graph = gm.graph
    relu = next(n for n in graph.nodes if n.op == "call_module" and n.target == "act")
    with graph.inserting_after(relu):
        doubled = graph.call_function(operator.mul, (relu, 2.0))
    relu.replace_all_uses_with(doubled, delete_user_cb=lambda user: user is not doubled)
    assert doubled.args == (relu, 2.0) and relu.users == {doubled: None}
    with graph.inserting_before(doubled):
        graph.call_method("sum", (relu,))  # dead: nobody reads it
    assert graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return gm


def test_graph_editing_matches_torch():
    theirs, mine, tgm, agm = trace_both("MLP")
    edit(torch.fx, torch, tgm)
    edit(autojit.fx, autojit, agm)
    assert str(agm.graph) == str(tgm.graph)
    assert agm.code == tgm.code
    assert "mul = act * 2.0" in agm.code and "sum" not in agm.code
    assert_close(agm(autojit.tensor(X)), tgm(torch.tensor(X)))
    nodes = list(agm.graph.nodes)
    assert nodes[1].prev is nodes[0] and nodes[0].next is nodes[1]
    assert [n.name for n in reversed(agm.graph.nodes)] == [n.name for n in nodes][::-1]
    assert agm.graph.find_nodes(op="call_module") == [n for n in nodes if n.op == "call_module"]
    with pytest.raises(RuntimeError, match="still had 1 users in the graph"):
        agm.graph.erase_node(nodes[0])
    with pytest.raises(TypeError, match="'immutable_list' object does not support mutation"):
        autojit.fx.node.map_arg([nodes[0]], lambda n: n).append(1)


def test_graph_built_by_hand_and_graph_module_from_a_dict():
    built = []
    for fx, t in ((torch.fx, torch), (autojit.fx, autojit)):
        graph = fx.Graph()
        x = graph.placeholder("x")
        w = graph.get_attr("sub.w")
        y = graph.call_function(t.add, (x, w), {"alpha": 2})
        z = graph.call_module("lin", (y,))
        graph.output({"out": z, "pair": [y, graph.call_method("exp", (z,))]})
        t.manual_seed(0)
        lin = t.nn.Linear(3, 3)
        built.append((fx.GraphModule({"sub.w": t.ones(3), "lin": lin}, graph, "Built"), lin))
    (tgm, tlin), (agm, alin) = built
    assert agm.code == tgm.code and str(agm.graph) == str(tgm.graph)
    alin.load_state_dict({k: autojit.tensor(v.detach().numpy())
                          for k, v in tlin.state_dict().items()})
    mine, theirs = agm(autojit.tensor(X[0, :3])), tgm(torch.tensor(X[0, :3]))
    assert_close(mine["out"], theirs["out"])
    assert_close(mine["pair"], theirs["pair"])
    assert agm.add_submodule("extra.deep", autojit.nn.ReLU())
    agm.delete_all_unused_submodules()
    assert not hasattr(agm, "extra") and agm.delete_submodule("lin")
    assert not hasattr(agm, "lin")


# ---- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    lambda t: lambda x: 1 if x.sum() > 0 else 2,
    lambda t: lambda x: [a for a in x],
    lambda t: lambda x: len(x),
    lambda t: lambda x: t.relu(x) if x.shape[0] else x,
])
def test_trace_errors_match_torch(body):
    outcomes = []
    for fx, t in ((torch.fx, torch), (autojit.fx, autojit)):
        try:
            fx.symbolic_trace(body(t))
            outcomes.append(None)
        except Exception as error:  # noqa: BLE001 - the outcome compared
            outcomes.append((type(error).__name__, str(error)))
    assert outcomes[0] is not None and outcomes[1] == outcomes[0]


def test_trace_error_type_is_torch_fx_proxy_trace_error():
    with pytest.raises(autojit.fx.proxy.TraceError, match="cannot be used as inputs to control"):
        autojit.fx.symbolic_trace(lambda x: 1 if x else 0)
    with pytest.raises(NotImplementedError, match="wrap must be called at the top level"):
        autojit.fx.wrap("scaled_sum")


def test_a_tracer_whose_create_proxy_takes_no_factory_traces_parameters():
    """torchvision's feature extraction tracer overrides create_proxy without
    proxy_factory_fn: parameters read in forward still trace (torch passes the factory only
    where the signature takes it)."""
    codes = []
    for t in (torch, autojit):
        class Positional(t.fx.Tracer):
            def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *_):
                return super().create_proxy(kind, target, args, kwargs, name, type_expr)

        class Scale(t.nn.Module):
            def __init__(self, weight):
                super().__init__()
                self.weight = weight

            def forward(self, x):
                return x * self.weight

        root = Scale(t.nn.Parameter(t.ones(3)))
        codes.append(t.fx.GraphModule(root, Positional().trace(root)).code)
    assert codes[1] == normalize(codes[0])


# ---- copies and pickles -------------------------------------------------------------------------

def test_retrace_deepcopy_and_pickle_keep_graph_code_and_values():
    theirs, mine, tgm, agm = trace_both("Net", concrete_args={"flag": True})
    # a GraphModule traced again (its own generated code) gives torch's graph again
    assert autojit.fx.symbolic_trace(agm).code == normalize(torch.fx.symbolic_trace(tgm).code)
    copied = copy.deepcopy(agm)
    assert copied.code == agm.code and type(copied).__name__ == type(copy.deepcopy(tgm)).__name__
    assert copied.get_parameter("proj") is not agm.get_parameter("proj")
    assert_close(copied(autojit.tensor(X)), agm(autojit.tensor(X)))
    loaded = pickle.loads(pickle.dumps(agm))
    assert loaded.code == agm.code and str(loaded.graph) == str(agm.graph)
    assert type(loaded).__name__ == "Net"
    assert_close(loaded(autojit.tensor(X)), agm(autojit.tensor(X)))
    agm.graph = copy.deepcopy(agm.graph)  # the setter recompiles
    assert_close(agm(autojit.tensor(X)), loaded(autojit.tensor(X)))
    # attributes named in meta under _USER_PRESERVED_ATTRIBUTES_KEY are set on a deepcopy
    # (torchvision's feature extraction, which timm's features_only="fx" models use)
    preserved = []
    for module, fx in ((agm, autojit.fx), (tgm, torch.fx)):
        key = fx.graph_module._USER_PRESERVED_ATTRIBUTES_KEY
        module.meta[key] = {"return_nodes": ["relu"]}
        preserved.append((key, copy.deepcopy(module).return_nodes))
    assert preserved[0] == preserved[1] == ("_user_preserved_attributes", ["relu"])
    replaced = []
    agm._register_replace_node_hook(lambda old, new, user: replaced.append((old, new, user)))
    relu = next(n for n in agm.graph.nodes if n.target is autojit.relu)
    with agm.graph.inserting_after(relu):
        neg = agm.graph.call_function(operator.neg, (relu,))
    relu.replace_all_uses_with(neg, lambda user: user is not neg)
    assert [(old.name, new, user.name) for old, new, user in replaced] == [
        ("relu", neg.name, "add")]


# ---- the helper modules libraries import --------------------------------------------------------

def test_symbolic_shapes_pytree_and_pass_base():
    assert symbolic_shapes.guard_or_false(True) and not symbolic_shapes.guard_or_true(0)
    assert symbolic_shapes.statically_known_true(True)
    assert not symbolic_shapes.statically_known_true(1)
    assert symbolic_shapes.free_symbols(autojit.ones(2)) == set()
    assert symbolic_shapes.free_unbacked_symbols(3) == set()
    assert issubclass(symbolic_shapes.GuardOnDataDependentSymNode, RuntimeError)
    from autojit.fx.experimental.proxy_tensor import get_proxy_mode

    assert get_proxy_mode() is None
    from autojit.fx import _pytree as fx_pytree
    from autojit.utils._pytree import tree_flatten

    _, spec = tree_flatten({"b": 1, "a": [2, 3]})
    assert fx_pytree.tree_flatten_spec({"a": [20, 30], "b": 10}, spec) == [10, 20, 30]

    class Double(PassBase):
        def call(self, gm):
            return PassResult(gm, False)

    sizes = []

    def read(x):  # under autojit.compile with dynamic sizes, x.shape[0] is a SymInt
        names = symbolic_shapes.free_symbols(x.shape[0])
        sizes.append(",".join(sorted(names)))
        return x * 2

    autojit.compile(read, dynamic=True)(autojit.ones(3))
    assert sizes == ["s0"]
    result = Double()(autojit.fx.symbolic_trace(lambda x: x))
    assert result.modified is False and isinstance(result, tuple)
    assert autojit.fx._symbolic_trace.is_fx_tracing() is False


def test_shape_prop_records_tensor_metadata():
    from autojit.fx.passes.shape_prop import ShapeProp

    theirs, mine, tgm, agm = trace_both("MLP")
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    TorchShapeProp(tgm).propagate(torch.tensor(X))
    ShapeProp(agm).propagate(autojit.tensor(X))
    for a, t in zip(agm.graph.nodes, tgm.graph.nodes, strict=True):
        assert tuple(a.meta["tensor_meta"].shape) == tuple(t.meta["tensor_meta"].shape)
        assert a.meta["tensor_meta"].stride == t.meta["tensor_meta"].stride
    # the verbose code annotates each value with its dtype and shape, as torch's
    assert agm.print_readable(False) == tgm.print_readable(False)
    assert 'fc1: "f32[2, 8]" = self.fc1(x)' in agm.print_readable(False)


def test_import_torch_fx_under_the_drop_in():
    script = textwrap.dedent("""
        import sys
        import autojit.drop_in
        autojit.drop_in.install()
        import torch
        torch.fx.wrap("double")  # reached as an attribute of torch, as libraries do
        def double(x):
            return x * 2
        import torch.fx
        from torch.fx.experimental.symbolic_shapes import (
            guard_or_false, guard_or_true, statically_known_true, free_symbols,
            free_unbacked_symbols, GuardOnDataDependentSymNode)
        from torch.fx.experimental.proxy_tensor import get_proxy_mode
        from torch.fx._pytree import register_pytree_flatten_spec
        from torch.fx.passes.infra.pass_base import PassResult
        from torch.fx.graph_module import _CodeOnlyModule, _copy_attr, \\
            _USER_PRESERVED_ATTRIBUTES_KEY
        from torch.fx import (GraphModule, Node, Proxy, Tracer, Transformer, map_arg,
                              symbolic_trace)
        from torch.fx.node import map_arg as node_map_arg
        import torch.fx._symbolic_trace
        assert sys.modules["torch.fx"] is sys.modules["autojit.fx"]
        assert "torch.utils" not in sys.modules or sys.modules["torch.utils"].__name__ \\
            .startswith("autojit")
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)
            def forward(self, x):
                return double(torch.relu(self.lin(x)))
        gm = torch.fx.symbolic_trace(M())
        assert isinstance(gm, torch.fx.GraphModule) and isinstance(gm, torch.nn.Module)
        x = torch.randn(2, 3)
        assert torch.allclose(gm(x), M.forward(gm, x))
        print(torch.fx._symbolic_trace.is_fx_tracing(), get_proxy_mode(),
              [n.op for n in gm.graph.nodes])
        print(gm.code.strip().splitlines()[0])
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == ("False None ['placeholder', 'call_module', 'call_function', "
                        "'call_function', 'output']")
    assert lines[1] == 'torch.fx._symbolic_trace.wrap("__main___double")'


def test_a_layer_subclass_is_traced_into_through_its_functional_call():
    """A subclass of a built-in layer is not a leaf (its module is the user's), so the trace
    goes into its forward: the layer's functional call (Conv3d's conv3d, MaxPool2d's
    max_pool2d, kept as class attributes) reaches the Proxy's handler, as in torch
    (torchvision's Conv3DSimple)."""
    def build(t):
        class Conv3DSimple(t.nn.Conv3d):
            pass

        class Pool(t.nn.MaxPool2d):
            pass

        class Net(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = Conv3DSimple(2, 3, 3, padding=1, bias=False)
                self.pool = Pool(2)

            def forward(self, x):
                y = self.conv(x)
                return self.pool(y.flatten(1, 2))

        return Net()

    torch.manual_seed(0)
    theirs = build(torch)
    mine = build(autojit)
    mine.load_state_dict({k: autojit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    tgm, agm = torch.fx.symbolic_trace(theirs), autojit.fx.symbolic_trace(mine)
    assert [(n.op, n.name) for n in agm.graph.nodes] == [(n.op, n.name)
                                                          for n in tgm.graph.nodes]
    assert "conv3d" in [n.name for n in agm.graph.nodes if n.op == "call_function"]
    x = np.linspace(-1.0, 1.0, 2 * 2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 2, 3, 4, 4)
    assert_close(agm(autojit.tensor(x)), tgm(torch.tensor(x)))
