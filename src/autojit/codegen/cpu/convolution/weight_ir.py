"""The LLVM IR of the native convolution's weight gradient: the `weight` entry point (a chunk
of images' share of the gradient, tiles of ro x rk dot products whose vector accumulators run
over the chunk's images and positions, summed across their lanes into the chunk's float64
partial sums) and `weight_sum` (the chunks' partials added in chunk order and rounded once).

ir.py renders the "weight" module from these, beside the prepare routine and the helpers it
shares with the products (prefetch, load_words, zero_elements), and lays out the arguments and
tables (WEIGHT_ARGUMENT, WEIGHT_TABLE, SUM_ARGUMENT) convolution/__init__.py fills.
"""

from __future__ import annotations

from ..llvm.ir_text import Function
from .ir import SUM_ARGUMENT, WEIGHT_ARGUMENT, WEIGHT_TABLE, load_words, prefetch, zero_elements


def weight_tile(rows: int, columns: int, names: dict) -> str:
    """`wtile{rows}x{columns}(g, g_image, g_row, s, s_image, offsets, steps, images, out,
    out_row)`: out[r * out_row + c] += the sum over images i and positions p < steps *
    lanes of g[i * g_image + r * g_row + p] * s[i * s_image + offsets[c] + p], in float64."""
    scalar, vector, lanes, short = names["scalar"], names["vector"], names["lanes"], \
        names["short"]
    fma = f"@llvm.fma.v{lanes}{short}"
    slots = [(row, column) for row in range(rows) for column in range(columns)]
    lines = [f"define internal void @{names['prefix']}_wtile{rows}x{columns}(ptr noalias %g, "
             "i64 %g_image, i64 %g_row, ptr noalias %s, i64 %s_image, ptr noalias %offsets, "
             "i64 %steps, i64 %images, ptr noalias %out, i64 %out_row) noinline {", "entry:"]
    for column in range(columns):
        lines += [f"  %offset_word{column} = getelementptr i64, ptr %offsets, i64 {column}",
                  f"  %offset{column} = load i64, ptr %offset_word{column}"]
    lines += [f"  %g_at{row} = mul i64 {row}, %g_row" for row in range(rows)]
    lines += ["  %no_images = icmp sle i64 %images, 0",
              "  %no_steps = icmp sle i64 %steps, 0",
              "  %nothing = or i1 %no_images, %no_steps",
              "  br i1 %nothing, label %reduce, label %image", "image:",
              "  %i = phi i64 [0, %entry], [%i_next, %image_done]"]
    lines += [f"  %outer{row}_{column} = phi {vector} [zeroinitializer, %entry], "
              f"[%sum{row}_{column}, %image_done]" for row, column in slots]
    lines += ["  %g_image_at = mul i64 %i, %g_image",
              f"  %g_base = getelementptr {scalar}, ptr %g, i64 %g_image_at",
              "  %s_image_at = mul i64 %i, %s_image",
              f"  %s_base = getelementptr {scalar}, ptr %s, i64 %s_image_at",
              "  br label %step", "step:",
              "  %p = phi i64 [0, %image], [%p_next, %step]"]
    lines += [f"  %acc{row}_{column} = phi {vector} [%outer{row}_{column}, %image], "
              f"[%sum{row}_{column}, %step]" for row, column in slots]
    lines.append(f"  %position = mul i64 %p, {lanes}")
    for row in range(rows):
        lines += [f"  %g_index{row} = add i64 %g_at{row}, %position",
                  f"  %g_address{row} = getelementptr {scalar}, ptr %g_base, i64 %g_index{row}",
                  f"  %g{row} = load {vector}, ptr %g_address{row}, align 4"]
    for column in range(columns):
        lines += [f"  %s_index{column} = add i64 %offset{column}, %position",
                  f"  %s_address{column} = getelementptr {scalar}, ptr %s_base, "
                  f"i64 %s_index{column}",
                  f"  %s{column} = load {vector}, ptr %s_address{column}, align 4"]
        lines += [f"  %sum{row}_{column} = call {vector} {fma}({vector} %g{row}, "
                  f"{vector} %s{column}, {vector} %acc{row}_{column})" for row in range(rows)]
    lines += ["  %p_next = add i64 %p, 1", "  %more = icmp slt i64 %p_next, %steps",
              "  br i1 %more, label %step, label %image_done", "image_done:",
              "  %i_next = add i64 %i, 1", "  %more_images = icmp slt i64 %i_next, %images",
              "  br i1 %more_images, label %image, label %reduce", "reduce:"]
    lines += [f"  %total{row}_{column} = phi {vector} [zeroinitializer, %entry], "
              f"[%sum{row}_{column}, %image_done]" for row, column in slots]
    for row, column in slots:
        name = f"{row}_{column}"
        lines += [f"  %lanes{name} = call reassoc {scalar} @llvm.vector.reduce.fadd.v{lanes}"
                  f"{short}({scalar} -0.0, {vector} %total{name})",
                  f"  %out_row{name} = mul i64 {row}, %out_row",
                  f"  %out_index{name} = add i64 %out_row{name}, {column}",
                  f"  %out_address{name} = getelementptr double, ptr %out, i64 %out_index{name}",
                  f"  %old{name} = load double, ptr %out_address{name}"]
        wide = f"%lanes{name}"
        if scalar != "double":
            lines.append(f"  %wide{name} = fpext {scalar} %lanes{name} to double")
            wide = f"%wide{name}"
        lines += [f"  %new{name} = fadd double %old{name}, {wide}",
                  f"  store double %new{name}, ptr %out_address{name}"]
    lines += ["  ret void", "}"]
    return "\n".join(lines)


