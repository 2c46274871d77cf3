"""Vector loads and stores for the generated CUDA kernels: `load_vector4(array, offset)` reads
four adjacent elements as one 16-byte access (`ld.global.v4.f32`), `store_vector4(array,
offset, values)` writes them; widths 2 and 4.

numba.cuda compiles `array[i]` to one scalar access per element and tells NVVM nothing about
the data pointer's alignment, so adjacent loads are never combined. These are numba
intrinsics that cast the element pointer to a pointer to an LLVM vector and access it with
the vector's alignment: the caller (cuda/kernels.py) launches the vector path only when every
array it reads or writes this way starts at a multiple of that alignment, and the renderer
(render.py) only offsets them by multiples of the width. Under the simulator they are
plain Python reading and writing the elements one by one, so the kernels' group and tail
arithmetic runs in the tests; the intrinsics themselves are compiled by
tools/cuda_ptx_check.py.
"""

from __future__ import annotations

WIDTHS = (2, 4)


def simulated_functions() -> dict:
    """The Python stand-ins the simulator runs."""
    functions = {}
    for width in WIDTHS:
        def load(array, offset, width=width):
            return tuple(array[offset + lane] for lane in range(width))

        def store(array, offset, values, width=width):
            for lane in range(width):
                array[offset + lane] = values[lane]

        functions[f"load_vector{width}"] = load
        functions[f"store_vector{width}"] = store
    return functions


def device_functions() -> dict:
    """The intrinsics, for kernels compiled by numba.cuda (imported only then: the simulator
    and machines without numba's CUDA target never build them)."""
    from llvmlite import ir
    from numba import types

    try:
        from numba.cuda.extending import intrinsic
    except ImportError:  # numba's own CUDA target, before the numba-cuda package
        from numba.core.extending import intrinsic

    lane_type = ir.IntType(32)

    def vector_pointer(context, builder, array_type, array_value, offset, width):
        structure = context.make_array(array_type)(context, builder, value=array_value)
        vector_type = ir.VectorType(context.get_data_type(array_type.dtype), width)
        element = builder.gep(structure.data, [offset])
        return builder.bitcast(element, vector_type.as_pointer()), vector_type

    def alignment(array_type, width) -> int:
        return width * array_type.dtype.bitwidth // 8

    def make_load(width):
        @intrinsic
        def load_vector(typing_context, array, offset):
            result = types.UniTuple(array.dtype, width)

            def codegen(context, builder, signature, args):
                array_type = signature.args[0]
                pointer, _ = vector_pointer(context, builder, array_type, args[0], args[1],
                                            width)
                vector = builder.load(pointer, align=alignment(array_type, width))
                lanes = [builder.extract_element(vector, ir.Constant(lane_type, lane))
                         for lane in range(width)]
                return context.make_tuple(builder, result, lanes)

            return result(array, offset), codegen

        return load_vector

    def make_store(width):
        @intrinsic
        def store_vector(typing_context, array, offset, values):
            def codegen(context, builder, signature, args):
                array_type, _, values_type = signature.args
                pointer, vector_type = vector_pointer(context, builder, array_type, args[0],
                                                      args[1], width)
                vector = ir.Constant(vector_type, ir.Undefined)
                for lane in range(width):
                    value = context.cast(builder, builder.extract_value(args[2], lane),
                                         values_type[lane], array_type.dtype)
                    vector = builder.insert_element(vector, value, ir.Constant(lane_type, lane))
                builder.store(vector, pointer, align=alignment(array_type, width))
                return context.get_dummy_value()

            return types.void(array, offset, values), codegen

        return store_vector

    functions = {}
    for width in WIDTHS:
        functions[f"load_vector{width}"] = make_load(width)
        functions[f"store_vector{width}"] = make_store(width)
    return functions
