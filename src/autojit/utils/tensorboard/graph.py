"""add_graph's graph: a module's forward traced by autojit's tracer (ir.make_graph), written as
the GraphDef protocol buffer TensorBoard's graph tab draws.

torch's add_graph traces with torch.jit and names each node after the module that ran it;
autojit's trace is the graph `autojit.compile` would compile, whose nodes are the registry's
primitives (matmul, add, relu, ...). So the picture shows the module's inputs (`input/...`),
its parameters and buffers grouped by the submodule that holds them (`0/weight` for the first
layer of a Sequential), one node per primitive named after its op and value (`matmul_3`), with
its output shape, dtype and attributes, and the outputs (`output/...`).
"""

from __future__ import annotations


def graph_def(model, inputs: tuple, verbose: bool = False):
    """The GraphDef of `model(*inputs)`; prints the traced graph's text with `verbose`."""
    from tensorboardX.proto import (
        attr_value_pb2,
        graph_pb2,
        node_def_pb2,
        tensor_shape_pb2,
        versions_pb2,
    )

    from ...ir import make_graph

    graph = make_graph(model, *inputs)
    if verbose:
        print(graph)

    def shape_attr(value):
        dims = []
        for size in value.shape:
            try:
                dims.append(tensor_shape_pb2.TensorShapeProto.Dim(size=int(size)))
            except TypeError:  # a symbolic size: unknown, as TensorBoard writes it
                dims.append(tensor_shape_pb2.TensorShapeProto.Dim(size=-1))
        shapes = attr_value_pb2.AttrValue.ListValue(
            shape=[tensor_shape_pb2.TensorShapeProto(dim=dims)])
        return {"_output_shapes": attr_value_pb2.AttrValue(list=shapes),
                "dtype": attr_value_pb2.AttrValue(s=str(value.dtype).encode())}

    names = {}  # value id -> the name of the node that makes it
    nodes = []
    for item in graph.inputs:
        if item.kind == "arg":
            name, op = f"input/{item.name}", "IO Node"
        else:
            name, op = item.name.replace(".", "/"), "Parameter"
        names[item.value.id] = name
        nodes.append(node_def_pb2.NodeDef(name=name, op=op, attr=shape_attr(item.value)))
    for node in graph.nodes:
        op = node.op.name
        name = f"{op}_{node.outputs[0].id}"
        for output in node.outputs:
            names[output.id] = name
        attrs = shape_attr(node.outputs[0])
        if node.attrs:
            text = ", ".join(f"{key}={value}" for key, value in node.attrs.items())
            attrs["attr"] = attr_value_pb2.AttrValue(s=text.encode())
        nodes.append(node_def_pb2.NodeDef(
            name=name, op=op, input=[names[value.id] for value in node.inputs
                                     if value.id in names], attr=attrs))
    for output in graph.outputs:
        source = names.get(output.value.id)
        nodes.append(node_def_pb2.NodeDef(
            name=f"output/{output.name}", op="IO Node",
            input=[source] if source is not None else [], attr=shape_attr(output.value)))
    return graph_pb2.GraphDef(node=nodes, versions=versions_pb2.VersionDef(producer=22))
