"""The compiler's "cpu" backend: a graph's plan from the fusion schedule (schedule/fusion.py)
with its kernels compiled through LLVM (cpu/jit.py). codegen/__init__.py registers this module
with compiler/backends.py; the compiler imports it when it first builds a graph."""

from __future__ import annotations

from .cpu.jit import parallel_compiles
from .schedule.fusion import build_plan
from .schedule.matmul_steps import is_product, prepare_products
from .schedule.rebinding import NotRebindable, rebind_plan


def prepare(graph) -> None:
    """Start the native routines `graph`'s products will call (the gemm module,
    gemm_kernel.prepare) on the compile threads before the passes run, which leave those
    threads idle: on a cold cache the module's 0.1 s of compiling then overlaps the passes
    instead of competing with the kernels' compiles. The schedule asks for them again as it
    meets the products, and waits for them as for its kernels."""
    prepare_products([node for node in graph.nodes if is_product(node)])


def build(graph, arguments, generic: bool = False, fresh_grads=frozenset()):
    """The plan running `graph`; `generic` kernels read their sizes at run time. Its kernels
    compile on the compile threads while the schedule goes on (jit.parallel_compiles)."""
    with parallel_compiles():
        return build_plan(graph, generic=generic, fresh_grads=frozenset(fresh_grads))


def rebind(plan, graph):
    """The plan of `graph`, the graph `plan` runs with other sizes, from `plan`'s decisions
    (schedule/rebinding.py), or None where they do not hold for it: schedule it then."""
    with parallel_compiles():
        try:
            return rebind_plan(plan, graph)
        except NotRebindable:
            return None