def weight(names: dict) -> str:
    """`weight(argument, part)`: the chunks part, part + parts, ... of the images, each laid
    out in the part's scratch (so that a core reuses its scratch, warm in its cache, chunk
    after chunk) and summed into the chunk's own float64 partials."""
    scalar, prefix = names["scalar"], names["prefix"]
    f = Function(f"define i32 @{prefix}_weight(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", WEIGHT_ARGUMENT,
                      ("source", "grad", "scratch", "table", "partials"))
    table = load_words(f, arg["table"], WEIGHT_TABLE)
    scratch = f.element(scalar, arg["scratch"], f.binary("mul", "%part", arg["scratch_part"]))
    with f.loop("%part", arg["chunks"], arg["parts"], hint="chunk") as chunk:
        _weight_chunk(f, names, arg, table, chunk, scratch)
    f.emit("ret i32 0")
    return f.text()


def _weight_chunk(f: Function, names: dict, arg: dict, table: dict, chunk: str,
                  scratch: str) -> None:
    """One chunk of images: laid out, then its tiles summed into its partials."""
    scalar, prefix = names["scalar"], names["prefix"]
    weight_rows, weight_columns = names["weight_rows"], names["weight_columns"]
    first = f.binary("mul", chunk, arg["chunk"])
    last = f.minimum(f.binary("add", first, arg["chunk"]), arg["images"])
    count = f.binary("sub", last, first)
    grads = f.element(scalar, scratch, f.binary("mul", arg["chunk"], table["scratch_image"]))
    grad_image = f.binary("mul", table["grad_channels"], table["grid"])
    records = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['records_at']}")
    grad_records = f.op(f"getelementptr i64, ptr {arg['table']}, "
                        f"i64 {table['grad_records_at']}")
    with f.loop(0, count, hint="n") as index:
        image = f.binary("add", first, index)
        source = f.element(scalar, arg["source"], f.binary("mul", image, arg["source_image"]))
        laid = f.element(scalar, scratch, f.binary("mul", index, table["scratch_image"]))
        f.emit(f"call void @{prefix}_prepare(ptr {laid}, ptr {source}, ptr {records}, "
               f"i64 {table['records']}, i64 {table['channels']}, "
               f"i64 {table['scratch_channel']}, i64 {table['source_channel']})")
        zero_elements(f, scalar, laid, table["slack_start"], table["scratch_image"])
        grad = f.element(scalar, arg["grad"], f.binary("mul", image, arg["grad_image"]))
        grad_laid = f.element(scalar, grads, f.binary("mul", index, grad_image))
        with f.when(f.less(f.binary("add", index, 1), count)):
            prefetch(f, scalar, f.element(scalar, source, arg["source_image"]),
                      arg["source_image"])
            prefetch(f, scalar, f.element(scalar, grad, arg["grad_image"]), arg["grad_image"])
        f.emit(f"call void @{prefix}_prepare(ptr {grad_laid}, ptr {grad}, ptr {grad_records}, "
               f"i64 {table['grad_records']}, i64 {table['grad_channels']}, "
               f"i64 {table['grid']}, i64 {table['grad_channel']})")
    partials = f.op(f"getelementptr double, ptr {arg['partials']}, "
                    f"i64 {f.binary('mul', chunk, arg['partials_part'])}")
    total = f.binary("mul", table["grad_channels"], table["columns"])
    with f.loop(0, total, hint="z") as index:
        f.emit(f"store double 0.0, ptr {f.element('double', partials, index)}")
    offsets = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['offsets_at']}")
    with f.loop(0, table["groups"], hint="g") as group:
        group_row = f.binary("mul", group, table["group_rows"])
        source = f.element(scalar, scratch, f.binary("mul", group, table["group_stride"]))
        row_slot = f.variable(0)
        head, body, done = f.label("o_head"), f.label("o_body"), f.label("o_done")
        f.branch(head)
        f.block(head)
        row = f.op(f"load i64, ptr {row_slot}", "o")
        f.emit(f"br i1 {f.less(row, table['group_rows'])}, label {body}, label {done}")
        f.block(body)
        left = f.binary("sub", table["group_rows"], row)
        height = "1"
        for rows in weight_rows[::-1][1:]:
            fits = f.op(f"icmp sge i64 {left}, {rows}")
            height = f.op(f"select i1 {fits}, i64 {rows}, i64 {height}")
        absolute = f.binary("add", group_row, row)
        grad_rows = f.element(scalar, grads, f.binary("mul", absolute, table["grid"]))
        out_rows = f.element("double", partials, f.binary("mul", absolute, table["columns"]))
        with f.loop(0, table["columns"], weight_columns, hint="k") as column:
            width = f.minimum(f.binary("sub", table["columns"], column), weight_columns)
            column_offsets = f.op(f"getelementptr i64, ptr {offsets}, i64 {column}")
            out = f.element("double", out_rows, column)
            arguments = (f"(ptr {grad_rows}, i64 {grad_image}, i64 {table['grid']}, "
                         f"ptr {source}, i64 {table['scratch_image']}, ptr {column_offsets}, "
                         f"i64 {table['steps']}, i64 {count}, ptr {out}, "
                         f"i64 {table['columns']})")
            number = f.label("w")[1:]
            cases = [f"i64 {rows * 8 + columns}, label %w{rows}x{columns}_{number}"
                     for rows in weight_rows for columns in range(1, weight_columns + 1)]
            key = f.binary("add", f.binary("mul", height, 8), width)
            f.emit(f"switch i64 {key}, label %w_done_{number} [{' '.join(cases)}]")
            for rows in weight_rows:
                for columns in range(1, weight_columns + 1):
                    f.block(f"%w{rows}x{columns}_{number}")
                    f.emit(f"call void @{prefix}_wtile{rows}x{columns}{arguments}")
                    f.branch(f"%w_done_{number}")
            f.block(f"%w_done_{number}")
        f.emit(f"store i64 {f.binary('add', row, height)}, ptr {row_slot}")
        f.branch(head)
        f.block(done)


def weight_sum(names: dict) -> str:
    scalar, prefix = names["scalar"], names["prefix"]
    f = Function(f"define i32 @{prefix}_weight_sum(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", SUM_ARGUMENT, ("partials", "out"))
    with f.loop(0, arg["count"], hint="x") as index:
        total = f.variable("0.0", "double")
        with f.loop(0, arg["chunks"], hint="c") as chunk:
            at = f.binary("add", f.binary("mul", chunk, arg["partials_part"]), index)
            value = f.op(f"load double, ptr {f.element('double', arg['partials'], at)}")
            running = f.op(f"load double, ptr {total}")
            f.emit(f"store double {f.op(f'fadd double {running}, {value}')}, ptr {total}")
        result = f.op(f"load double, ptr {total}")
        if scalar != "double":
            result = f.op(f"fptrunc double {result} to {scalar}")
        f.emit(f"store {scalar} {result}, ptr {f.element(scalar, arg['out'], index)}")
    f.emit("ret i32 0")
    return f.text()
