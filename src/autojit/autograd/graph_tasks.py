"""The backward passes running on each thread, innermost last, and torch's questions about them.

The engine (engine.py) pushes each pass here; current_graph_task_id, will_engine_execute_node
(autograd.graph.register_multi_grad_hook, in graph_api.py), current_graph_task_execution_order,
queue_callback (Variable._execution_engine) and running_with_inputs (utils/checkpoint.py) read
them.
"""

from __future__ import annotations

import itertools
import threading

from .grad_mode import is_multithreading_enabled
from .nodes import AccumulateGrad

_tasks = threading.local()  # .running: this thread's backward passes, innermost last
_task_ids = itertools.count()


class _Task:
    """One backward pass while it runs: which nodes it will execute."""

    __slots__ = ("id", "roots", "root_edges", "stop_at", "dependencies", "needed", "captured",
                 "callbacks", "partial", "returns")

    def __init__(self, root_edges, dependencies, needed, captured, partial=False,
                 returns=False, stop_at=frozenset()):
        self.id = next(_task_ids)
        self.partial = partial
        self.returns = returns  # autograd.grad: the captured gradients are returned
        self.callbacks = []
        self.root_edges, self.stop_at = root_edges, stop_at
        self.roots = {node for node, _ in root_edges}
        self.dependencies, self.needed, self.captured = dependencies, needed, captured


def current_graph_task_id() -> int:
    """The id of the backward pass running on this thread, -1 outside backward."""
    running = getattr(_tasks, "running", None)
    return running[-1].id if running else -1


def running_with_inputs() -> bool:
    """Whether the backward pass running on this thread computes the gradients of given inputs
    only (autograd.grad, or backward(inputs=...)), which torch's reentrant checkpoint refuses."""
    running = getattr(_tasks, "running", None)
    return bool(running) and running[-1].partial


def queue_callback(callback) -> None:
    """Run `callback` when the backward pass running on this thread has finished."""
    running = getattr(_tasks, "running", None)
    if not running:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    running[-1].callbacks.append(callback)


class ExecutionEngine:
    """Variable._execution_engine: torch's handle on its engine, for queue_callback."""

    @staticmethod
    def queue_callback(callback) -> None:
        queue_callback(callback)


def will_engine_execute_node(node) -> bool:
    """Whether the running backward pass will run `node` (a leaf's AccumulateGrad that
    autograd.grad reads the gradient at is refused, as torch refuses it)."""
    if not hasattr(node, "next_functions"):
        raise RuntimeError("_will_engine_execute_node expects an grad_fn, but got "
                           f"{type(node).__name__}")
    running = getattr(_tasks, "running", None)
    if not running:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward "
                           "pass")
    task = running[-1]
    if task.returns and id(node) in task.captured and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not "
                           "supported.")
    if node not in task.dependencies and node not in task.roots:
        return False
    return task.needed is None or node in task.needed or id(node) in task.captured


def current_graph_task_execution_order() -> list:
    """torch._C._current_graph_task_execution_order: the nodes the running backward pass runs,
    in the order the engine runs them, from its roots (those it leaves out, outside the part
    autograd.grad asked for, are not listed). As torch's, it asks for multithreading to be
    off; autojit's engine runs on one thread either way."""
    running = getattr(_tasks, "running", None)
    if not running:
        raise RuntimeError("_current_graph_task_execution_order should only be called during "
                           "the backward pass")
    if is_multithreading_enabled():
        raise RuntimeError(
            "get_current_graph_task_execution_order expects the current backward to be executed "
            "with multithreading disabled, e.g. by running:\n\n>>> with "
            "torch.autograd.set_multithreading_enabled(False):\n...     torch.autograd.grad("
            "...)\n")
    task = running[-1]
    stop_at, needed, captured = task.stop_at, task.needed, task.captured
    roots = list(dict.fromkeys(node for node, _ in task.root_edges))
    # the in-degrees the engine counts at the start (engine.py's _count_dependencies)
    dependencies: dict = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in stop_at:
            continue
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            if next_node in dependencies:
                dependencies[next_node] += 1
            else:
                dependencies[next_node] = 1
                if next_node not in task.roots:
                    stack.append(next_node)
    # the engine's walk (run_backward's loop): ready nodes last in, first out
    order, ready = [], [node for node in roots if dependencies.get(node, 0) == 0]
    while ready:
        node = ready.pop()
        if needed is None or node in needed or id(node) in captured:
            order.append(node)
        if id(node) in stop_at:
            continue
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            dependencies[next_node] -= 1
            if dependencies[next_node] == 0:
                ready.append(next_node)
    return order
